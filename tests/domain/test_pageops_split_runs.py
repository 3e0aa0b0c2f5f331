"""A split into many parts (docs/api.md, "Splits in the background"): DMS_SPLIT_MAX_PAGES bounds
every form of split; a split of more parts than one batch, or with many pages to look at for
separator sheets, answers 202 at once and its run makes the parts in the background, a batch per
write transaction, so another user's writes go through between its batches; a document is split by
one run at a time, a user has at most five under way; a source changed mid-run fails the run,
keeping the parts made. (kill -9 during a run: test_pageops_split_crash.py.)

Long batches are born-digital (tests.harness.pdfops.long_batch): processing reads their text
layers and renders nothing, so thousands of pages cost seconds, not Tesseract's minutes."""

from __future__ import annotations

import logging

import pytest

from dms.db import release_connection
from dms.domain import splitruns
from dms.domain.pages import batches
from dms.files.filetypes import PDF
from tests.harness.client import JSON, NOT_FOUND, VND, assert_error
from tests.harness.database import execute_sql, query_sql, snapshot
from tests.harness.documents import make_folder, stored_files, temporary_files, upload
from tests.harness.pdfops import (
    batch_pdf,
    finished_split,
    letter_page,
    long_batch,
    page_line,
    separator_sheet,
)
from tests.harness.waiting import wait_processed

RUN_AT = "2026-01-01 00:00:00.000000"


def uploaded(client, title: str, data: bytes, parent=None, ocr: bool = True) -> str:
    body = {"data": {"type": "documents", "attributes": {"title": title, "ocr": ocr},
                     "relationships": {"parent": {"data": {
                         "type": "folders", "id": parent or client.home_id}}}}}
    response = client.post("/api/nodes/", body)
    assert response.status_code == 201, response.text
    document_id = response.json()["data"]["id"]
    assert upload(client, document_id, title, data).status_code == 201
    assert wait_processed(client, document_id, timeout=180)[-1] == "succeeded"
    return document_id


def split(client, document_id: str, body: dict):
    return client.post(f"/api/documents/{document_id}/split/", body, media=JSON)


def parts_made(config, run_id: str) -> int:
    return query_sql(config, "SELECT parts_made FROM split_run WHERE id = ?", run_id)[0][0]


def finished(config, run_id: str) -> bool:
    return query_sql(config, "SELECT state FROM split_run WHERE id = ?", run_id)[0][0] in (
        "succeeded", "failed")


def part_texts(config, run_id: str) -> list[tuple[int, str, str]]:
    """(part number, title, its pages' text) of each part a run made, in order."""
    rows = query_sql(config, "SELECT s.number, n.title, p.text FROM split_part AS s "
                             "JOIN node AS n ON n.id = s.document_id "
                             "JOIN document_version AS v ON v.document_id = n.id "
                             "JOIN page AS p ON p.version_id = v.id WHERE s.run_id = ? "
                             "ORDER BY s.number, p.number", run_id)
    return [(number, title, " ".join(text.split())) for number, title, text in rows]


def listed(client, run_id: str) -> list[dict]:
    """Every document of GET /split-runs/{id}/documents/, page after page."""
    found, url = [], f"/api/split-runs/{run_id}/documents/?page[size]=100"
    while url:
        body = client.get(url).json()
        found += body["data"]
        url = body["links"]["next"]
    return found


@pytest.mark.config(split_max_pages=3)
def test_every_form_of_split_obeys_the_one_limit(alice, config):
    four = uploaded(alice, "four.pdf", long_batch(4))
    three = uploaded(alice, "three.pdf", long_batch(3))
    before = snapshot(config)
    for body in ({"after_pages": [1]}, {"after_pages": [1, 2, 3]}, {"separator": "barcode"},
                 {"separator": "blank"}):
        assert_error(split(alice, four, body), 400, "invalid",
                     "A document is split only if it has at most 3 pages (DMS_SPLIT_MAX_PAGES); "
                     "this one has 4.")
    # after_pages is bounded by the pages before any of its numbers is looked at.
    assert_error(split(alice, three, {"after_pages": list(range(1, 100_000))}), 400, "invalid",
                 "after_pages names at most 2 page numbers: the document has 3 pages.",
                 "/after_pages")
    assert snapshot(config) == before
    response = split(alice, three, {"after_pages": [1, 2]})
    assert response.status_code == 201, response.text
    assert [part["attributes"]["title"] for part in response.json()["data"]] == \
        ["three-1.pdf", "three-2.pdf", "three-3.pdf"]


