"""Files of the page operations' tests (tests/files/test_pdfops_*): a sample written to a folder,
an image saved as a file, each page's /Rotate and size in a PDF, the .partial files left behind."""

from __future__ import annotations

from pathlib import Path

import pypdfium2
from PIL import Image


def write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def layout(path: Path) -> list[tuple[int, tuple[float, float]]]:
    """Each page's /Rotate and its size as shown (points)."""
    document = pypdfium2.PdfDocument(str(path))
    try:
        return [(document[index].get_rotation(), document[index].get_size())
                for index in range(len(document))]
    finally:
        document.close()


def leftovers(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.endswith(".partial"))


def as_file(image: Image.Image, folder: Path, name: str, **options) -> Path:
    path = folder / name
    image.save(path, **options)
    return path
