"""The files of a page operation: a new PDF from pages of documents' latest versions, and the pages'
text carried along, so that nothing is read again that need not be.

Every operation — delete, reorder, rotate, move, merge, split — is "write these pages, in this
order, turned so": a list of Placed pages. The Builder writes them with pdfium in a PDF reader
process (dms.files.pdf.pages.assemble: pages copied, never rendered; a turn by the page's /Rotate);
an image or TIFF version is first made a PDF of its frames (dms.files.pdf.pages.images_to_pdf), once
per operation. A plain text file has no pages to change: refused with a sentence.

Text: each new page keeps its text and how it was read, except a page Tesseract read that is
turned — it was probably read sideways, so it is read again (`read_again`). Searchable PDF: when
pages Tesseract read are kept, the same pages are assembled from their versions' searchable PDFs
(the invisible text comes along), the others from the PDFs themselves: the new version's
searchable PDF when nothing is left to read, else its `base` that processing lays the text of
the pages it reads over (dms.processing.searchable). A version still being read (an operation
right after another) has no searchable PDF yet: the pages its base carries come from a copy of
the base, and a page with Tesseract's text it does not carry is read again, so that the new
version's searchable PDF is whole (issue 44: two turns in a row left none). Files are written in
the store's tmp/ and moved into the store by dms.domain.pages.commit.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dms.db.models import DocumentVersion, Node
from dms.errors import Invalid, Unavailable
from dms.files.filetypes import IMAGES, PDF
from dms.files.imaging import UnacceptableImage
from dms.files.pdf import UnreadablePdf, pages
from dms.files.storage import Blob, FileMissing, ReceivedFile, original, searchable_pdf
from dms.processing import progress, searchable

if TYPE_CHECKING:
    from dms.domain.services import Services

IMAGE_TYPES = {kind.mime for kind in IMAGES}
OCR = "ocr"  # page.method of a page whose text Tesseract read


@dataclass
class SourcePage:
    """A page of a document's latest version, as an operation finds it."""
    page_id: str
    number: int
    text: str
    method: str | None
    version: DocumentVersion
    document: Node
    barcodes: str | None = None  # page.barcodes: a JSON list, or None where no one looked


@dataclass
class Placed:
    """A page of the new file: where it comes from and how far it is turned (clockwise)."""
    page: SourcePage
    turn: int = 0

    @property
    def read_again(self) -> bool:
        """A turned page that Tesseract read: it was probably read sideways."""
        return self.turn % 360 != 0 and self.page.method == OCR

    @property
    def keeps_ocr_text(self) -> bool:
        return self.page.method == OCR and not self.read_again


@dataclass
class Built:
    """A new PDF in tmp/, waiting to become a version, with its pages' text."""
    file: ReceivedFile
    texts: list[tuple[str, str | None]]  # (text, method) of each page; method None: to read
    barcodes: list[str | None] = field(default_factory=list)  # each page's page.barcodes
    searchable: Path | None = None  # searchable PDF (or its base) in tmp/, if pages keep OCR text
    covered: list[int] = field(default_factory=list)  # numbers of the pages whose text it carries

    @property
    def page_count(self) -> int:
        return len(self.texts)

    @property
    def read(self) -> bool:
        """Every page's text is known: nothing is left for processing."""
        return all(method is not None for _, method in self.texts)


@dataclass
class TextSource:
    """Where a version's pages carry Tesseract's invisible text: its searchable PDF (`pages`
    None: every page it read) or, while the version is still being read, a copy of its base."""
    path: Path | None
    pages: set[int] | None
    reading: bool  # the version is still being read: its pages' text may still get a PDF

    def covers(self, number: int) -> bool:
        return self.path is not None and (self.pages is None or number in self.pages)


def refusal(error: ValueError) -> Exception:
    """A reader's refusal as the domain error it means: the file's fault (400), or a time limit
    run out on a busy machine (503: try again)."""
    if isinstance(error, UnreadablePdf) and not error.final:
        return Unavailable(str(error))
    return Invalid(str(error))


def check_changeable(mime_type: str) -> None:
    """A version of this type has pages to change (a PDF, an image or TIFF), else 400: checked
    before any work is queued (a split in the background) or done."""
    if mime_type != PDF.mime and mime_type not in IMAGE_TYPES:
        raise Invalid("A plain text document has no pages to change; only PDFs and images "
                      "can be rotated, reordered, split, merged or have pages moved.")


