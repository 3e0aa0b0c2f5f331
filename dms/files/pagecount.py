"""How many pages an accepted file has (api.md, "Uploading a file"), counted once at upload within
the limits: a PDF's pages parsed in a reader process, an image's frames from its headers, a text
file one page. Apart from dms.files.filetypes, which the PDF readers' page operations use to sniff
an image."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dms.files.filetypes import IMAGES, PDF, FileType, UnacceptableFile
from dms.files.imaging import ImageLimits, UnacceptableImage, check_frames
from dms.files.pdf import UnreadablePdf
from dms.files.pdf import page_count as pdf_page_count
from dms.files.pdf.process import PdfReaders


@dataclass(frozen=True)
class FileLimits:
    max_pages: int
    max_image_pixels: int


def limits_of(config) -> FileLimits:
    return FileLimits(config.max_pages, config.max_image_megapixels * 1_000_000)


def count_pages(path: Path, file_type: FileType, limits: FileLimits, readers: PdfReaders) -> int:
    """Open the file once: its page count, or UnacceptableFile if it cannot be read or is past
    the limits (pages, frames, pixels per frame; a PDF's pages parsed within the reader's
    memory and time limits, dms.files.pdf)."""
    if file_type is PDF:
        try:
            return pdf_page_count(readers, path, limits.max_pages)
        except UnreadablePdf as error:
            raise UnacceptableFile(str(error)) from None
    if file_type in IMAGES:
        try:
            return check_frames(path, file_type.extension[1:].upper(),
                                ImageLimits(limits.max_image_pixels, limits.max_pages))
        except UnacceptableImage as error:
            raise UnacceptableFile(str(error)) from None
    return 1