@pytest.mark.config(split_max_pages=5)
def test_the_intake_imports_a_batch_over_the_limit_whole(server, tmp_path, caplog):
    """The consume folder and mail (DMS_SPLIT_ON_BARCODE) obey the same limit, and lose nothing
    for it: the batch is not looked at, and imported as one document."""
    path = tmp_path / "batch.pdf"
    path.write_bytes(long_batch(6))
    with caplog.at_level(logging.INFO, logger="dms.intake"):
        with batches.split_at_barcodes(server.runtime.services, path, PDF, 6,
                                       "batch.pdf") as parts:
            assert parts == []
    assert [record.getMessage() for record in caplog.records if record.name == "dms.intake"] == [
        "'batch.pdf' is imported without looking for separator sheets: A document is split only "
        "if it has at most 5 pages (DMS_SPLIT_MAX_PAGES); this one has 6."]


def test_a_split_into_many_parts_answers_202_and_its_run_makes_them(alice, bob, admin, anon,
                                                                    config):
    folder = make_folder(alice, "Scans", alice.home_id)
    source = uploaded(alice, "batch.pdf", long_batch(45), folder)
    assert alice.post(f"/api/nodes/{source}/tags/", {"tags": ["scanned"]},
                      media=JSON).status_code == 201

    response = split(alice, source, {"after_pages": list(range(1, 45))})
    assert (response.status_code, response.headers["Content-Type"]) == (202, VND), response.text
    run = response.json()["data"]
    location = f"{alice.base_url}/api/split-runs/{run['id']}/"
    assert response.headers["Location"] == location
    assert run == {"type": "split-runs", "id": run["id"], "attributes": {
        "state": "queued", "kind": "after_pages", "parts": 45, "parts_made": 0, "error": None,
        "created_at": run["attributes"]["created_at"], "started_at": None, "finished_at": None},
        "relationships": {"document": {"data": {"type": "documents", "id": source}},
                          "documents": {"links": {"related": location + "documents/"}}}}
    for client in (bob, admin):
        for path in ("", "documents/"):
            assert client.get(f"/api/split-runs/{run['id']}/{path}").json() == NOT_FOUND
    assert anon.get(f"/api/split-runs/{run['id']}/").status_code == 401

    done = finished_split(alice, run["id"])
    assert (done["state"], done["parts"], done["parts_made"], done["error"]) == \
        ("succeeded", 45, 45, None)
    parts = listed(alice, run["id"])
    assert [(p["attributes"]["title"], p["attributes"]["page_count"],
             p["attributes"]["ocr_status"], [t["name"] for t in p["attributes"]["tags"]],
             p["relationships"]["parent"]["data"]["id"]) for p in parts] == [
        (f"batch-{n}.pdf", 1, "succeeded", ["scanned"], folder) for n in range(1, 46)]
    assert part_texts(config, run["id"]) == [
        (n, f"batch-{n}.pdf", page_line(n)) for n in range(1, 46)]
    assert query_sql(config, "SELECT v.short_description FROM split_part AS s JOIN "
                             "document_version AS v ON v.document_id = s.document_id "
                             "WHERE s.run_id = ? ORDER BY s.number", run["id"]) == [
        (f"split from batch.pdf, page(s) {n}-{n}",) for n in range(1, 46)]
    assert [node["id"] for node in alice.get("/api/trash/").json()["data"]] == [source]
    history = alice.get(f"/api/nodes/{parts[44]['id']}/history/").json()["data"]
    assert [(e["attributes"]["action"], e["attributes"]["details"]["origin"]) for e in history] \
        == [("created", {"id": source, "title": "batch.pdf"})]
    # The part list follows the documents: one in the trash is no longer listed.
    assert alice.delete(f"/api/documents/{parts[0]['id']}/").status_code == 204
    assert [p["id"] for p in listed(alice, run["id"])] == [p["id"] for p in parts[1:]]


