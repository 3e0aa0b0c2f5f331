"""Page operations on one document (docs/api.md, "Page operations"): deleting, reordering and
rotating pages makes a new version (page order read back from the stored PDF's text, rotation from
its pages' /Rotate), leaves the older version byte-identical, keeps the pages' text (search follows)
or reads again a turned page Tesseract had read; refused bodies change nothing. These on the fast
tier: the domain's functions with the queue's workers, no server. Through the API: the answers
(204, a refused body's pointer), another user's pages are unknown, an anonymous caller is
refused."""

from __future__ import annotations

import pytest
from PIL import Image

from dms.domain import documents, previews, tree
from dms.domain.pages import operations
from tests.harness import samples
from tests.harness.client import JSON, NOT_FOUND, assert_error
from tests.harness.database import snapshot
from tests.harness.documents import new_document, upload
from tests.harness.domaintier import (
    assert_refused,
    events_of,
    latest_file,
    new_user,
    page_ids,
    read_document,
    search_titles,
    stored_file,
    wait_read,
)
from tests.harness.pdfops import bytes_layout, page_texts
from tests.harness.waiting import wait_indexed, wait_processed

WORDS = ["alpha", "bravo", "charlie", "delta"]
FOUR_PAGES = samples.pdf([f"Page {word} of the letter" for word in WORDS])
LETTER = (612.0, 792.0)  # the samples' page size in points, as shown



@pytest.fixture
def letter(reading):
    """Alice's processed four-page PDF with a text layer: (alice, the document's id, its page
    ids in order)."""
    alice = new_user("alice")
    document_id = read_document(reading, alice, "letter.pdf", "letter.pdf", FOUR_PAGES)
    return alice, document_id, page_ids(document_id)


def words(services, document_id) -> list[str]:
    """The word of each page of the latest version, as its stored PDF holds it."""
    return [text.split()[1] for text in page_texts(latest_file(services, document_id))]


def test_deleting_a_page_makes_a_version_without_it(reading, letter):
    alice, document_id, pages = letter
    original = latest_file(reading, document_id)
    assert search_titles(reading, alice, "bravo") == ["letter.pdf"]

    operations.delete_pages(reading, alice, [pages[1]])
    node = tree.owned_node(alice, document_id)
    assert (node.page_count, node.ocr_status, node.file_name) == (3, "succeeded", "letter.pdf")
    versions = documents.versions(document_id)
    assert [(v.number, v.page_count, v.short_description) for v in versions] == \
        [(1, 4, ""), (2, 3, "1 page(s) deleted")]
    assert words(reading, document_id) == ["alpha", "charlie", "delta"]
    # The pages keep their text without reading again; the older version stays as it was.
    assert [documents.reached_page(alice, page)[0].text for page in page_ids(document_id)] == \
        [f"Page {w} of the letter" for w in ("alpha", "charlie", "delta")]
    assert stored_file(reading, versions[0].id) == original
    assert search_titles(reading, alice, "bravo") == []
    assert search_titles(reading, alice, "charlie") == ["letter.pdf"]
    assert events_of(alice, document_id)[-1] == \
        ("pages_changed", {"version": 2, "description": "1 page(s) deleted", "pages": 3})


def test_deleting_several_pages_and_keeping_one(reading, config, letter):
    alice, document_id, pages = letter
    operations.delete_pages(reading, alice, pages[:2])
    assert words(reading, document_id) == ["charlie", "delta"]
    left = page_ids(document_id)
    wait_indexed(config)
    assert_refused(config, lambda: operations.delete_pages(reading, alice, left), "invalid",
                   "A document keeps at least one page.", "pages")


def test_reordering_pages(reading, letter):
    alice, document_id, pages = letter
    operations.reorder_pages(reading, alice, [
        {"id": pages[0], "old_number": 1, "new_number": 3},
        {"id": pages[2], "old_number": 3, "new_number": 1}])
    assert words(reading, document_id) == ["charlie", "bravo", "alpha", "delta"]
    assert documents.versions(document_id)[-1].short_description == "pages reordered"


def test_rotating_pages_turns_them_and_keeps_their_text(reading, letter):
    alice, document_id, pages = letter
    operations.rotate_pages(reading, alice, [{"id": pages[0], "angle": 90},
                                             {"id": pages[3], "angle": -90}])
    layout = bytes_layout(latest_file(reading, document_id))
    assert layout == [(90, LETTER[::-1]), (0, LETTER), (0, LETTER), (270, LETTER[::-1])]
    # The previews are drawn as the pages are shown: the turned ones wide, the others tall.
    sizes = []
    for page_id in page_ids(document_id):
        with Image.open(previews.preview(reading, *documents.reached_page(alice, page_id))) as jpeg:
            sizes.append(jpeg.size)
    assert [width > height for width, height in sizes] == [True, False, False, True]
    assert words(reading, document_id) == WORDS
    node = tree.owned_node(alice, document_id)
    assert (node.ocr_status, documents.versions(document_id)[-1].short_description) == \
        ("succeeded", "2 page(s) rotated")
    # Turning a page all the way round changes nothing: no new version.
    operations.rotate_pages(reading, alice, [{"id": page_ids(document_id)[1], "angle": 360}])
    assert len(documents.versions(document_id)) == 2


