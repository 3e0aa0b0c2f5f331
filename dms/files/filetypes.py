"""Which files dms accepts (api.md, "Uploading a file"): the type is sniffed from the bytes, never
taken from a header or a name; each accepted file is then opened once to count its pages
(dms.files.pagecount)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FileType:
    mime: str
    extension: str


PDF = FileType("application/pdf", ".pdf")
PNG = FileType("image/png", ".png")
JPEG = FileType("image/jpeg", ".jpg")
TIFF = FileType("image/tiff", ".tiff")
TEXT = FileType("text/plain", ".txt")
IMAGES = (PNG, JPEG, TIFF)

# Control characters allowed in plain text: tab, line feed, form feed, carriage return.
TEXT_CONTROLS = {9, 10, 12, 13}


class UnacceptableFile(ValueError):
    """The file was recognised but cannot be used; the message says why."""


def sniff(head: bytes) -> FileType | None:
    """The type of a file from its first bytes, or None if it is not one dms accepts."""
    if head.startswith(b"%PDF-"):
        return PDF
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return PNG
    if head.startswith(b"\xff\xd8\xff"):
        return JPEG
    if head.startswith((b"II*\x00", b"MM\x00*")):
        return TIFF
    if looks_like_text(head):
        return TEXT
    return None


def looks_like_text(head: bytes) -> bool:
    """UTF-8 (or a single-byte encoding such as Latin-1) without NUL or other binary controls."""
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    if not head:
        return False
    return not any(byte < 32 and byte not in TEXT_CONTROLS or byte == 127 for byte in head)
