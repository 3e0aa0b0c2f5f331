"""Splitting a batch scanned in one go (docs/api.md, "Page operations"): after given pages; at
separator sheets with a QR code or 1-D barcodes reading DMS-SPLIT or PATCH T (drawn by zxing-cpp,
read by zxing-cpp), the sheets left out; at blank pages (noisy scans of empty sheets); the parts
keep the source's tags and folder, the source goes to the trash; refused splits change nothing.
These on the fast tier: the domain's functions with the queue's workers, no server. Through the
API: the answer (201 with the parts), a refused body's pointer, another user's document and a
folder are unknown, an anonymous caller is refused. (The consume folder's splitting:
tests/intake/test_consume_split.py; the limit of every split and splits too large for one request:
test_pageops_split_runs.py.)"""

from __future__ import annotations

from dms.db.models import Node
from dms.domain import documents, listings, splitruns, splits, tags, trash
from tests.harness import samples
from tests.harness.client import JSON, NOT_FOUND, assert_error
from tests.harness.database import execute_sql, query_sql, snapshot
from tests.harness.documents import make_folder, new_document, upload
from tests.harness.domaintier import (
    assert_refused,
    home_id,
    new_folder,
    new_user,
    page_ids,
    read_document,
    search_titles,
)
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



def uploaded(services, user, title, data, parent=None) -> str:
    """A document read to the end (in the user's .home unless `parent`): its id."""
    return read_document(services, user, title, title, data, parent or home_id(user),
                         timeout=180)


def texts(user, document_id) -> list[str]:
    """Each page's text as the document's latest version's pages hold it, folded."""
    return [" ".join(documents.reached_page(user, page)[0].text.split())
            for page in page_ids(document_id)]


def split(services, user, document_id, body) -> list[Node]:
    """POST /documents/{id}/split/ of a split small enough for one request: its parts."""
    parts = splits.split(services, user, document_id, body,
                         lambda plan: splitruns.start_run(user, plan))
    assert isinstance(parts, list), parts
    return parts


def test_a_batch_with_two_qr_separator_sheets_becomes_three_documents(reading):
    alice = new_user("alice")
    folder = new_folder(reading, alice, "Scans", home_id(alice))
    source = uploaded(reading, alice, "batch.pdf", six_page_batch(), folder)
    tags.change_node_tags(alice, source, ["scanned"], "replace")

    parts = split(reading, alice, source, {"separator": "barcode"})
    labels = tags.tags_of([p.id for p in parts], alice.id)
    assert [(p.kind, p.title, p.page_count, p.ocr_status, [t["name"] for t in labels[p.id]],
             p.parent_id) for p in parts] == [
        ("document", "batch-1.pdf", 1, "succeeded", ["scanned"], folder),
        ("document", "batch-2.pdf", 2, "succeeded", ["scanned"], folder),
        ("document", "batch-3.pdf", 1, "succeeded", ["scanned"], folder)]
    assert [texts(alice, p.id) for p in parts] == [
        ["Invoice alpha"], ["Letter bravo one", "Letter bravo two"], ["Notice charlie"]]
    versions = [documents.versions(p.id) for p in parts]
    assert [[v.short_description for v in each] for each in versions] == [
        ["split from batch.pdf, page(s) 1-1"], ["split from batch.pdf, page(s) 3-4"],
        ["split from batch.pdf, page(s) 6-6"]]
    assert all(each[0].searchable_size is not None for each in versions)
    searchable = reading.store.searchable_path(versions[1][0].id).read_bytes()
    assert [" ".join(t.split()) for t in page_texts(searchable)] == \
        ["Letter bravo one", "Letter bravo two"]
    assert [node.id for node, _ in trash.trashed(alice).fetch(0, 100)] == [source]
    assert search_titles(reading, alice, "bravo") == ["batch-2.pdf"]


def test_processing_reads_the_barcodes_so_that_a_split_renders_no_page(reading, config):
    """The scans' barcodes are read while Tesseract's render is at hand (page.barcodes); the
    split trusts what is stored and renders only the pages whose barcodes are unknown."""
    alice = new_user("alice")
    source = uploaded(reading, alice, "batch.pdf", six_page_batch())
    version = documents.latest_version(source).id

    def stored():
        return query_sql(config, "SELECT number, barcodes FROM page WHERE version_id = ? "
                                 "ORDER BY number", version)

    assert stored() == [(1, "[]"), (2, '["DMS-SPLIT"]'), (3, "[]"), (4, "[]"),
                        (5, '["DMS-SPLIT"]'), (6, "[]")]
    # What is stored decides: the second sheet said to carry nothing is not a separator...
    execute_sql(config, "UPDATE page SET barcodes = '[]' WHERE version_id = ? AND number = 5",
                version)
    split(reading, alice, source, {"separator": "barcode"})
    _, listing = listings.listing(alice, home_id(alice))
    parts = [node for node in listing.fetch(0, 100) if node.title.startswith("batch-")]
    assert sorted(p.page_count for p in parts) == [1, 4]
    # ... and a page whose barcodes are unknown (NULL) is rendered and read in the request.
    again = uploaded(reading, alice, "again.pdf", six_page_batch())
    execute_sql(config, "UPDATE page SET barcodes = NULL WHERE version_id = ?",
                documents.latest_version(again).id)
    assert [p.page_count for p in split(reading, alice, again, {"separator": "barcode"})] \
        == [1, 2, 1]


