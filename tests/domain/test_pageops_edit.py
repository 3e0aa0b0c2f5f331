"""Page operations on one document (docs/api.md, "Page operations"), through the API as a user
would: deleting, reordering and rotating pages makes a new version (page order read back from the
downloaded PDF's text, rotation from its pages' /Rotate), leaves the older version byte-identical,
keeps the pages' text (search follows) or reads again a turned page Tesseract had read; refused
bodies change nothing; another user's pages are unknown, an anonymous caller is refused."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from tests.harness import samples
from tests.harness.client import JSON, NOT_FOUND, assert_error
from tests.harness.database import snapshot
from tests.harness.documents import new_document, upload
from tests.harness.pdfops import bytes_layout, page_texts
from tests.harness.waiting import wait_indexed, wait_processed

WORDS = ["alpha", "bravo", "charlie", "delta"]
FOUR_PAGES = samples.pdf([f"Page {word} of the letter" for word in WORDS])
LETTER = (612.0, 792.0)  # the samples' page size in points, as shown


@pytest.fixture
def letter(alice):
    """A processed four-page PDF with a text layer: (document id, its page ids in order)."""
    document_id = new_document(alice, "letter.pdf")
    assert upload(alice, document_id, "letter.pdf", FOUR_PAGES).status_code == 201
    assert wait_processed(alice, document_id)[-1] == "succeeded"
    return document_id, page_ids(alice, document_id)


def document(client, document_id) -> dict:
    return client.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]


def page_ids(client, document_id) -> list[str]:
    return [page["id"] for page in document(client, document_id)["versions"][-1]["pages"]]


def latest_pdf(client, document_id) -> bytes:
    response = client.get(f"/api/documents/{document_id}/download/")
    assert response.status_code == 200
    return response.content


def words(client, document_id) -> list[str]:
    """The word of each page of the latest version, as the downloaded PDF holds it."""
    return [text.split()[1] for text in page_texts(latest_pdf(client, document_id))]


def search(client, config, text) -> list[str]:
    wait_indexed(config)
    return [hit["title"] for hit in client.get("/api/search/", params={"q": text}).json()]


def test_deleting_a_page_makes_a_version_without_it(alice, config, letter):
    document_id, pages = letter
    original = latest_pdf(alice, document_id)
    assert search(alice, config, "bravo") == ["letter.pdf"]

    response = alice.delete(f"/api/pages/{pages[1]}/")
    assert (response.status_code, response.content) == (204, b"")
    attributes = document(alice, document_id)
    assert (attributes["page_count"], attributes["ocr_status"], attributes["file_name"]) == \
        (3, "succeeded", "letter.pdf")
    versions = attributes["versions"]
    assert [(v["number"], v["page_count"], v["short_description"]) for v in versions] == \
        [(1, 4, ""), (2, 3, "1 page(s) deleted")]
    assert words(alice, document_id) == ["alpha", "charlie", "delta"]
    # The pages keep their text without reading again; the older version stays as it was.
    new_pages = [page["id"] for page in versions[-1]["pages"]]
    assert [alice.get(f"/api/pages/{p}/", headers={"Accept": "text/plain"}).text
            for p in new_pages] == [f"Page {w} of the letter" for w in ("alpha", "charlie",
                                                                      "delta")]
    assert alice.get(f"/api/document-versions/{versions[0]['id']}/download/").content == \
        original
    assert search(alice, config, "bravo") == []
    assert search(alice, config, "charlie") == ["letter.pdf"]
    history = alice.get(f"/api/nodes/{document_id}/history/").json()["data"]
    assert (history[0]["attributes"]["action"], history[0]["attributes"]["details"]) == \
        ("pages_changed", {"version": 2, "description": "1 page(s) deleted", "pages": 3})


def test_deleting_several_pages_and_keeping_one(alice, config, letter):
    document_id, pages = letter
    response = alice.request("DELETE", "/api/pages/", json_body={"pages": pages[:2]}, media=JSON)
    assert response.status_code == 204, response.text
    assert words(alice, document_id) == ["charlie", "delta"]
    left = page_ids(alice, document_id)
    wait_indexed(config)
    before = snapshot(config)
    response = alice.request("DELETE", "/api/pages/", json_body={"pages": left}, media=JSON)
    assert_error(response, 400, "invalid", "A document keeps at least one page.", "/pages")
    assert snapshot(config) == before


def test_reordering_pages(alice, letter):
    document_id, pages = letter
    body = {"pages": [{"id": pages[0], "old_number": 1, "new_number": 3},
                      {"id": pages[2], "old_number": 3, "new_number": 1}]}
    assert alice.post("/api/pages/reorder/", body, media=JSON).status_code == 204
    assert words(alice, document_id) == ["charlie", "bravo", "alpha", "delta"]
    assert document(alice, document_id)["versions"][-1]["short_description"] == "pages reordered"


def test_rotating_pages_turns_them_and_keeps_their_text(alice, letter):
    document_id, pages = letter
    body = {"pages": [{"id": pages[0], "angle": 90}, {"id": pages[3], "angle": -90}]}
    assert alice.post("/api/pages/rotate/", body, media=JSON).status_code == 204
    layout = bytes_layout(latest_pdf(alice, document_id))
    assert layout == [(90, LETTER[::-1]), (0, LETTER), (0, LETTER), (270, LETTER[::-1])]
    # The previews are drawn as the pages are shown: the turned ones wide, the others tall.
    sizes = [Image.open(io.BytesIO(alice.get(f"/api/pages/{page}/",
                                             headers={"Accept": "image/jpeg"}).content)).size
             for page in page_ids(alice, document_id)]
    assert [width > height for width, height in sizes] == [True, False, False, True]
    assert words(alice, document_id) == WORDS
    attributes = document(alice, document_id)
    assert (attributes["ocr_status"], attributes["versions"][-1]["short_description"]) == \
        ("succeeded", "2 page(s) rotated")
    # Turning a page all the way round changes nothing: no new version.
    body = {"pages": [{"id": page_ids(alice, document_id)[1], "angle": 360}]}
    assert alice.post("/api/pages/rotate/", body, media=JSON).status_code == 204
    assert len(document(alice, document_id)["versions"]) == 2


def test_a_sideways_scan_reads_correctly_once_turned(alice, config):
    """A scan read sideways by Tesseract: turned upright, its page is read again and found."""
    sideways = samples.scan("Quarterly insurance statement").rotate(90, expand=True)  # to the left
    document_id = new_document(alice, "scan.png")
    assert upload(alice, document_id, "scan.png",
                  samples.image_bytes(sideways, "PNG")).status_code == 201
    assert wait_processed(alice, document_id)[-1] == "succeeded"
    assert "insurance" not in alice.get(f"/api/documents/{document_id}/ocr-text").json()["text"]

    page = page_ids(alice, document_id)[0]
    body = {"pages": [{"id": page, "angle": 90}]}
    assert alice.post("/api/pages/rotate/", body, media=JSON).status_code == 204
    assert wait_processed(alice, document_id)[-1] == "succeeded"
    text = alice.get(f"/api/documents/{document_id}/ocr-text").json()["text"]
    assert "Quarterly insurance statement" in text
    attributes = document(alice, document_id)
    latest = attributes["versions"][-1]
    assert (latest["file_name"], latest["searchable_pdf"], attributes["file_name"]) == \
        ("scan.pdf", True, "scan.pdf")
    (rotation, size), = bytes_layout(latest_pdf(alice, document_id))
    assert rotation == 90 and size[0] > size[1]  # shown wide again: the scan was 600 x 1700
    searchable = alice.get(f"/api/documents/{document_id}/download/?searchable=1").content
    assert "insurance" in page_texts(searchable)[0]
    assert search(alice, config, "quarterly") == ["scan.png"]


def test_refused_bodies_change_nothing(alice, bob, config, letter):
    document_id, pages = letter
    other = new_document(alice, "other.pdf")
    assert upload(alice, other, "other.pdf", samples.pdf(["Other"])).status_code == 201
    wait_processed(alice, other)
    other_page = page_ids(alice, other)[0]
    wait_indexed(config)
    before = snapshot(config)
    cases = [
        ("POST", "/api/pages/rotate/", {"pages": [{"id": pages[0], "angle": 45}]}, 400,
         "An angle is a multiple of 90 degrees (negative: counter-clockwise).",
         "/pages/0/angle"),
        ("POST", "/api/pages/rotate/", {"pages": []}, 400, "A list of pages is required.",
         "/pages"),
        ("POST", "/api/pages/reorder/",
         {"pages": [{"id": pages[0], "old_number": 1, "new_number": 2}]}, 400,
         "The new numbers must be the old numbers in another order: each page listed takes the "
         "place of another page listed.", "/pages"),
        ("POST", "/api/pages/reorder/",
         {"pages": [{"id": pages[0], "old_number": 2, "new_number": 1}]}, 400,
         "That page is number 1, not 2.", "/pages/0/old_number"),
        ("POST", "/api/pages/reorder/",
         {"pages": [{"id": pages[0], "old_number": 1, "new_number": 9},
                    {"id": pages[1], "old_number": 2, "new_number": 1}]}, 400,
         "A new number is between 1 and 4, the document's pages.", "/pages/0/new_number"),
        ("DELETE", "/api/pages/", {"pages": [pages[0], other_page]}, 400,
         "All pages must belong to one document; change one document at a time.", "/pages"),
        ("DELETE", "/api/pages/", {"pages": "all"}, 400, "A list of page ids is required.",
         "/pages"),
    ]
    for method, path, body, status, detail, pointer in cases:
        response = alice.request(method, path, json_body=body, media=JSON)
        assert_error(response, status, "invalid" if "required" not in detail else "required",
                     detail, pointer)
    # Pages of an older version.
    assert alice.delete(f"/api/pages/{pages[0]}/").status_code == 204
    wait_indexed(config)
    after_delete = snapshot(config)
    response = alice.delete(f"/api/pages/{pages[1]}/")
    assert_error(response, 400, "invalid", "Pages of an older version cannot be changed.",
                 "/pages")
    assert snapshot(config) == after_delete
    assert before != after_delete


def test_another_users_pages_are_unknown_and_anonymous_callers_refused(alice, bob, anon, config,
                                                                       letter):
    document_id, pages = letter
    wait_indexed(config)
    before = snapshot(config)
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
