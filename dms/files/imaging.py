"""Images within bounds: every frame of an upload is checked before it is accepted, and every
decode later (OCR, previews) stays within a pixel budget.

Concurrency rule: a frame larger than BIG_FRAME_PIXELS is decoded only while holding BIG_DECODE,
so that two such frames (an OCR worker and a preview request, or two workers) never sit in memory
at once: a 50-megapixel RGB frame alone takes 200 MB.
"""

from __future__ import annotations

import contextlib
import math
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

BIG_FRAME_PIXELS = 16_000_000
BIG_DECODE = threading.Lock()


class UnacceptableImage(ValueError):
    """The image cannot be accepted; the message says why, for the person who uploaded it."""


@dataclass(frozen=True)
class ImageLimits:
    max_pixels: int  # per frame
    max_frames: int


def check_frames(path: Path, label: str, limits: ImageLimits) -> int:
    """The number of frames (pages) of an image file, after checking that each one is within
    `limits` and that the file is readable; only headers are read, nothing is decoded."""
    from PIL import Image  # imported on first use: keeps the idle server small

    too_many_pixels = UnacceptableImage(
        f"The image has too many pixels to be processed safely (at most "
        f"{limits.max_pixels / 1e6:g} million per image or page; DMS_MAX_IMAGE_MEGAPIXELS).")
    try:
        # Pillow only warns between its own limit and twice that: refuse those too.
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as image:
                image.verify()  # must come first, right after opening
            with Image.open(path) as image:
                frames = 0
                while True:
                    width, height = image.size
                    if width * height > limits.max_pixels:
                        raise too_many_pixels
                    frames += 1
                    if frames > limits.max_frames:
                        raise UnacceptableImage(
                            f"The image has more than {limits.max_frames} pages, the most dms "
                            "accepts (DMS_MAX_PAGES).")
                    try:
                        image.seek(frames)
                    except EOFError:
                        break
    except UnacceptableImage:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise too_many_pixels from None
    except Exception:  # Pillow raises many types for broken files
        raise UnacceptableImage(f"The {label} image is corrupt and cannot be read.") from None
    return frames


@contextlib.contextmanager
def decoding(pixels: int) -> Iterator[None]:
    """Hold BIG_DECODE while a large frame is decoded and used (see the module docstring)."""
    if pixels <= BIG_FRAME_PIXELS:
        yield
        return
    with BIG_DECODE:
        yield


def fit_scale(width: float, height: float, max_pixels: int, max_side: float | None = None) -> float:
    """The factor (≤ 1) that brings width × height within `max_pixels` and each side within
    `max_side`."""
    scale = 1.0
    if width * height > max_pixels:
        scale = math.sqrt(max_pixels / (width * height))
    if max_side is not None and max(width, height) * scale > max_side:
        scale = max_side / max(width, height)
    return min(scale, 1.0)


def shrink(image, max_pixels: int, max_side: int | None = None):
    """`image` scaled down to fit the budget (the same object if it already does)."""
    from PIL import Image

    scale = fit_scale(*image.size, max_pixels, max_side)
    if scale >= 1.0:
        return image, 1.0
    size = (max(1, int(image.width * scale)), max(1, int(image.height * scale)))
    return image.resize(size, Image.Resampling.BOX), scale