def test_a_sideways_scan_reads_correctly_once_turned(reading):
    """A scan read sideways by Tesseract: turned upright, its page is read again and found."""
    alice = new_user("alice")
    sideways = samples.scan("Quarterly insurance statement").rotate(90, expand=True)  # to the left
    document_id = read_document(reading, alice, "scan.png", "scan.png",
                                samples.image_bytes(sideways, "PNG"))
    assert "insurance" not in documents.latest_text(document_id)

    operations.rotate_pages(reading, alice, [{"id": page_ids(document_id)[0], "angle": 90}])
    assert wait_read(document_id)[-1] == "succeeded"
    assert "Quarterly insurance statement" in documents.latest_text(document_id)
    latest = documents.versions(document_id)[-1]
    node = tree.owned_node(alice, document_id)
    assert (latest.file_name, latest.searchable_size is not None, node.file_name) == \
        ("scan.pdf", True, "scan.pdf")
    (rotation, size), = bytes_layout(latest_file(reading, document_id))
    assert rotation == 90 and size[0] > size[1]  # shown wide again: the scan was 600 x 1700
    searchable = reading.store.searchable_path(latest.id).read_bytes()
    assert "insurance" in page_texts(searchable)[0]
    assert search_titles(reading, alice, "quarterly") == ["scan.png"]


def test_refused_bodies_change_nothing(reading, config, letter):
    alice, document_id, pages = letter
    other = read_document(reading, alice, "other.pdf", "other.pdf", samples.pdf(["Other"]))
    other_page = page_ids(other)[0]
    wait_indexed(config)
    cases = [
        (operations.rotate_pages, [{"id": pages[0], "angle": 45}], "invalid",
         "An angle is a multiple of 90 degrees (negative: counter-clockwise).", "pages/0/angle"),
        (operations.rotate_pages, [], "required", "A list of pages is required.", "pages"),
        (operations.reorder_pages, [{"id": pages[0], "old_number": 1, "new_number": 2}],
         "invalid", "The new numbers must be the old numbers in another order: each page "
         "listed takes the place of another page listed.", "pages"),
        (operations.reorder_pages, [{"id": pages[0], "old_number": 2, "new_number": 1}],
         "invalid", "That page is number 1, not 2.", "pages/0/old_number"),
        (operations.reorder_pages, [{"id": pages[0], "old_number": 1, "new_number": 9},
                                    {"id": pages[1], "old_number": 2, "new_number": 1}],
         "invalid", "A new number is between 1 and 4, the document's pages.",
         "pages/0/new_number"),
        (operations.delete_pages, [pages[0], other_page], "invalid",
         "All pages must belong to one document; change one document at a time.", "pages"),
        (operations.delete_pages, "all", "required", "A list of page ids is required.",
         "pages"),
    ]
    for operation, body, code, detail, field in cases:
        assert_refused(config, lambda operation=operation, body=body: operation(
            reading, alice, body), code, detail, field)
    # Pages of an older version.
    operations.delete_pages(reading, alice, [pages[0]])
    wait_indexed(config)
    assert_refused(config, lambda: operations.delete_pages(reading, alice, [pages[1]]),
                   "invalid", "Pages of an older version cannot be changed.", "pages")


def test_page_operations_answer_204_point_into_refused_bodies_and_hide_other_users_pages(
        alice, bob, anon, config):
    """Through the API: a refused body is answered with a pointer into it; another user's pages
    are unknown (404), an anonymous caller is refused (401); each changes nothing. An accepted
    operation is answered 204 without a body."""
    document_id = new_document(alice, "letter.pdf")
    two_pages = samples.pdf([f"Page {word} of the letter" for word in WORDS[:2]])
    assert upload(alice, document_id, "letter.pdf", two_pages).status_code == 201
    assert wait_processed(alice, document_id)[-1] == "succeeded"
    pages = [page["id"] for page in alice.get(f"/api/documents/{document_id}/").json()[
        "data"]["attributes"]["versions"][-1]["pages"]]
    wait_indexed(config)
    before = snapshot(config)
    response = alice.post("/api/pages/rotate/", {"pages": [{"id": pages[0], "angle": 45}]},
                          media=JSON)
    assert_error(response, 400, "invalid",
                 "An angle is a multiple of 90 degrees (negative: counter-clockwise).",
                 "/pages/0/angle")
    calls = [("DELETE", f"/api/pages/{pages[0]}/", None),
             ("DELETE", "/api/pages/", {"pages": [pages[0]]}),
             ("POST", "/api/pages/reorder/",
              {"pages": [{"id": pages[0], "old_number": 1, "new_number": 2},
                         {"id": pages[1], "old_number": 2, "new_number": 1}]}),
             ("POST", "/api/pages/rotate/", {"pages": [{"id": pages[0], "angle": 90}]})]
    for method, path, body in calls:
        response = bob.request(method, path, json_body=body, media=JSON)
        assert (response.status_code, response.json()) == (404, NOT_FOUND), path
        response = anon.request(method, path, json_body=body, media=JSON)
        assert response.status_code == 401, path
    assert snapshot(config) == before
    response = alice.delete(f"/api/pages/{pages[1]}/")
    assert (response.status_code, response.content) == (204, b"")
