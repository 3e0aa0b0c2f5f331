"""The end of a reading (dms.processing.processor): every page is read, so the searchable PDF is
made from the page PDFs, and the reading is marked ended — with what the rules do, and the
searchable PDF's object settled to its row, in one transaction."""

from __future__ import annotations

import logging
from collections.abc import Callable

from dms.files.pdf.process import PdfReaders
from dms.files.storage import Blob, FileStore, StoreUnavailable
from dms.processing import progress, searchable

log = logging.getLogger("dms.processing")


def end_reading(store: FileStore, readers: PdfReaders, work: progress.Work,
                rules: Callable[[], None] | None) -> None:
    """The searchable PDF, then the reading marked ended (`rules`' changes in the same
    transaction)."""
    made = searchable_pdf(store, readers, work)

    def after() -> None:
        if rules is not None:
            rules()
        if made is not None:  # the searchable PDF's object is the row's from now on
            store.settle([Blob(work.version_id, made[1], searchable=True)])
    if progress.finish(work, made, after):
        log.info("processed version %s: %d page(s)", work.version_id, work.page_count)
    elif made is not None:
        searchable.discard(store, work.version_id)


def searchable_pdf(store: FileStore, readers: PdfReaders,
                   work: progress.Work) -> tuple[int, str] | None:
    """The version's searchable PDF, if Tesseract read any of its pages. Making it may fail
    (a PDF pdfium cannot write back): the text is kept all the same, without it. The store
    unreachable is not such a failure: the reading ends later (StoreUnavailable)."""
    try:
        return searchable.build(store, readers, work.version_id, work.sha256, work.mime_type,
                                progress.read_by_tesseract(work))
    except StoreUnavailable:
        raise
    except Exception:
        log.exception("version %s: the searchable PDF could not be made", work.version_id)
        searchable.discard(store, work.version_id)
        return None
