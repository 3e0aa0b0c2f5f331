"""A split into many parts (docs/api.md, "Splits in the background"): DMS_SPLIT_MAX_PAGES bounds
every form of split; a split of more parts than one batch, or with many pages to look at for
separator sheets, answers 202 at once and its run makes the parts in the background, a batch per
write transaction, so another user's writes go through between its batches; a document is split by
one run at a time, a user has at most five under way; a source changed mid-run fails the run,
keeping the parts made. (kill -9 during a run: test_pageops_split_crash.py.)

The rules on the fast tier (the domain's functions with the queue's workers, no server): a split
too large for one request starts a run, driven slice by slice in the test's thread as a node's
worker drives it (or by a pool of the domain's own, SplitPool, where writes go on beside it).
Through the API what a client sees: 202 with the run, its Location, only its owner follows it and
its documents, anonymous 401; 409 for a document being split, 429 with Retry-After.

Long batches are born-digital (tests.harness.pdfops.long_batch): processing reads their text
layers and renders nothing, so thousands of pages cost seconds, not Tesseract's minutes."""

from __future__ import annotations

import logging
import time

import pytest

from dms.db.models import Node, SplitRun
from dms.domain import documents, splitruns, splits, tags, trash, tree
from dms.domain.pages import batches, operations
from dms.files.fairness import acting_for
from dms.files.filetypes import PDF
from tests.harness.client import JSON, NOT_FOUND, VND, assert_error
from tests.harness.database import execute_sql, query_sql, snapshot
from tests.harness.documents import stored_files, temporary_files, upload
from tests.harness.domaintier import (
    assert_refused,
    events_of,
    home_id,
    new_folder,
    new_user,
    page_ids,
    upload_file,
    wait_read,
)
from tests.harness.pdfops import (
    batch_pdf,
    finished_split,
    letter_page,
    long_batch,
    page_line,
    separator_sheet,
)
from tests.harness.waiting import wait_for, wait_indexed, wait_processed

RUN_AT = "2026-01-01 00:00:00.000000"
BUSY = ("This document is being split already (GET /split-runs/{}/ follows it); nothing was "
        "changed.")
FIVE = "You have 5 splits under way; try again when one has finished."


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


def under_way(config, run_id: str, owner_id: str, document_id: str, folder_id: str) -> None:
    """A run held by a worker of another node (its lease far ahead)."""
    execute_sql(config, "INSERT INTO split_run (id, owner_id, document_id, version_id, "
                        "folder_id, title, kind, plan, parts, parts_made, state, worker_id, "
                        "lease_until, created_at) VALUES (?, ?, ?, 'v', ?, 'busy.pdf', "
                        "'after_pages', '[[1, 30]]', 1, 0, 'running', 'elsewhere', "
                        "4102444800, ?)", run_id, owner_id, document_id, folder_id, RUN_AT)


def run_id(number: int) -> str:
    return f"00000000-0000-4000-8000-{number:012d}"


# -- the fast tier --------------------------------------------------------------------------------

def uploaded(services, user, title: str, data: bytes, parent: str | None = None,
             ocr: bool = True) -> str:
    """A document made in `parent` (the user's .home) as POST /nodes/ makes it, its file uploaded
    and read to the end: its id."""
    document_id = tree.create_node(user, Node.DOCUMENT, {"title": title, "ocr": ocr},
                                   parent or home_id(user), parent_field="parent",
                                   default_lang=services.config.ocr_lang,
                                   max_depth=services.config.max_tree_depth).id
    upload_file(services, user, document_id, title, data)
    assert wait_read(document_id, timeout=180)[-1] == "succeeded"
    return document_id


def split(services, user, document_id: str, body: dict) -> list[Node] | SplitRun:
    """POST /documents/{id}/split/: the parts of a split small enough for the request, or the
    run started for a larger one (not handed to any node's pool)."""
    return splits.split(services, user, document_id, body,
                        lambda plan: splitruns.start_run(user, plan))


def run_to_end(services, run_id: str) -> SplitRun:
    """The run driven slice by slice, as a node's worker drives it, until it ended."""
    while (again := splitruns.execute(services, run_id, "test-worker", lambda: False)) \
            is not None:
        time.sleep(again)
    return SplitRun.get_by_id(run_id)


def parts_of(user, run_id: str) -> list:
    """The live documents the run made, by part number (GET /split-runs/{id}/documents/)."""
    return splitruns.parts_of(user, run_id).fetch(0, 10_000)


def trashed(user) -> list[str]:
    return [node.id for node, _ in trash.trashed(user).fetch(0, 100)]


