"""Reading a page large and seeing the paper in lists (api.md §22): a page's preview in a width
(rounded up to the widths dms makes, up to 2,000 px, each cached), a document's thumbnail (its
first page; a placeholder while it has none), the original shown by the browser (`?inline=1`,
only for types that run no script). Through the API: the images' sizes as Pillow reads them, the
cache files, the refusals and another user's document."""

from __future__ import annotations

import io

from PIL import Image

from dms.domain import previews
from dms.files.storage import DirectoryStore
from tests.harness import samples
from tests.harness.client import NOT_FOUND, assert_error
from tests.harness.documents import new_document, upload
from tests.harness.waiting import wait_processed

PLACEHOLDER_TYPE = "image/svg+xml"


def size_of(response) -> tuple[int, int]:
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"] == "image/jpeg"
    with Image.open(io.BytesIO(response.content)) as image:
        assert image.format == "JPEG"
        return image.size


def page_ids(client, document_id) -> list[str]:
    versions = client.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]["versions"]
    return [page["id"] for page in versions[-1]["pages"]]


def test_a_page_is_previewed_in_the_width_asked_rounded_up_and_kept(alice, config):
    document_id = new_document(alice, "letter")
    upload(alice, document_id, "letter.pdf", samples.pdf(["Dear customer", "Page two"]))
    wait_processed(alice, document_id)
    first, second = page_ids(alice, document_id)
    widths = {asked: size_of(alice.get(f"/api/pages/{first}/preview/?width={asked}"))[0]
              for asked in (1, 240, 241, 700, 1000, 1001, 2000)}
    assert widths == {1: 240, 240: 240, 241: 480, 700: 720, 1000: 1000, 1001: 1400, 2000: 2000}
    # A Letter page (612 × 792 pt) keeps its proportions.
    assert size_of(alice.get(f"/api/pages/{second}/preview/?width=2000")) == (2000, 2589)
    assert size_of(alice.get(f"/api/pages/{second}/preview/")) == (1000, 1295)
    version_id = alice.get(f"/api/documents/{document_id}/").json()["data"]["attributes"][
        "versions"][-1]["id"]
    store = DirectoryStore(config.files_path, config.data_dir)
    kept = store.preview_path(version_id, 1, 240).parent
    assert sorted(path.name for path in kept.iterdir()) == [
        "1-1400.jpg", "1-2000.jpg", "1-240.jpg", "1-480.jpg", "1-720.jpg", "1.jpg", "2-2000.jpg",
        "2.jpg"]
    answer = alice.get(f"/api/pages/{first}/preview/?width=240")
    assert answer.headers["Cache-Control"] == "private, no-cache"
    again = alice.get(f"/api/pages/{first}/preview/?width=240",
                      headers={"If-Modified-Since": answer.headers["Last-Modified"]})
    assert (again.status_code, again.content) == (304, b"")


def test_bad_widths_and_other_peoples_pages_are_refused(alice, bob):
    document_id = new_document(alice, "scan")
    upload(alice, document_id, "scan.png", samples.png("Invoice 4711"))
    wait_processed(alice, document_id)
    [page_id] = page_ids(alice, document_id)
    # "²" and "٣" are digits to str.isdigit, not to int(); 5,000 digits are past int()'s limit.
    for width in ("0", "2001", "wide", "-5", "1.5", "", "²", "%D9%A3", "9" * 5000):
        assert_error(alice.get(f"/api/pages/{page_id}/preview/?width={width}"), 400, "invalid",
                     "width must be a whole number of pixels from 1 to 2000.")
    for path in (f"/api/pages/{page_id}/preview/?width=480",
                 f"/api/documents/{document_id}/thumbnail/",
                 f"/api/documents/{document_id}/download/?inline=1"):
        response = bob.get(path)
        assert (response.status_code, response.json()) == (404, NOT_FOUND)


def test_a_thumbnail_is_the_first_page_small_and_a_placeholder_before(alice):
    document_id = new_document(alice, "photo")
    waiting = alice.get(f"/api/documents/{document_id}/thumbnail/")
    assert (waiting.status_code, waiting.headers["Content-Type"],
            waiting.headers["Cache-Control"]) == (200, PLACEHOLDER_TYPE, "no-store")
    assert waiting.content == previews_placeholder()
    upload(alice, document_id, "photo.jpg", samples.jpeg("Invoice 4711"))
    wait_processed(alice, document_id)
    thumbnail = alice.get(f"/api/documents/{document_id}/thumbnail/")
    width, height = size_of(thumbnail)
    assert width == previews.THUMBNAIL_WIDTH and height > 0
    assert thumbnail.headers["Cache-Control"] == "private, no-cache"
    # An address naming the document's state (the page's: updated_at and ocr_status) is kept.
    named = alice.get(f"/api/documents/{document_id}/thumbnail/?v=2026-11-29T10:00:00Z.succeeded")
    assert (named.headers["Cache-Control"], named.content) == (
        "private, max-age=31536000, immutable", thumbnail.content)


def test_the_original_is_shown_inline_only_where_it_runs_no_script(alice):
    letter = new_document(alice, "letter")
    upload(alice, letter, "letter.pdf", samples.pdf(["Dear customer"]))
    shown = alice.get(f"/api/documents/{letter}/download/?inline=1")
    assert (shown.status_code, shown.headers["Content-Type"],
            shown.headers["Content-Disposition"]) == (200, "application/pdf",
                                                      "inline; filename=letter.pdf")
    saved = alice.get(f"/api/documents/{letter}/download/")
    assert saved.headers["Content-Disposition"] == "attachment; filename=letter.pdf"
    notes = new_document(alice, "notes")
    upload(alice, notes, "notes.txt", samples.text("notes\n"))
    assert alice.get(f"/api/documents/{notes}/download/?inline=1").headers[
        "Content-Disposition"] == "inline; filename=notes.txt"


def previews_placeholder() -> bytes:
    from dms.web.api.pages import PLACEHOLDER

    return PLACEHOLDER