class Builder:
    """Writes the new PDFs of one operation in a temporary folder of its own (removed by
    `close`, by the start-up sweep after a crash)."""

    def __init__(self, services: Services):
        self.services = services
        self.folder = services.store.temporary_dir()
        self._pdfs: dict[Path, Path] = {}
        self._fetched: dict[Blob, Path] = {}
        self._count = 0

    def __enter__(self) -> Builder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def build(self, placed: list[Placed]) -> Built:
        """The new PDF of `placed`, and its searchable PDF where pages keep Tesseract's text."""
        target = self._name()
        references = [(self.pdf_of(p.page.version), p.page.number - 1, p.turn) for p in placed]
        self._write(references, target)
        sources = self._text_sources(placed)
        # Read again: a turned page Tesseract read, and one whose version is still being read
        # with no PDF of its text yet (else the new version's searchable PDF would lack it).
        again = [p.read_again or (p.page.version.id in sources and p.keeps_ocr_text
                                  and sources[p.page.version.id].reading
                                  and not sources[p.page.version.id].covers(p.page.number))
                 for p in placed]
        pairs = list(zip(placed, again, strict=True))
        texts = [("", None) if read else (p.page.text, p.page.method) for p, read in pairs]
        # A barcode reads the same turned (zxing-cpp tries each way); a page read again is
        # looked at again.
        barcodes = [None if read else p.page.barcodes for p, read in pairs]
        built = Built(ReceivedFile.of(target), texts, barcodes)
        kept = [number for number, (p, read) in enumerate(pairs, 1)
                if p.keeps_ocr_text and not read]
        # Where each kept page's text is: its version's searchable PDF or base (None: nowhere).
        texts_in = {number: sources[p.page.version.id].path
                    if p.page.version.id in sources
                    and sources[p.page.version.id].covers(p.page.number) else None
                    for number, p in enumerate(placed, 1) if number in kept}
        if kept and None not in texts_in.values():
            base = self._name()
            self._write([(texts_in.get(number) or self.pdf_of(p.page.version), p.page.number - 1,
                          p.turn) for number, p in enumerate(placed, 1)], base)
            built.searchable, built.covered = base, kept
        return built

    def _text_sources(self, placed: list[Placed]) -> dict[str, TextSource]:
        """The TextSource of each version whose pages keep Tesseract's text (none when
        searchable PDFs are off)."""
        sources: dict[str, TextSource] = {}
        if self.services.config.searchable_pdf:
            for p in placed:
                if p.keeps_ocr_text and p.page.version.id not in sources:
                    sources[p.page.version.id] = self._text_source(p.page.version)
        return sources

    def _text_source(self, version: DocumentVersion) -> TextSource:
        """Where `version`'s pages carry Tesseract's text for a searchable PDF, if anywhere."""
        store = self.services.store
        if version.searchable_size is not None:
            try:
                return TextSource(self._local(searchable_pdf(version)), None, False)
            except FileMissing:
                pass  # its pages are read again
        reading = progress.work_for(version.id) is not None
        if reading:
            copy = self._name()
            covered = searchable.copy_base(store, version.id, copy)
            if covered:
                return TextSource(copy, covered, True)
        return TextSource(None, set(), reading)

    def build_from(self, pdf: Path, numbers: list[int]) -> Built:
        """A new PDF of pages `numbers` (from 1) of `pdf`, whose text is not known yet (the parts
        of a batch the intake splits, dms.domain.pages.batches)."""
        target = self._name()
        self._write([(pdf, number - 1, 0) for number in numbers], target)
        return Built(ReceivedFile.of(target), [("", None)] * len(numbers))

    def pdf_of(self, version: DocumentVersion) -> Path:
        """The version as a PDF: its stored file, or a PDF of its image's frames."""
        try:
            return self.pdf_of_file(self._local(original(version)), version.mime_type)
        except FileMissing:
            raise Unavailable("The file of this version is missing from the store; ask the "
                              "administrator to run `dms verify`.") from None

    def _local(self, blob: Blob) -> Path:
        """A stored file on this node's disk: where the store keeps it, or a copy fetched for
        this operation (once). Raises FileMissing."""
        store = self.services.store
        path = store.local_path(blob)
        if path is not None:
            if not path.is_file():
                raise FileMissing(str(path))
            return path
        if blob not in self._fetched:
            target = self._name()
            with open(target, "wb") as out:
                for chunk in store.read(blob):
                    out.write(chunk)
            self._fetched[blob] = target
        return self._fetched[blob]

    def pdf_of_file(self, path: Path, mime_type: str) -> Path:
        """A stored or received file as a PDF: itself, or a PDF of its image's frames (made once
        per operation)."""
        if mime_type == PDF.mime:
            return path
        check_changeable(mime_type)
        if path not in self._pdfs:
            converted = self._name()
            config = self.services.config
            try:
                pages.images_to_pdf(self.services.pdf, path, converted, config.max_pages,
                                    config.max_image_megapixels)
            except (UnacceptableImage, UnreadablePdf) as error:
                raise refusal(error) from None
            self._pdfs[path] = converted
        return self._pdfs[path]

    def _write(self, references: list[tuple[Path, int, int]], target: Path) -> None:
        try:
            pages.assemble(self.services.pdf, references, target, self.services.config.max_pages)
        except UnreadablePdf as error:
            raise refusal(error) from None

    def _name(self) -> Path:
        self._count += 1
        return self.folder / f"{self._count}.pdf"