@pytest.mark.config(split_max_pages=3)
def test_every_form_of_split_obeys_the_one_limit(reading, config):
    alice = new_user("alice")
    four = uploaded(reading, alice, "four.pdf", long_batch(4))
    three = uploaded(reading, alice, "three.pdf", long_batch(3))
    wait_indexed(config)
    for body in ({"after_pages": [1]}, {"after_pages": [1, 2, 3]}, {"separator": "barcode"},
                 {"separator": "blank"}):
        assert_refused(config, lambda body=body: split(reading, alice, four, body), "invalid",
                       "A document is split only if it has at most 3 pages "
                       "(DMS_SPLIT_MAX_PAGES); this one has 4.", None)
    # after_pages is bounded by the pages before any of its numbers is looked at.
    assert_refused(config, lambda: split(reading, alice, three,
                                         {"after_pages": list(range(1, 100_000))}),
                   "invalid", "after_pages names at most 2 page numbers: the document has 3 "
                   "pages.", "after_pages")
    parts = split(reading, alice, three, {"after_pages": [1, 2]})
    assert [part.title for part in parts] == ["three-1.pdf", "three-2.pdf", "three-3.pdf"]


@pytest.mark.config(split_max_pages=5)
def test_the_intake_imports_a_batch_over_the_limit_whole(services, tmp_path, caplog):
    """The consume folder and mail (DMS_SPLIT_ON_BARCODE) obey the same limit, and lose nothing
    for it: the batch is not looked at, and imported as one document."""
    path = tmp_path / "batch.pdf"
    path.write_bytes(long_batch(6))
    with caplog.at_level(logging.INFO, logger="dms.intake"):
        with batches.split_at_barcodes(services, path, PDF, 6, "batch.pdf") as parts:
            assert parts == []
    assert [record.getMessage() for record in caplog.records if record.name == "dms.intake"] == [
        "'batch.pdf' is imported without looking for separator sheets: A document is split only "
        "if it has at most 5 pages (DMS_SPLIT_MAX_PAGES); this one has 6."]


def test_a_split_into_many_parts_starts_a_run_that_makes_them(reading, config):
    alice = new_user("alice")
    folder = new_folder(reading, alice, "Scans", home_id(alice))
    source = uploaded(reading, alice, "batch.pdf", long_batch(45), folder)
    tags.change_node_tags(alice, source, ["scanned"], "replace")

    run = split(reading, alice, source, {"after_pages": list(range(1, 45))})
    assert isinstance(run, SplitRun)
    assert (run.owner_id, run.document_id, run.state, run.kind, run.parts, run.parts_made,
            run.error, run.started_at, run.finished_at) == (
        alice.id, source, "queued", "after_pages", 45, 0, None, None, None)
    bob = new_user("bob")
    for lookup in (splitruns.owned_run, splitruns.parts_of):
        assert_refused(config, lambda lookup=lookup: lookup(bob, run.id), "not_found",
                       "Not found.", None)

    done = run_to_end(reading, run.id)
    assert (done.state, done.parts, done.parts_made, done.error) == ("succeeded", 45, 45, None)
    parts = parts_of(alice, run.id)
    labels = tags.tags_of([part.id for part in parts], alice.id)
    assert [(p.title, p.page_count, p.ocr_status, [t["name"] for t in labels[p.id]], p.parent_id)
            for p in parts] == [
        (f"batch-{n}.pdf", 1, "succeeded", ["scanned"], folder) for n in range(1, 46)]
    assert part_texts(config, run.id) == [
        (n, f"batch-{n}.pdf", page_line(n)) for n in range(1, 46)]
    assert query_sql(config, "SELECT v.short_description FROM split_part AS s JOIN "
                             "document_version AS v ON v.document_id = s.document_id "
                             "WHERE s.run_id = ? ORDER BY s.number", run.id) == [
        (f"split from batch.pdf, page(s) {n}-{n}",) for n in range(1, 46)]
    assert trashed(alice) == [source]
    assert [(action, details["origin"]) for action, details in events_of(alice, parts[44].id)] \
        == [("created", {"id": source, "title": "batch.pdf"})]
    # The part list follows the documents: one in the trash is no longer listed.
    trash.delete(reading, alice, parts[0].id)
    assert [p.id for p in parts_of(alice, run.id)] == [p.id for p in parts[1:]]


def test_a_split_with_many_pages_to_look_at_finds_its_separator_sheets_in_the_background(
        reading):
    """Not read by processing (`ocr` off), every page's barcodes are unknown: more pages than a
    request looks at, so the run looks, a share of pages per reader."""
    alice = new_user("alice")
    qr = separator_sheet([("DMS-SPLIT", "QRCode")])
    pages = [qr if n in (8, 16) else letter_page(f"Letter page {n}") for n in range(1, 25)]
    source = uploaded(reading, alice, "scan.pdf", batch_pdf(pages), ocr=False)
    run = split(reading, alice, source, {"separator": "blank"})
    assert (run.kind, run.parts) == ("blank", None)
    failed = run_to_end(reading, run.id)
    assert (failed.state, failed.parts, failed.parts_made, failed.error) == \
        ("failed", None, 0, "No page of this document is blank.")

    run = split(reading, alice, source, {"separator": "barcode"})  # unchanged: split it again
    done = run_to_end(reading, run.id)
    assert (done.state, done.parts, done.parts_made) == ("succeeded", 3, 3)
    assert [(p.title, p.page_count) for p in parts_of(alice, run.id)] == [
        ("scan-1.pdf", 7), ("scan-2.pdf", 7), ("scan-3.pdf", 8)]
    assert trashed(alice) == [source]


