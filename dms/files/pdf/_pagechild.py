"""Page operations in the PDF reader's process (Papermerge 2.1's delete, reorder, rotate, move and
merge pages, and split a scanned batch at separator sheets). Like every call into pdfium they run in
the child (dms.files.pdf.child), under its memory limit and the parent's time limit; dms's side,
with the limits and the sentences, is dms.files.pdf.pages. An image is as hostile as a PDF (a small
PNG may decode to gigabytes), so images are decoded here too.

- `assemble`: a new PDF from pages of existing ones, copied with pdfium's page import, never
  rendered: text layers, images at their own resolution, fonts, sizes and annotations stay as they
  are; each page's /Rotate may be turned by a multiple of 90 degrees.
- `images_to_pdf`: a PDF with one page per frame of a PNG, JPEG or TIFF (see its docstring).
- `barcodes`: the texts of the barcodes on a page, read by zxing-cpp from a grayscale render.
- `blankness`: how many pixels of a small grayscale render are dark, margins left out.

A new PDF is written beside its final name (dms.files.pdf._protocol.partial_path), fsynced, then
renamed: the final name never holds half a file. A render that would need more pixels than the
caller allows, even at the lowest resolution it accepts, is refused (TOO_LARGE) before anything
is drawn.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dms.files.imaging import ImageLimits, UnacceptableImage, check_frames, fit_scale
from dms.files.pdf._protocol import (
    IMAGE_REFUSED,
    NO_PAGES,
    PAGE_UNREADABLE,
    TOO_LARGE,
    TOO_MANY_PAGES,
    TOO_SLOW,
    Refused,
    partial_path,
)

if TYPE_CHECKING:
    from PIL.Image import Image as PilImage

# What an operation answers: its result, and the bytes that follow it (dms.files.pdf._protocol).
Answer = tuple[dict[str, Any], bytes]

IMAGE_FORMATS = ("PNG", "JPEG", "MPO", "TIFF")  # as Pillow names them (MPO: a camera's JPEG)
MIN_DPI = 10  # less is taken as none: Pillow says 1 dpi for a TIFF without a resolution
MAX_PAGE_POINTS = 14_400  # the largest page side PDF allows (200 inches): larger images get a
#                           higher resolution instead of a page no viewer shows

# EXIF orientation (tag 274): where a stored pixel (s, t), both in 0..1 from the top left, is
# shown; 5 to 8 swap width and height. Applied by the image's placement, never to its pixels.
ORIENTATIONS: dict[int, Callable[[float, float], tuple[float, float]]] = {
    1: lambda s, t: (s, t), 2: lambda s, t: (1 - s, t), 3: lambda s, t: (1 - s, 1 - t),
    4: lambda s, t: (s, 1 - t), 5: lambda s, t: (t, s), 6: lambda s, t: (1 - t, s),
    7: lambda s, t: (1 - t, 1 - s), 8: lambda s, t: (t, 1 - s),
}


class PageOperations:
    """Mixed into dms.files.pdf.child.Reader, whose `pdfium`, `document(path)` (the open PDF,
    CORRUPT or ENCRYPTED refused) and `page(document, index)` these use."""

    OPERATIONS = ("assemble", "images_to_pdf", "barcodes", "blankness")
    if TYPE_CHECKING:  # the Reader's (pypdfium2 has no type information)
        pdfium: Any

        def document(self, path: str) -> Any: ...

        def page(self, document: Any, index: int) -> Any: ...

    def assemble(self, pages: list[list[Any]], out: str, max_pages: int,
                 seconds: float) -> Answer:
        """Write `out`: the pages `[path, index, turn]` in this order (a source may come several
        times, a page too), each page's /Rotate set to (its own + turn) % 360.

        Consecutive pages of one source are imported in one call, so that the fonts and images
        they share are copied once; a page repeated within such a run starts a new one, so that
        no two pages of the result share a content stream (a later edit of one, such as the
        searchable PDF's overlay, must not change the other)."""
        if not pages:
            raise Refused(NO_PAGES)
        if len(pages) > max_pages:
            raise Refused(TOO_MANY_PAGES, max_pages=max_pages)
        deadline = time.monotonic() + seconds
        runs: list[tuple[str, list[int], set[int]]] = []
        for path, index, _ in pages:
            if runs and runs[-1][0] == path and index not in runs[-1][2]:
                runs[-1][1].append(index)
                runs[-1][2].add(index)
            else:
                runs.append((path, [index], {index}))
        result = self.pdfium.PdfDocument.new()
        try:
            for path, indices, _ in runs:
                source = self.document(path)
                count = len(source)
                for index in indices:
                    if not 0 <= index < count:
                        raise Refused(PAGE_UNREADABLE, number=index + 1,
                                      reason=f"the PDF has {count} pages")
                try:
                    result.import_pages(source, indices)
                except self.pdfium.PdfiumError as error:
                    raise Refused(PAGE_UNREADABLE, number=indices[0] + 1,
                                  reason=str(error)) from None
                if time.monotonic() > deadline:
                    raise Refused(TOO_SLOW, seconds=seconds)
            for number, (_, _, turn) in enumerate(pages):
                page = result[number]
                page.set_rotation((page.get_rotation() + turn) % 360)
                page.close()
            size = self._save(result, out)
            return {"pages": len(pages), "size": size}, b""
        finally:
            result.close()

    def images_to_pdf(self, path: str, label: str, out: str, max_pages: int, max_pixels: int,
                      seconds: float) -> Answer:
        """Write `out`: one page per frame of the image at `path`, at the frame's resolution (72
        dpi when it has none), turned as its EXIF orientation says.

        Written with pdfium (PdfImage), not Pillow's PDF writer: Pillow re-encodes every gray or
        colour frame as a new JPEG, a loss even for a PNG or a TIFF scan and a second generation
        for a JPEG. pdfium embeds a JPEG file's own bytes (DCTDecode, not decoded at all) and any
        other frame as Flate-compressed pixels, losslessly (a 16-bit frame keeps 8 bits; a
        bilevel scan becomes 8-bit gray, larger than CCITT G4 would be but exact). Frames are
        checked as an upload is (dms.files.imaging.check_frames: pixels per frame, frames) before
        any is decoded."""
        from PIL import Image

        try:
            frames = check_frames(Path(path), label, ImageLimits(max_pixels, max_pages))
        except UnacceptableImage as error:
            raise Refused(IMAGE_REFUSED, sentence=str(error)) from None
        deadline = time.monotonic() + seconds
        document = self.pdfium.PdfDocument.new()
        try:
            with Image.open(path) as image:
                if image.format not in IMAGE_FORMATS:
                    raise Refused(IMAGE_REFUSED,
                                  sentence="The file is not a PNG, JPEG or TIFF image.")
                verbatim = image.format == "JPEG" and frames == 1 and image.mode in ("L", "RGB")
                for number in range(frames):
                    image.seek(number)
                    self._image_page(document, image, path if verbatim else None)
                    if time.monotonic() > deadline:
                        raise Refused(TOO_SLOW, seconds=seconds)
            size = self._save(document, out)
            return {"pages": frames, "size": size}, b""
        finally:
            document.close()

    def _image_page(self, document: Any, frame: PilImage, jpeg: str | None) -> None:
        """Add a page showing `frame` (embedding the file `jpeg` as it is, when given)."""
        stored_width, stored_height = frame.size
        try:
            x_dpi, y_dpi = (float(value) for value in frame.info.get("dpi") or (72, 72))
        except (TypeError, ValueError):
            x_dpi = y_dpi = 72.0
        x_dpi, y_dpi = (value if MIN_DPI <= value <= 100_000 else 72.0 for value in (x_dpi, y_dpi))
        width, height = stored_width * 72 / round(x_dpi, 1), stored_height * 72 / round(y_dpi, 1)
        orientation = frame.getexif().get(274, 1)
        if orientation in (5, 6, 7, 8):
            width, height = height, width
        shrink = min(1.0, MAX_PAGE_POINTS / max(width, height))
        width, height = width * shrink, height * shrink
        picture = self.pdfium.PdfImage.new(document)
        if jpeg is not None:
            picture.load_jpeg(jpeg, inline=True)
        else:
            bitmap = self.pdfium.PdfBitmap.from_pil(_flattened(frame))
            picture.set_bitmap(bitmap)
            bitmap.close()
        picture.set_matrix(self._placement(ORIENTATIONS.get(orientation, ORIENTATIONS[1]),
                                           width, height))
        page = document.new_page(width, height)
        page.insert_obj(picture)
        page.gen_content()
        page.close()

    def _placement(self, shown: Callable[[float, float], tuple[float, float]], width: float,
                   height: float) -> Any:
        """The image's matrix: from its unit square (its first row at the top) to a `width` x
        `height` page, each stored pixel where `shown` puts it."""
        def point(u: float, v: float) -> tuple[float, float]:
            x, y = shown(u, 1 - v)
            return x * width, (1 - y) * height

        (e, f), (ax, ay), (cx, cy) = point(0, 0), point(1, 0), point(0, 1)
        return self.pdfium.PdfMatrix(ax - e, ay - f, cx - e, cy - f, e, f)

    def barcodes(self, path: str, index: int, dpi: float, min_dpi: float, max_pixels: int,
                 formats: list[str]) -> Answer:
        """The texts of the barcodes of these `formats` (zxing-cpp's names) on the page, read
        from a grayscale render at `dpi` (less, down to `min_dpi`, to fit `max_pixels`)."""
        image, used = self._gray(path, index, dpi, min_dpi, max_pixels)
        return {"texts": barcode_texts(image, formats), "dpi": used}, b""

    def blankness(self, path: str, index: int, dpi: float, min_dpi: float, max_pixels: int,
                  margin: float, dark_level: int) -> Answer:
        """How many pixels of the page rendered in gray at `dpi` are darker than `dark_level`
        (0-255), leaving out `margin` (a fraction) of each side, and how many were counted."""
        image, used = self._gray(path, index, dpi, min_dpi, max_pixels)
        dx, dy = round(image.width * margin), round(image.height * margin)
        inner = image.crop((dx, dy, max(dx, image.width - dx), max(dy, image.height - dy)))
        dark = sum(inner.histogram()[:dark_level])
        return {"dark_pixels": dark, "pixels": inner.width * inner.height, "dpi": used}, b""

    def _gray(self, path: str, index: int, dpi: float, min_dpi: float,
              max_pixels: int) -> tuple[PilImage, float]:
        """The page as a grayscale Pillow image, and the resolution it got; TOO_LARGE, without
        rendering, when even `min_dpi` would need more than `max_pixels`."""
        page = self.page(self.document(path), index)
        try:
            width, height = (max(side, 1.0) for side in page.get_size())  # points, as shown
            scale = dpi / 72 * fit_scale(width * dpi / 72, height * dpi / 72, max_pixels)
            if scale * 72 < min_dpi * 0.999:
                raise Refused(TOO_LARGE, max_megapixels=max_pixels / 1e6, dpi=min_dpi)
            image = page.render(scale=scale, grayscale=True).to_pil().convert("L")
        finally:
            page.close()
        return image, round(scale * 72, 1)

    def _save(self, document: Any, out: str) -> int:
        """Write `document` to `out` as described in the module docstring; its size."""
        partial = partial_path(out)
        try:
            with open(partial, "wb") as file:
                document.save(file)
                file.flush()
                os.fsync(file.fileno())
            os.replace(partial, out)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(partial)
            raise
        folder = os.open(os.path.dirname(out) or ".", os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
        return os.path.getsize(out)


def _flattened(frame: PilImage) -> PilImage:
    """The frame as 8-bit gray or RGB pixels (what pdfium's bitmaps hold), transparency laid on
    white."""
    from PIL import Image

    if frame.mode.startswith("I;16"):
        return frame.convert("I").point(lambda value: value * (1 / 256)).convert("L")
    if frame.mode in ("1", "L", "I", "F"):
        return frame.convert("L")
    if frame.mode in ("LA", "La", "PA", "RGBA", "RGBa") or "transparency" in frame.info:
        colours = frame.convert("RGBA")
        gray = frame.mode in ("LA", "La")
        flat = Image.new("L" if gray else "RGB", frame.size, 255 if gray else (255, 255, 255))
        flat.paste(colours.convert("L" if gray else "RGB"), mask=colours.getchannel("A"))
        return flat
    return frame.convert("RGB")


def barcode_texts(image: PilImage, formats: list[str]) -> list[str]:
    """The texts of the barcodes of these `formats` (zxing-cpp's names) in a Pillow image."""
    import zxingcpp

    wanted = [getattr(zxingcpp.BarcodeFormat, name) for name in formats]
    # zxing-cpp takes a list of formats as well as their flags.
    return [barcode.text
            for barcode in zxingcpp.read_barcodes(image, formats=wanted)]  # type: ignore[arg-type]
