"""What dms and its PDF reader processes say to each other, used by both sides: dms.files.pdf.child
(the child, which runs pdfium) and dms.files.pdf.process (the parent).

The protocol is small and carries no code: frames of a 4-byte big-endian length and a JSON object,
the answer optionally followed by that many raw bytes (`blob`: a rendered page). A refusal is a
code (below) with details; the parent turns it into a sentence (dms.files.pdf). These live apart
from the child's operations so that those can be spread over several modules that import this one,
without an import circle (and the parent need not import the child's code).
"""

from __future__ import annotations

import json
import struct
from typing import Any, BinaryIO

HEADER = struct.Struct(">I")
MAX_FRAME = 64 * 1024 * 1024  # a request or an answer's JSON; a text layer is at most a few MB

# Errors the parent turns into sentences (dms.files.pdf): a code and, where useful, details.
ENCRYPTED, CORRUPT, NO_PAGES, TOO_MANY_PAGES, TOO_SLOW, PAGE_UNREADABLE, MEMORY = (
    "encrypted", "corrupt", "no_pages", "too_many_pages", "too_slow", "page_unreadable", "memory")
# A page that would need more pixels than allowed even at the lowest resolution the caller accepts
# (details: max_megapixels, dpi); refused before anything is rendered.
TOO_LARGE = "too_large"
# An image refused as an upload would be (dms.files.imaging.check_frames; details: its sentence).
IMAGE_REFUSED = "image_refused"


class Refused(Exception):
    def __init__(self, code: str, **details: Any):
        super().__init__(code)
        self.code, self.details = code, details


def partial_path(out: str) -> str:
    """Where a child writes a new PDF before renaming it to `out` (the parent removes it when the
    child was killed on the way): `out` itself is never half-written."""
    return out + ".partial"


def write_frame(out: BinaryIO, message: dict[str, Any], blob: bytes = b"") -> None:
    body = json.dumps({**message, "blob": len(blob)}).encode()
    out.write(HEADER.pack(len(body)) + body)
    if blob:
        out.write(blob)
    out.flush()


def read_exactly(stream: BinaryIO, size: int) -> bytes | None:
    data = stream.read(size)
    return data if data is not None and len(data) == size else None


def read_request(stream: BinaryIO) -> dict[str, Any] | None:
    header = read_exactly(stream, HEADER.size)
    if header is None:
        return None
    (size,) = HEADER.unpack(header)
    if size > MAX_FRAME:
        return None
    body = read_exactly(stream, size)
    return json.loads(body) if body is not None else None