def test_one_run_per_document_and_five_splits_under_way_per_user(reading, config):
    alice = new_user("alice")
    source = uploaded(reading, alice, "busy.pdf", long_batch(30))
    other = uploaded(reading, alice, "other.pdf", long_batch(30))
    under_way(config, run_id(1), alice.id, source, home_id(alice))
    wait_indexed(config)
    for body in ({"after_pages": [1]}, {"after_pages": list(range(1, 30))}):
        assert_refused(config, lambda body=body: split(reading, alice, source, body), "conflict",
                       BUSY.format(run_id(1)), None)
    for number in range(2, 6):
        under_way(config, run_id(number), alice.id, f"elsewhere-{number}", home_id(alice))
    assert_refused(config, lambda: split(reading, alice, other,
                                         {"after_pages": list(range(1, 30))}),
                   "throttled", FIVE, None)
    # A split small enough for the request is no run: it is not held back.
    assert [part.title for part in split(reading, alice, other, {"after_pages": [15]})] == \
        ["other-1.pdf", "other-2.pdf"]


@pytest.mark.config(split_runs_minutes=100_000)  # no periodic resume takes the runs meanwhile
def test_a_source_changed_mid_run_fails_the_run_and_keeps_the_parts_made(reading, config):
    """The run is driven in the test's thread, batch by batch: the change lands after the first
    batch. Each change is a user's own (their folders, their trash)."""
    for number, change in enumerate(("moved", "deleted", "a page rotated")):
        user = new_user(f"user{number}")
        folder = new_folder(reading, user, "Scans", home_id(user))
        elsewhere = new_folder(reading, user, "Elsewhere", home_id(user))
        source = uploaded(reading, user, "batch.pdf", long_batch(60), folder)
        run = split(reading, user, source, {"after_pages": list(range(1, 60))}).id
        assert splitruns.execute(reading, run, "test-worker",
                                 lambda run=run: parts_made(config, run) > 0) is None
        assert SplitRun.get_by_id(run).state == "running"
        if change == "moved":
            tree.move_nodes(user, [source], elsewhere, config.max_tree_depth)
        elif change == "deleted":
            trash.delete(reading, user, source)
        else:
            operations.rotate_pages(reading, user, [{"id": page_ids(source)[0], "angle": 90}])
        assert splitruns.execute(reading, run, "test-worker", lambda: False) is None
        done = SplitRun.get_by_id(run)
        assert (done.state, done.parts_made, done.error) == ("failed", 20, (
            "The document changed while it was being split (a new version, another page "
            "operation, a move or a deletion came first): 20 of 60 parts were made and stay in "
            "its folder; the document was left as it is.")), change
        assert [(p.title, p.parent_id) for p in parts_of(user, run)] == \
            [(f"batch-{n}.pdf", folder) for n in range(1, 21)], change
        node = Node.get_by_id(source)
        if change == "deleted":
            assert (node.trash_id is not None, trashed(user)) == (True, [source])
        else:
            assert (trashed(user), len(documents.versions(source)), node.parent_id) == \
                ([], 2 if change == "a page rotated" else 1,
                 elsewhere if change == "moved" else folder), change
        # The refused batch's files are gone: every stored file is a version's.
        assert {path.name for path in stored_files(config)} == {
            row[0] for row in query_sql(config, "SELECT id FROM document_version")}, change
        assert temporary_files(config) == [], change


