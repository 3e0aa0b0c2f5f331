"""Batches the intake splits (DMS_SPLIT_ON_BARCODE): a scanner's batch of letters, read in one go
into one file, becomes one document per letter before it is imported — cut at separator sheets
carrying a barcode `DMS-SPLIT` or `PATCH T` (dms.domain.pages.separators), the sheets left out. Used
by the consume folder and mail through the one import function
(dms.domain.uploads.import_into_folder); blank pages never cut a batch here (the empty back of a
page in a duplex scan would).

A file that cannot be looked at page by page (a page too large to render, the readers busy) or
that has more pages than DMS_SPLIT_MAX_PAGES (the limit of every split,
dms.domain.pages.separators.too_many_pages) is imported whole, as it would have been without the
setting: nothing received is lost for a separator that could not be read.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from dms.domain.pages import separators
from dms.domain.pages.build import Builder, Built
from dms.errors import DomainError
from dms.files.filetypes import PDF, TIFF, FileType
from dms.files.pdf import UnreadablePdf

if TYPE_CHECKING:
    from dms.domain.services import Services

log = logging.getLogger("dms.intake")
SPLITTABLE = (PDF, TIFF)


@contextlib.contextmanager
def split_at_barcodes(services: Services, path: Path, file_type: FileType, page_count: int,
                      name: str) -> Iterator[list[Built]]:
    """The parts of the batch received at `path` (in tmp/ until the caller stores them), or []
    when it is not cut: one page, not a PDF or TIFF, no separator sheet, or not readable page by
    page."""
    config = services.config
    if page_count < 2 or file_type not in SPLITTABLE:
        yield []
        return
    too_many = separators.too_many_pages(config, page_count)
    # The one limit of every split (api.md, "Page operations"); the batch is not lost for it.
    if too_many:
        log.info("%r is imported without looking for separator sheets: %s", name, too_many)
        yield []
        return
    with Builder(services) as builder:
        cut: list[int] = []
        try:
            pdf = builder.pdf_of_file(path, file_type.mime)
            cut = separators.find(services, pdf, page_count, separators.BARCODE)
            parts = [builder.build_from(pdf, run)
                     for run in separators.parts(page_count, cut)] if cut else []
        except (DomainError, UnreadablePdf) as error:
            log.warning("%r could not be looked at for separator sheets (%s): imported whole",
                        name, getattr(error, "message", error))
            parts = []
        if cut and not parts:
            log.info("%r holds only separator sheets: imported whole", name)
        yield parts
