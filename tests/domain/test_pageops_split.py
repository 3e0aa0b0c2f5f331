"""Splitting a batch scanned in one go (docs/api.md, "Page operations"), through the API and the
consume folder: after given pages; at separator sheets with a QR code or 1-D barcodes reading
DMS-SPLIT or PATCH T (drawn by zxing-cpp, read by zxing-cpp), the sheets left out; at blank pages
(noisy scans of empty sheets); the parts keep the source's tags and folder, the source goes to the
trash. (The consume folder's splitting: tests/intake/test_consume_split.py; the limit of every split
and splits too large for one request: test_pageops_split_runs.py.)"""

from __future__ import annotations

from tests.harness import samples
from tests.harness.client import JSON, NOT_FOUND, assert_error
from tests.harness.database import execute_sql, query_sql, snapshot
from tests.harness.documents import make_folder, new_document, upload
from tests.harness.pdfops import (
    batch_pdf,
    letter_page,
    noisy_scan,
    page_texts,
    separator_sheet,
    six_page_batch,
)
from tests.harness.waiting import wait_indexed, wait_processed

ONE_D = separator_sheet([("PATCH T", "Code128")])


def uploaded(client, title, data, parent=None) -> str:
    document_id = new_document(client, title, parent)
    assert upload(client, document_id, title, data).status_code == 201
    assert wait_processed(client, document_id, timeout=180)[-1] == "succeeded"
    return document_id


def texts(client, document_id) -> list[str]:
    """Each page's text as the document's latest version's pages hold it, folded."""
    attributes = client.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]
    return [" ".join(client.get(f"/api/pages/{page['id']}/",
                                headers={"Accept": "text/plain"}).text.split())
            for page in attributes["versions"][-1]["pages"]]


def split(client, document_id, body):
    response = client.post(f"/api/documents/{document_id}/split/", body, media=JSON)
    assert response.status_code == 201, response.text
    return response.json()["data"]


def test_a_batch_with_two_qr_separator_sheets_becomes_three_documents(alice, config):
    folder = make_folder(alice, "Scans", alice.home_id)
    source = uploaded(alice, "batch.pdf", six_page_batch(), folder)
    alice.post(f"/api/nodes/{source}/tags/", {"tags": ["scanned"]}, media=JSON)

    parts = split(alice, source, {"separator": "barcode"})
    assert [(p["type"], p["attributes"]["title"], p["attributes"]["page_count"],
             p["attributes"]["ocr_status"], [t["name"] for t in p["attributes"]["tags"]],
             p["relationships"]["parent"]["data"]["id"]) for p in parts] == [
        ("documents", "batch-1.pdf", 1, "succeeded", ["scanned"], folder),
        ("documents", "batch-2.pdf", 2, "succeeded", ["scanned"], folder),
        ("documents", "batch-3.pdf", 1, "succeeded", ["scanned"], folder)]
    assert [texts(alice, p["id"]) for p in parts] == [
        ["Invoice alpha"], ["Letter bravo one", "Letter bravo two"], ["Notice charlie"]]
    assert [p["attributes"]["versions"][0]["short_description"] for p in parts] == [
        "split from batch.pdf, page(s) 1-1", "split from batch.pdf, page(s) 3-4",
        "split from batch.pdf, page(s) 6-6"]
    assert all(p["attributes"]["versions"][0]["searchable_pdf"] for p in parts)
    searchable = alice.get(f"/api/documents/{parts[1]['id']}/download/?searchable=1").content
    assert [" ".join(t.split()) for t in page_texts(searchable)] == \
        ["Letter bravo one", "Letter bravo two"]
    assert [node["id"] for node in alice.get("/api/trash/").json()["data"]] == [source]
    wait_indexed(config)
    hits = alice.get("/api/search/", params={"q": "bravo"}).json()
    assert [hit["title"] for hit in hits] == ["batch-2.pdf"]