def test_a_split_with_many_pages_to_look_at_finds_its_separator_sheets_in_the_background(
        alice, config):
    """Not read by processing (`ocr` off), every page's barcodes are unknown: more pages than a
    request looks at, so the run looks, a share of pages per reader."""
    qr = separator_sheet([("DMS-SPLIT", "QRCode")])
    pages = [qr if n in (8, 16) else letter_page(f"Letter page {n}") for n in range(1, 25)]
    source = uploaded(alice, "scan.pdf", batch_pdf(pages), ocr=False)
    response = split(alice, source, {"separator": "blank"})
    assert response.status_code == 202, response.text
    assert {key: response.json()["data"]["attributes"][key] for key in ("kind", "parts")} == \
        {"kind": "blank", "parts": None}
    failed = finished_split(alice, response.json()["data"]["id"])
    assert (failed["state"], failed["parts"], failed["parts_made"], failed["error"]) == \
        ("failed", None, 0, "No page of this document is blank.")

    response = split(alice, source, {"separator": "barcode"})  # unchanged: split it again
    assert response.status_code == 202, response.text
    run = response.json()["data"]["id"]
    done = finished_split(alice, run)
    assert (done["state"], done["parts"], done["parts_made"]) == ("succeeded", 3, 3)
    assert [(p["attributes"]["title"], p["attributes"]["page_count"])
            for p in listed(alice, run)] == [("scan-1.pdf", 7), ("scan-2.pdf", 7),
                                             ("scan-3.pdf", 8)]
    assert [node["id"] for node in alice.get("/api/trash/").json()["data"]] == [source]


def test_one_run_per_document_and_five_splits_under_way_per_user(alice, config):
    user_id = alice.get("/api/users/me/").json()["data"]["id"]
    source = uploaded(alice, "busy.pdf", long_batch(30))
    other = uploaded(alice, "other.pdf", long_batch(30))

    def under_way(run_id: str, document_id: str) -> None:
        """A run held by a worker of another node (its lease far ahead)."""
        execute_sql(config, "INSERT INTO split_run (id, owner_id, document_id, version_id, "
                            "folder_id, title, kind, plan, parts, parts_made, state, worker_id, "
                            "lease_until, created_at) VALUES (?, ?, ?, 'v', ?, 'busy.pdf', "
                            "'after_pages', '[[1, 30]]', 1, 0, 'running', 'elsewhere', "
                            "4102444800, ?)", run_id, user_id, document_id, alice.home_id,
                    RUN_AT)

    under_way("00000000-0000-4000-8000-000000000001", source)
    before = snapshot(config)
    for body in ({"after_pages": [1]}, {"after_pages": list(range(1, 30))}):
        assert_error(split(alice, source, body), 409, "conflict",
                     "This document is being split already (GET /split-runs/00000000-0000-4000-"
                     "8000-000000000001/ follows it); nothing was changed.")
    assert snapshot(config) == before
    for number in range(2, 6):
        under_way(f"00000000-0000-4000-8000-00000000000{number}", f"elsewhere-{number}")
    before = snapshot(config)
    response = split(alice, other, {"after_pages": list(range(1, 30))})
    assert_error(response, 429, "throttled",
                 "You have 5 splits under way; try again when one has finished.")
    assert response.headers["Retry-After"] == "10"
    assert snapshot(config) == before
    # A split small enough for the request is no run: it is not held back.
    assert split(alice, other, {"after_pages": [15]}).status_code == 201