@pytest.mark.slow
@pytest.mark.config(split_max_pages=2000, split_runs_minutes=100_000)
def test_a_two_thousand_part_split_lets_another_users_writes_through(reading, config):
    """The red team's split into 2,000 held a request thread and the write lock for minutes. Now
    the split is a run in the background (a SplitPool of the domain's, as a node runs), and bob's
    writes commit between the run's batches: some of them while it has made some parts but not
    all (its cursor read before and after each)."""
    alice, bob = new_user("alice"), new_user("bob")
    folder = new_folder(reading, alice, "Long", home_id(alice))
    source = uploaded(reading, alice, "long.pdf", long_batch(2000), folder)
    pool = splitruns.SplitPool(reading)
    try:
        run = pool.split(alice, source, {"after_pages": list(range(1, 2000))})
        assert isinstance(run, SplitRun)
        seen, inside = [], []
        with acting_for(bob.id):  # as bob's requests would
            while len(inside) < 3 and not finished(config, run.id) and len(seen) < 100_000:
                before = parts_made(config, run.id)
                new_folder(reading, bob, f"Folder {len(seen)}", home_id(bob))
                seen.append((before, parts_made(config, run.id)))
                if seen[-1][0] > 0 and seen[-1][1] < 2000:
                    inside.append(seen[-1])
        assert len(inside) == 3, seen
        wait_for(lambda: finished(config, run.id), timeout=300, interval=0.1,
                 message="the split did not finish")
    finally:
        pool.stop()
    done = SplitRun.get_by_id(run.id)
    assert (done.state, done.parts_made) == ("succeeded", 2000)
    assert part_texts(config, run.id) == [(n, f"long-{n}.pdf", page_line(n))
                                          for n in range(1, 2001)]
    assert query_sql(config, "SELECT count(*), count(DISTINCT title) FROM node WHERE "
                             "parent_id = ? AND trash_id IS NULL", folder) == [(2000, 2000)]
    assert trashed(alice) == [source]


# -- through the API ------------------------------------------------------------------------------

def api_uploaded(client, title: str, data: bytes) -> str:
    body = {"data": {"type": "documents", "attributes": {"title": title},
                     "relationships": {"parent": {"data": {
                         "type": "folders", "id": client.home_id}}}}}
    response = client.post("/api/nodes/", body)
    assert response.status_code == 201, response.text
    document_id = response.json()["data"]["id"]
    assert upload(client, document_id, title, data).status_code == 201
    assert wait_processed(client, document_id, timeout=180)[-1] == "succeeded"
    return document_id


def api_split(client, document_id: str, body: dict):
    return client.post(f"/api/documents/{document_id}/split/", body, media=JSON)


def listed(client, run_id: str) -> list[dict]:
    """Every document of GET /split-runs/{id}/documents/, page after page."""
    found, url = [], f"/api/split-runs/{run_id}/documents/?page[size]=10"
    while url:
        body = client.get(url).json()
        found += body["data"]
        url = body["links"]["next"]
    return found


def test_a_split_into_many_parts_answers_202_and_only_its_owner_follows_it(alice, bob, admin,
                                                                           anon):
    """More parts than one batch (splits.BATCH_PARTS): the run, its Location, followed to its
    end, its documents page after page."""
    source = api_uploaded(alice, "batch.pdf", long_batch(21))
    response = api_split(alice, source, {"after_pages": list(range(1, 21))})
    assert (response.status_code, response.headers["Content-Type"]) == (202, VND), response.text
    run = response.json()["data"]
    location = f"{alice.base_url}/api/split-runs/{run['id']}/"
    assert response.headers["Location"] == location
    assert run == {"type": "split-runs", "id": run["id"], "attributes": {
        "state": "queued", "kind": "after_pages", "parts": 21, "parts_made": 0, "error": None,
        "created_at": run["attributes"]["created_at"], "started_at": None, "finished_at": None},
        "relationships": {"document": {"data": {"type": "documents", "id": source}},
                          "documents": {"links": {"related": location + "documents/"}}}}
    for client in (bob, admin):
        for path in ("", "documents/"):
            assert client.get(f"/api/split-runs/{run['id']}/{path}").json() == NOT_FOUND
    assert anon.get(f"/api/split-runs/{run['id']}/").status_code == 401

    done = finished_split(alice, run["id"])
    assert (done["state"], done["parts"], done["parts_made"], done["error"]) == \
        ("succeeded", 21, 21, None)
    assert [(p["type"], p["attributes"]["title"], p["relationships"]["parent"]["data"]["id"])
            for p in listed(alice, run["id"])] == [
        ("documents", f"batch-{n}.pdf", alice.home_id) for n in range(1, 22)]


def test_a_split_under_way_is_answered_409_and_one_too_many_429_with_retry_after(alice, config):
    user_id = alice.get("/api/users/me/").json()["data"]["id"]
    source = api_uploaded(alice, "busy.pdf", long_batch(30))
    for number in range(2, 7):
        under_way(config, run_id(number), user_id, f"elsewhere-{number}", alice.home_id)
    before = snapshot(config)
    response = api_split(alice, source, {"after_pages": list(range(1, 30))})
    assert_error(response, 429, "throttled", FIVE)
    assert response.headers["Retry-After"] == "10"
    assert snapshot(config) == before
    under_way(config, run_id(1), user_id, source, alice.home_id)
    before = snapshot(config)
    assert_error(api_split(alice, source, {"after_pages": [1]}), 409, "conflict",
                 BUSY.format(run_id(1)))
    assert snapshot(config) == before