def test_processing_reads_the_barcodes_so_that_a_split_renders_no_page(alice, config):
    """The scans' barcodes are read while Tesseract's render is at hand (page.barcodes); the
    split trusts what is stored and renders only the pages whose barcodes are unknown."""
    source = uploaded(alice, "batch.pdf", six_page_batch())
    version = alice.get(f"/api/documents/{source}/").json()["data"]["attributes"]["versions"][-1]

    def stored():
        return query_sql(config, "SELECT number, barcodes FROM page WHERE version_id = ? "
                                 "ORDER BY number", version["id"])

    assert stored() == [(1, "[]"), (2, '["DMS-SPLIT"]'), (3, "[]"), (4, "[]"),
                        (5, '["DMS-SPLIT"]'), (6, "[]")]
    # What is stored decides: the second sheet said to carry nothing is not a separator...
    execute_sql(config, "UPDATE page SET barcodes = '[]' WHERE version_id = ? AND number = 5",
                version["id"])
    assert alice.post(f"/api/documents/{source}/split/", {"separator": "barcode"},
                      media=JSON).status_code == 201
    parts = [node for node in alice.get(f"/api/nodes/{alice.home_id}/").json()["data"]
             if node["attributes"]["title"].startswith("batch-")]
    assert sorted(p["attributes"]["page_count"] for p in parts) == [1, 4]
    # ... and a page whose barcodes are unknown (NULL) is rendered and read in the request.
    again = uploaded(alice, "again.pdf", six_page_batch())
    version = alice.get(f"/api/documents/{again}/").json()["data"]["attributes"]["versions"][-1]
    execute_sql(config, "UPDATE page SET barcodes = NULL WHERE version_id = ?", version["id"])
    assert [p["attributes"]["page_count"] for p in split(alice, again, {"separator": "barcode"})] \
        == [1, 2, 1]


def test_one_dimensional_barcodes_split_too(alice):
    pages = [letter_page("First letter"), ONE_D, letter_page("Second letter")]
    source = uploaded(alice, "batch.pdf", batch_pdf(pages))
    parts = split(alice, source, {"separator": "barcode"})
    assert [texts(alice, p["id"]) for p in parts] == [["First letter"], ["Second letter"]]


def test_blank_pages_split_a_batch(alice):
    pages = [letter_page("Page one"), noisy_scan(1), letter_page("Page two"),
             letter_page("Page three"), noisy_scan(2)]
    source = uploaded(alice, "batch.pdf", batch_pdf(pages))
    parts = split(alice, source, {"separator": "blank"})
    assert [texts(alice, p["id"]) for p in parts] == [["Page one"], ["Page two", "Page three"]]


def test_split_after_given_pages(alice):
    source = uploaded(alice, "four.pdf", samples.pdf(["one", "two", "three", "four"]))
    parts = split(alice, source, {"after_pages": [1, 3]})
    assert [(p["attributes"]["title"], texts(alice, p["id"])) for p in parts] == [
        ("four-1.pdf", ["one"]), ("four-2.pdf", ["two", "three"]), ("four-3.pdf", ["four"])]


def test_refused_splits_change_nothing(alice, bob, anon, config):
    source = uploaded(alice, "four.pdf", samples.pdf(["one", "two", "three", "four"]))
    folder = make_folder(alice, "Folder", alice.home_id)
    wait_indexed(config)
    before = snapshot(config)
    cases = [
        ({"after_pages": [4]}, "A page number to cut after is between 1 and 3.",
         "/after_pages/0", "invalid"),
        ({"after_pages": [3, 1]}, "after_pages are increasing, each once.", "/after_pages",
         "invalid"),
        ({"after_pages": []}, "after_pages is a list of page numbers to cut after.",
         "/after_pages", "required"),
        ({"after_pages": [1, 2, 3, 3]}, "after_pages names at most 3 page numbers: the document "
                                        "has 4 pages.", "/after_pages", "invalid"),
        ({}, "Give either after_pages (page numbers to cut after) or separator (\"barcode\" or "
             "\"blank\").", "/after_pages", "required"),
        ({"separator": "qr"}, "separator is \"barcode\" or \"blank\".", "/separator",
         "invalid"),
        ({"separator": "barcode"}, "No page of this document is a separator sheet (a barcode "
                                   "reading DMS-SPLIT or PATCH T)", "/separator", "invalid"),
    ]
    for body, detail, pointer, code in cases:
        response = alice.post(f"/api/documents/{source}/split/", body, media=JSON)
        assert_error(response, 400, code, detail, pointer)
    for client in (bob, alice):
        target = folder if client is alice else source
        response = client.post(f"/api/documents/{target}/split/", {"after_pages": [1]},
                               media=JSON)
        assert (response.status_code, response.json()) == (404, NOT_FOUND)
    assert anon.post(f"/api/documents/{source}/split/", {"after_pages": [1]},
                     media=JSON).status_code == 401
    assert snapshot(config) == before