def test_one_dimensional_barcodes_split_too(reading):
    alice = new_user("alice")
    pages = [letter_page("First letter"), ONE_D, letter_page("Second letter")]
    source = uploaded(reading, alice, "batch.pdf", batch_pdf(pages))
    parts = split(reading, alice, source, {"separator": "barcode"})
    assert [texts(alice, p.id) for p in parts] == [["First letter"], ["Second letter"]]


def test_blank_pages_split_a_batch(reading):
    alice = new_user("alice")
    pages = [letter_page("Page one"), noisy_scan(1), letter_page("Page two"),
             letter_page("Page three"), noisy_scan(2)]
    source = uploaded(reading, alice, "batch.pdf", batch_pdf(pages))
    parts = split(reading, alice, source, {"separator": "blank"})
    assert [texts(alice, p.id) for p in parts] == [["Page one"], ["Page two", "Page three"]]


def test_split_after_given_pages(reading):
    alice = new_user("alice")
    source = uploaded(reading, alice, "four.pdf", samples.pdf(["one", "two", "three", "four"]))
    parts = split(reading, alice, source, {"after_pages": [1, 3]})
    assert [(p.title, texts(alice, p.id)) for p in parts] == [
        ("four-1.pdf", ["one"]), ("four-2.pdf", ["two", "three"]), ("four-3.pdf", ["four"])]


def test_refused_splits_change_nothing(reading, config):
    alice = new_user("alice")
    source = uploaded(reading, alice, "four.pdf", samples.pdf(["one", "two", "three", "four"]))
    folder = new_folder(reading, alice, "Folder", home_id(alice))
    wait_indexed(config)
    cases = [
        ({"after_pages": [4]}, "A page number to cut after is between 1 and 3.",
         "after_pages/0", "invalid"),
        ({"after_pages": [3, 1]}, "after_pages are increasing, each once.", "after_pages",
         "invalid"),
        ({"after_pages": []}, "after_pages is a list of page numbers to cut after.",
         "after_pages", "required"),
        ({"after_pages": [1, 2, 3, 3]}, "after_pages names at most 3 page numbers: the document "
                                        "has 4 pages.", "after_pages", "invalid"),
        ({}, "Give either after_pages (page numbers to cut after) or separator (\"barcode\" or "
             "\"blank\").", "after_pages", "required"),
        ({"separator": "qr"}, "separator is \"barcode\" or \"blank\".", "separator",
         "invalid"),
        ({"separator": "barcode"}, "No page of this document is a separator sheet (a barcode "
                                   "reading DMS-SPLIT or PATCH T)", "separator", "invalid"),
    ]
    for body, detail, field, code in cases:
        assert_refused(config, lambda body=body: split(reading, alice, source, body), code,
                       detail, field)
    bob = new_user("bob")
    for user, target in ((bob, source), (alice, folder)):
        assert_refused(config, lambda user=user, target=target: split(
            reading, user, target, {"after_pages": [1]}), "not_found", "Not found.", None)


def test_a_split_is_answered_with_its_parts_and_refusals_point_into_the_body(alice, bob, anon,
                                                                             config):
    """Through the API: a refused body is answered with a pointer into it; another user's
    document and a folder are unknown (404), an anonymous caller is refused (401); each changes
    nothing. An accepted split is answered 201 with its parts."""
    source = new_document(alice, "two.pdf")
    assert upload(alice, source, "two.pdf", samples.pdf(["one", "two"])).status_code == 201
    assert wait_processed(alice, source, timeout=180)[-1] == "succeeded"
    folder = make_folder(alice, "Folder", alice.home_id)
    wait_indexed(config)
    before = snapshot(config)
    response = alice.post(f"/api/documents/{source}/split/", {"after_pages": [2]}, media=JSON)
    assert_error(response, 400, "invalid", "A page number to cut after is between 1 and 1.",
                 "/after_pages/0")
    for client in (bob, alice):
        target = folder if client is alice else source
        response = client.post(f"/api/documents/{target}/split/", {"after_pages": [1]},
                               media=JSON)
        assert (response.status_code, response.json()) == (404, NOT_FOUND)
    assert anon.post(f"/api/documents/{source}/split/", {"after_pages": [1]},
                     media=JSON).status_code == 401
    assert snapshot(config) == before
    response = alice.post(f"/api/documents/{source}/split/", {"after_pages": [1]}, media=JSON)
    assert response.status_code == 201, response.text
    assert [(part["type"], part["attributes"]["title"], part["attributes"]["page_count"])
            for part in response.json()["data"]] == [("documents", "two-1.pdf", 1),
                                                     ("documents", "two-2.pdf", 1)]
