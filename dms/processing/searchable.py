"""Searchable PDFs (api.md, "Searchable PDFs"): when a version needed Tesseract (scanned PDF pages,
images, TIFF frames), processing also keeps a PDF of the document whose pages carry Tesseract's
invisible text, so that any PDF viewer can select and search the words. It is stored beside the
original (dms.files: `files/<aa>/<version id>.searchable.pdf`, or its own object in the bucket),
never instead of it.

- For a PDF, it is the original file with the invisible text laid over the pages Tesseract read:
  the original page images, sizes and every page that already had text stay exactly as they are.
- For an image, it is one page per frame: the image with its text, as Tesseract renders it in the
  same run that reads the text (no second pass over the image).

While a version is read, each page's PDF waits in the store's work folder (reading may be spread
over several slices and survive a restart); when the last page is read, they are joined with
pdfium (dms.files.pdf) into one file, hashed, moved into place and the work folder removed.

A page operation (dms.domain.pages.build) makes the searchable PDF of its new version from the
searchable PDFs it took pages from: placed at once when every page's text is known (`place`),
or kept as the work folder's base until processing has read the rest (`place_base`).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path

from dms.files import pdf
from dms.files.pdf.process import PdfReaders
from dms.files.storage import Blob, FileStore, fsync_file, read_file, sha256_of

log = logging.getLogger("dms.searchable")

BASE, BASE_PAGES = "base.pdf", "base.json"  # a page operation's start, in the work folder


def build(store: FileStore, readers: PdfReaders, version_id: str, original_sha256: str,
          mime_type: str, read_by_tesseract: list[int]) -> tuple[int, str] | None:
    """Join the page PDFs of the pages Tesseract read into the version's searchable PDF; returns
    its (size, SHA-256), or None when no page needed Tesseract or a page's PDF is missing (made
    before searchable PDFs existed, or with DMS_SEARCHABLE_PDF off). A version a page operation
    made may have a base (`place_base`): the pages it covers carry their text already, and the
    text of the pages read since is laid over it."""
    store.gather_work(version_id)  # what other workers read, from the bucket
    work = store.work_dir(version_id)
    base = work / BASE
    covered = _covered(work) if base.is_file() else set()
    pages = {number: work / f"{number}.pdf" for number in read_by_tesseract
             if number not in covered}
    missing = [number for number, path in pages.items() if not path.is_file()]
    if not (pages or covered) or missing:
        if missing:
            log.info("version %s: no searchable PDF (no page PDF for page(s) %s; POST /ocr/ "
                     "reads it again)", version_id, ", ".join(map(str, missing[:10])))
        discard(store, version_id)  # the database will say "none": no file may say otherwise
        return None
    partial = work / "searchable.pdf"
    if covered and not pages:
        os.replace(base, partial)
    elif mime_type == "application/pdf":
        layers = {number - 1: path for number, path in pages.items()}
        if covered:
            pdf.overlay_text_pages(readers, base, layers, partial)
        else:
            with store.fetched(Blob(version_id, original_sha256)) as original_path:
                pdf.overlay_text_pages(readers, original_path, layers, partial)
    else:
        pdf.join_pages(readers, [pages[number] for number in sorted(pages)], partial)
    return _install(store, version_id, partial)


def place(store: FileStore, version_id: str, path: Path) -> tuple[int, str]:
    """A finished searchable PDF written in tmp/ (a page operation's) becomes the version's,
    before the version's row exists: its (size, SHA-256)."""
    size, sha256 = _fsync_and_hash(path)
    store.place_searchable(path, version_id, sha256)
    return size, sha256


def place_base(store: FileStore, version_id: str, path: Path, covered: list[int]) -> None:
    """A page operation's new version whose pages are not all read yet: the searchable PDF of
    the pages it took with their text (`covered`, page numbers), to finish once the rest is read
    (`build`). Durable before the version's row exists; removed with the version."""
    note = path.with_suffix(".json")
    with open(note, "w", encoding="utf-8") as file:
        json.dump(sorted(covered), file)
        file.flush()
        os.fsync(file.fileno())
    _fsync_and_hash(path)
    store.place_work(note, version_id, BASE_PAGES)
    store.place_work(path, version_id, BASE)


def copy_base(store: FileStore, version_id: str, target: Path) -> set[int]:
    """A copy at `target` of the base of a version still being read (`place_base`), and the
    page numbers whose text it carries; none when it has no base (any more: its reading may have
    ended meanwhile). A page operation on that version takes these pages' text from it."""
    store.gather_work(version_id)
    work = store.work_dir(version_id)
    covered = _covered(work)
    if not covered:
        return set()
    try:
        shutil.copyfile(work / BASE, target)
    except OSError:
        return set()
    return covered


def _covered(work: Path) -> set[int]:
    try:
        with open(work / BASE_PAGES, encoding="utf-8") as file:
            return {int(number) for number in json.load(file)}
    except (OSError, ValueError, TypeError):
        return set()  # no base, or a damaged note of it: the pages' own PDFs are needed


def _install(store: FileStore, version_id: str, partial: Path) -> tuple[int, str]:
    size, sha256 = _fsync_and_hash(partial)
    store.place_searchable(partial, version_id, sha256)
    store.drop_work(version_id)
    return size, sha256


def discard(store: FileStore, version_id: str) -> None:
    """Forget a version's searchable PDF and its page PDFs (a re-run starts over)."""
    store.drop_searchable(version_id)


def _fsync_and_hash(path: Path) -> tuple[int, str]:
    sha256, size = sha256_of(read_file(path))
    fsync_file(path)
    return size, sha256