@pytest.mark.parametrize("change", ["moved", "deleted", "a page rotated"])
def test_a_source_changed_mid_run_fails_the_run_and_keeps_the_parts_made(alice, server, config,
                                                                         change):
    """The node's own pool is stopped, so the test runs the run itself, batch by batch
    (splitruns.execute with the server's services): the change lands after the first batch."""
    server.runtime.split_runs.stop()
    folder = make_folder(alice, "Scans", alice.home_id)
    elsewhere = make_folder(alice, "Elsewhere", alice.home_id)
    source = uploaded(alice, "batch.pdf", long_batch(60), folder)
    response = split(alice, source, {"after_pages": list(range(1, 60))})
    assert response.status_code == 202, response.text
    run = response.json()["data"]["id"]
    services = server.runtime.services
    try:
        assert splitruns.execute(services, run, "test-worker",
                                 lambda: parts_made(config, run) > 0) is None
        assert alice.get(f"/api/split-runs/{run}/").json()["data"]["attributes"]["state"] == \
            "running"
        if change == "moved":
            response = alice.post("/api/nodes/move/", {"nodes": [{"id": source}],
                                                       "target_parent": {"id": elsewhere}},
                                  media=JSON)
            assert response.status_code == 200, response.text
        elif change == "deleted":
            assert alice.delete(f"/api/documents/{source}/").status_code == 204
        else:
            page = alice.get(f"/api/documents/{source}/").json()["data"]["attributes"][
                "versions"][-1]["pages"][0]["id"]
            assert alice.post("/api/pages/rotate/", {"pages": [{"id": page, "angle": 90}]},
                              media=JSON).status_code == 204
        assert splitruns.execute(services, run, "test-worker", lambda: False) is None
    finally:
        release_connection()
    done = alice.get(f"/api/split-runs/{run}/").json()["data"]["attributes"]
    assert (done["state"], done["parts_made"], done["error"]) == ("failed", 20, (
        "The document changed while it was being split (a new version, another page operation, "
        "a move or a deletion came first): 20 of 60 parts were made and stay in its folder; the "
        "document was left as it is."))
    assert [(p["attributes"]["title"], p["relationships"]["parent"]["data"]["id"])
            for p in listed(alice, run)] == [(f"batch-{n}.pdf", folder) for n in range(1, 21)]
    source_node = alice.get(f"/api/documents/{source}/")
    trashed = [node["id"] for node in alice.get("/api/trash/").json()["data"]]
    if change == "deleted":
        assert (source_node.status_code, trashed) == (404, [source])
    else:
        attributes = source_node.json()["data"]["attributes"]
        assert (trashed, len(attributes["versions"]), attributes["breadcrumb"][-2][1]) == \
            ([], 2 if change == "a page rotated" else 1,
             elsewhere if change == "moved" else folder)
    # The refused batch's files are gone: every stored file is a version's.
    assert {path.name for path in stored_files(config)} == {
        row[0] for row in query_sql(config, "SELECT id FROM document_version")}
    assert temporary_files(config) == []


@pytest.mark.slow
@pytest.mark.config(split_max_pages=2000)
def test_a_two_thousand_part_split_lets_another_users_writes_through(alice, bob, config):
    """The red team's split into 2,000 held a request thread and the write lock for minutes. Now
    the request answers at once, and bob's writes commit between the run's batches: some of
    them while it has made some parts but not all (its cursor read before and after each)."""
    folder = make_folder(alice, "Long", alice.home_id)
    source = uploaded(alice, "long.pdf", long_batch(2000), folder)
    response = split(alice, source, {"after_pages": list(range(1, 2000))})
    assert response.status_code == 202, response.text
    run = response.json()["data"]["id"]
    seen, inside = [], []
    while len(inside) < 3 and not finished(config, run) and len(seen) < 100_000:
        before = parts_made(config, run)
        make_folder(bob, f"Folder {len(seen)}", bob.home_id)
        seen.append((before, parts_made(config, run)))
        if seen[-1][0] > 0 and seen[-1][1] < 2000:
            inside.append(seen[-1])
    assert len(inside) == 3, seen
    done = finished_split(alice, run)
    assert (done["state"], done["parts_made"]) == ("succeeded", 2000)
    assert part_texts(config, run) == [(n, f"long-{n}.pdf", page_line(n))
                                       for n in range(1, 2001)]
    assert query_sql(config, "SELECT count(*), count(DISTINCT title) FROM node WHERE "
                             "parent_id = ? AND trash_id IS NULL", folder) == [(2000, 2000)]
    assert [node["id"] for node in alice.get("/api/trash/").json()["data"]] == [source]
