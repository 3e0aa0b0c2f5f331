"""The trash (docs/api.md, "The trash"), through the API as a user would: a deleted folder with what
is below it leaves every listing, read, download and search and comes back whole; restoring into
.home when the parent went too; deleting for good, emptying, the periodic purge, DMS_TRASH_DAYS=0; a
node in the trash cannot be changed; every route for its owner, another user and anonymous."""

from __future__ import annotations

import datetime as dt
import hashlib
import random
import threading
import time

import pytest

from dms.domain import trash
from dms.ops import verify
from tests.harness import samples
from tests.harness.appserver import empty_target, served
from tests.harness.client import JSON, NOT_FOUND, VND, Client
from tests.harness.database import query_sql, snapshot
from tests.harness.documents import new_document, upload
from tests.harness.processes import config_args, dms
from tests.harness.waiting import wait_indexed, wait_processed

LETTER = samples.pdf(["Stadtwerke electricity invoice November", "Total 42.17 EUR"])


def assert_404(response) -> None:
    """Exactly an unknown id's answer."""
    assert (response.status_code, response.headers["Content-Type"], response.json()) == \
        (404, VND, NOT_FOUND), response.text


def folder(client, title, parent):
    body = {"data": {"type": "folders", "attributes": {"title": title},
                     "relationships": {"parent": {"data": {"type": "folders", "id": parent}}}}}
    response = client.post("/api/nodes/", body)
    assert response.status_code == 201, response.text
    return response.json()["data"]["id"]


def titles(client, folder_id) -> list[str]:
    listing = client.get(f"/api/nodes/{folder_id}/?page[size]=100").json()["data"]
    return [node["attributes"]["title"] for node in listing]


def search(client, config, text) -> list[str]:
    wait_indexed(config)
    return [hit["title"] for hit in client.get("/api/search/", params={"q": text}).json()]


@pytest.fixture
def papers(alice, config):
    """.home/Bills/2026/letter.pdf, read."""
    bills = folder(alice, "Bills", alice.home_id)
    year = folder(alice, "2026", bills)
    document_id = new_document(alice, "letter.pdf", year)
    assert upload(alice, document_id, "letter.pdf", LETTER).status_code == 201
    assert wait_processed(alice, document_id)[-1] == "succeeded"
    return {"bills": bills, "year": year, "document": document_id}


def test_a_deleted_folder_leaves_everything_and_comes_back_whole(alice, config, papers):
    download = alice.get(f"/api/documents/{papers['document']}/download/").content
    assert search(alice, config, "stadtwerke") == ["letter.pdf"]

    response = alice.delete(f"/api/nodes/{papers['bills']}/")
    assert response.status_code == 204
    assert titles(alice, alice.home_id) == []
    for path in (f"/api/nodes/{papers['bills']}/", f"/api/folders/{papers['year']}/",
                 f"/api/documents/{papers['document']}/",
                 f"/api/documents/{papers['document']}/download/",
                 f"/api/nodes/{papers['year']}/"):
        assert_404(alice.get(path))
    assert alice.get("/api/folders/?page[size]=100").json()["meta"]["pagination"]["count"] == 2
    assert alice.get("/api/documents/").json()["data"] == []
    assert search(alice, config, "stadtwerke") == []
    assert alice.get("/api/search/").json() == []  # the recent documents, too

    [entry] = alice.get("/api/trash/").json()["data"]
    attributes = entry["attributes"]
    assert (entry["id"], entry["type"], attributes["title"], attributes["original_parent"]) == \
        (papers["bills"], "folders", "Bills", {"id": alice.home_id, "title": ".home"})
    deleted = dt.datetime.fromisoformat(attributes["deleted_at"].rstrip("Z"))
    purge = dt.datetime.fromisoformat(attributes["purge_at"].rstrip("Z"))
    assert purge - deleted == dt.timedelta(days=30)

    restored = alice.post(f"/api/trash/{papers['bills']}/restore/")
    assert restored.status_code == 200, restored.text
    assert restored.json()["data"]["attributes"]["title"] == "Bills"
    assert alice.get("/api/trash/").json()["data"] == []
    assert titles(alice, alice.home_id) == ["Bills"]
    assert titles(alice, papers["year"]) == ["letter.pdf"]
    assert alice.get(f"/api/documents/{papers['document']}/download/").content == download
    assert search(alice, config, "stadtwerke") == ["letter.pdf"]


def test_restore_goes_to_home_when_the_parent_is_in_the_trash(alice, papers):
    assert alice.delete(f"/api/documents/{papers['document']}/").status_code == 204
    assert alice.delete(f"/api/folders/{papers['year']}/").status_code == 204
    trashed = [node["id"] for node in alice.get("/api/trash/").json()["data"]]
    assert trashed == [papers["year"], papers["document"]]  # newest first
    restored = alice.post(f"/api/trash/{papers['document']}/restore/").json()["data"]
    assert restored["relationships"]["parent"]["data"]["id"] == alice.home_id
    assert titles(alice, alice.home_id) == ["Bills", "letter.pdf"]
    # The folder comes back without the document its own deletion did not take.
    assert alice.post(f"/api/trash/{papers['year']}/restore/").status_code == 200
    assert titles(alice, papers["year"]) == []


def test_deleting_for_good_and_emptying_remove_the_files(alice, config, papers):
    stored = sorted(p.name for p in (config.data_dir / "files").rglob("*") if p.is_file())
    assert stored  # the letter and its searchable PDF (or the letter alone)
    other = new_document(alice, "note", alice.inbox_id)
    assert upload(alice, other, "note.txt", samples.text("a note\n")).status_code == 201
    for node_id in (papers["bills"], other):
        assert alice.delete(f"/api/nodes/{node_id}/").status_code == 204
    assert alice.delete(f"/api/trash/{papers['bills']}/").status_code == 204
    assert [node["id"] for node in alice.get("/api/trash/").json()["data"]] == [other]
    assert query_sql(config, "SELECT count(*) FROM node WHERE id IN (?, ?, ?)",
                     papers["bills"], papers["year"], papers["document"]) == [(0,)]
    remaining = sorted(p.name for p in (config.data_dir / "files").rglob("*") if p.is_file())
    assert not set(stored) & set(remaining)
    assert alice.delete("/api/trash/").status_code == 204
    assert alice.get("/api/trash/").json()["data"] == []
    assert query_sql(config, "SELECT count(*) FROM document_version") == [(0,)]


def test_the_purge_deletes_what_is_past_its_time(alice, bob, server, config, papers):
    kept = new_document(bob, "kept", bob.home_id)
    assert alice.delete(f"/api/nodes/{papers['bills']}/").status_code == 204
    assert bob.delete(f"/api/documents/{kept}/").status_code == 204
    services = server.runtime.services
    assert trash.purge_expired(services, dt.datetime.now(dt.UTC).replace(tzinfo=None)
                               + dt.timedelta(days=29)) == 0
    assert len(alice.get("/api/trash/").json()["data"]) == 1
    alice_purge = query_sql(config, "SELECT purge_at FROM trash_entry WHERE node_id = ?",
                            papers["bills"])[0][0]
    at = dt.datetime.strptime(alice_purge, "%Y-%m-%d %H:%M:%S.%f")
    assert trash.purge_expired(services, at) == 1  # bob deleted his later: his stays
    assert alice.get("/api/trash/").json()["data"] == []
    assert [node["id"] for node in bob.get("/api/trash/").json()["data"]] == [kept]
    assert query_sql(config, "SELECT count(*) FROM node WHERE id = ?", papers["bills"]) == [(0,)]


@pytest.mark.config(trash_days=0)
def test_with_no_trash_days_a_delete_is_for_good_at_once(alice, config, papers):
    assert alice.delete(f"/api/nodes/{papers['bills']}/").status_code == 204
    assert alice.get("/api/trash/").json()["data"] == []
    assert query_sql(config, "SELECT count(*) FROM node WHERE id = ?", papers["document"]) == \
        [(0,)]
    assert sorted(p for p in (config.data_dir / "files").rglob("*") if p.is_file()) == []


def test_a_node_in_the_trash_cannot_be_changed_moved_into_uploaded_into_or_tagged(alice, config,
                                                                                  papers):
    assert alice.delete(f"/api/nodes/{papers['bills']}/").status_code == 204
    other = folder(alice, "Other", alice.home_id)
    before = snapshot(config)
    refused = [
        alice.patch(f"/api/nodes/{papers['year']}/",
                    {"data": {"type": "folders", "id": papers["year"],
                              "attributes": {"title": "x"}}}),
        alice.post("/api/nodes/move/", {"source_parent": {"id": alice.home_id},
                                        "target_parent": {"id": other},
                                        "nodes": [{"id": papers["bills"]}]}, media=JSON),
        upload(alice, papers["document"], "again.pdf", LETTER),
        alice.post(f"/api/nodes/{papers['document']}/tags/", {"tags": ["paid"]}, media=JSON),
        alice.delete(f"/api/nodes/{papers['year']}/"),
    ]
    for response in refused:
        assert response.status_code == 404, response.text
    into = alice.post("/api/nodes/move/", {"source_parent": {"id": alice.home_id},
                                           "target_parent": {"id": papers["year"]},
                                           "nodes": [{"id": other}]}, media=JSON)
    assert into.status_code == 404, into.text
    new = alice.post("/api/nodes/", {"data": {"type": "folders", "attributes": {"title": "x"},
                                              "relationships": {"parent": {"data": {
                                                  "type": "folders", "id": papers["year"]}}}}})
    assert new.status_code == 400 and new.json()["errors"][0]["code"] == "does_not_exist"
    assert snapshot(config) == before


def test_routes_for_the_owner_another_user_and_anonymous(alice, bob, anon, config, papers):
    assert alice.delete(f"/api/nodes/{papers['bills']}/").status_code == 204
    before = snapshot(config)
    assert bob.get("/api/trash/").json()["data"] == []
    for method, path in (("post", f"/api/trash/{papers['bills']}/restore/"),
                         ("delete", f"/api/trash/{papers['bills']}/"),
                         ("get", f"/api/nodes/{papers['bills']}/history/")):
        assert_404(getattr(bob, method)(path))
        response = getattr(anon, method)(path)
        assert (response.status_code, response.json()["errors"][0]["code"]) == \
            (401, "not_authenticated")
    assert bob.delete("/api/trash/").status_code == 204  # bob's own, empty: alice's stay
    for response in (anon.get("/api/trash/"), anon.delete("/api/trash/")):
        assert response.status_code == 401
    assert snapshot(config) == before
    assert_404(alice.post("/api/trash/no-such-id/restore/"))
    assert_404(alice.post(f"/api/trash/{papers['year']}/restore/"))
    assert alice.get("/api/trash/").headers["Content-Type"] == VND


def test_deleting_a_user_deletes_their_trash(admin, alice, config, papers):
    assert alice.delete(f"/api/nodes/{papers['bills']}/").status_code == 204
    assert admin.delete(f"/api/users/{alice.user_id}/").status_code == 204
    assert query_sql(config, "SELECT count(*) FROM trash_entry") == [(0,)]
    assert query_sql(config, "SELECT count(*) FROM node WHERE owner_id = ?", alice.user_id) == \
        [(0,)]
    assert query_sql(config, "SELECT count(*) FROM event WHERE owner_id = ?", alice.user_id) == \
        [(0,)]
    assert sorted(p for p in (config.data_dir / "files").rglob("*") if p.is_file()) == []


def test_versions_restore_reuses_the_text_without_reading_again(alice, config, papers):
    document_id = papers["document"]
    first = alice.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]
    assert upload(alice, document_id, "other.txt", samples.text("replaced\n")).status_code == 201
    assert wait_processed(alice, document_id)[-1] == "succeeded"
    old = first["versions"][0]["id"]
    response = alice.post(f"/api/documents/{document_id}/versions/{old}/restore/")
    assert response.status_code == 201, response.text
    attributes = response.json()["data"]["attributes"]
    assert (attributes["ocr_status"], attributes["file_name"], attributes["page_count"],
            [v["number"] for v in attributes["versions"]]) == ("succeeded", "letter.pdf", 2,
                                                             [1, 2, 3])
    third = attributes["versions"][2]
    content = alice.get(third["download_url"].split(alice.base_url, 1)[-1]).content
    assert hashlib.sha256(content).hexdigest() == hashlib.sha256(LETTER).hexdigest()
    assert alice.get(f"/api/documents/{document_id}/ocr-text").json() == \
        {"text": "Stadtwerke electricity invoice November\n\nTotal 42.17 EUR"}
    history = alice.get(f"/api/nodes/{document_id}/history/").json()["data"]
    actions = [event["attributes"]["action"] for event in history]
    # Two readings (the upload and the text file), none for the restored version.
    assert actions.count("processed") == 2 and actions[0] == "version_restored"
    assert history[0]["attributes"]["details"] == {"version": 3, "restored": 1,
                                                   "file_name": "letter.pdf"}
    other = new_document(alice, "other")
    assert_404(alice.post(f"/api/documents/{other}/versions/{old}/restore/"))


def test_history_records_every_change_newest_first_with_its_actor(alice, config):
    inbox = alice.inbox_id
    first = folder(alice, "First", alice.home_id)
    second = folder(alice, "Second", alice.home_id)
    document_id = new_document(alice, "scan", first)
    assert upload(alice, document_id, "scan.pdf", LETTER).status_code == 201
    assert wait_processed(alice, document_id)[-1] == "succeeded"
    [version] = alice.get(f"/api/documents/{document_id}/").json()["data"]["attributes"][
        "versions"]
    assert alice.patch(f"/api/documents/{document_id}/", {"data": {
        "type": "documents", "id": document_id, "attributes": {"title": "Invoice"}}}
    ).status_code == 200
    assert alice.post("/api/nodes/move/", {"source_parent": {"id": first},
                                           "target_parent": {"id": second},
                                           "nodes": [{"id": document_id}]},
                      media=JSON).status_code == 200
    assert alice.post(f"/api/nodes/{document_id}/tags/", {"tags": ["paid", "2026"]},
                      media=JSON).status_code == 201
    assert alice.request("DELETE", f"/api/nodes/{document_id}/tags/",
                         json_body={"tags": ["2026"]}, media=JSON).status_code == 204
    assert alice.delete(f"/api/folders/{second}/").status_code == 204
    assert alice.post(f"/api/trash/{second}/restore/").status_code == 200
    assert alice.post(f"/api/documents/{document_id}/versions/{version['id']}/restore/"
                      ).status_code == 201
    legacy = alice.put("/api/document/upload/note.txt", data=samples.text("a note\n"))
    assert legacy.status_code == 201, legacy.text

    def events_of(node_id):
        data = alice.get(f"/api/nodes/{node_id}/history/?page[size]=100").json()["data"]
        assert [int(event["id"]) for event in data] == \
            sorted((int(event["id"]) for event in data), reverse=True)
        return [(event["attributes"]["action"], (event["attributes"]["actor"] or {}).get(
            "username"), event["attributes"]["details"]) for event in data]

    me = "alice"
    assert events_of(document_id) == [
        ("version_restored", me, {"version": 2, "restored": 1, "file_name": "scan.pdf"}),
        ("untagged", me, {"tags": ["2026"]}),
        ("tagged", me, {"tags": ["2026", "paid"]}),
        ("moved", me, {"title": "Invoice", "from": {"id": first, "title": "First"},
                       "to": {"id": second, "title": "Second"}}),
        ("renamed", me, {"title": "Invoice", "previous": "scan"}),
        ("processed", None, {"status": "succeeded", "version": version["id"], "pages": 2}),
        ("uploaded", me, {"version": 1, "file_name": "scan.pdf", "size": len(LETTER)}),
        ("created", me, {"title": "scan", "kind": "document",
                         "parent": {"id": first, "title": "First"}}),
    ]
    assert events_of(second) == [
        ("restored", me, {"title": "Second", "parent": {"id": alice.home_id, "title": ".home"}}),
        ("deleted", me, {"title": "Second", "parent": {"id": alice.home_id, "title": ".home"}}),
        ("created", me, {"title": "Second", "kind": "folder",
                         "parent": {"id": alice.home_id, "title": ".home"}}),
    ]
    note = legacy.json()["id"]
    assert wait_processed(alice, note)[-1] == "succeeded"
    note_version = alice.get(f"/api/documents/{note}/").json()["data"]["attributes"][
        "versions"][0]["id"]
    assert events_of(note) == [("processed", None, {
        "status": "succeeded", "version": note_version, "pages": 1}), ("imported", me, {
        "source": "api", "title": "note.txt", "file_name": "note.txt", "size": 7,
        "parent": {"id": inbox, "title": ".inbox"}})]
    # Never a document's text.
    rows = query_sql(config, "SELECT details FROM event")
    assert not any("Stadtwerke" in details or "a note" in details for (details,) in rows)


def test_deletes_restores_and_moves_of_the_same_nodes_at_once_keep_a_tree(alice, config):
    """Eight clients deleting, restoring and moving five nested folders at random for a while:
    afterwards `dms verify` finds nothing (no loop, no mark without its deletion), and no node is
    both in the trash and reachable through listings."""
    folders = [folder(alice, f"F{i}", alice.home_id) for i in range(5)]
    for child, parent in zip(folders[1:], folders, strict=False):  # F0/F1/F2/F3/F4
        alice.post("/api/nodes/move/", {"source_parent": {"id": alice.home_id},
                                        "target_parent": {"id": parent},
                                        "nodes": [{"id": child}]}, media=JSON)
    unexpected: list[str] = []
    deadline = time.monotonic() + 6

    def client_loop(seed):
        client, rnd = Client(alice.base_url, alice.token), random.Random(seed)
        while time.monotonic() < deadline:
            node, target = rnd.sample(folders, 2)
            roll = rnd.random()
            if roll < 0.3:
                response = client.delete(f"/api/folders/{node}/")
                expected = (204, 404)
            elif roll < 0.6:
                response = client.post(f"/api/trash/{node}/restore/")
                expected = (200, 404)
            else:
                response = client.post("/api/nodes/move/", {
                    "source_parent": {"id": alice.home_id}, "target_parent": {"id": target},
                    "nodes": [{"id": node}]}, media=JSON)
                expected = (200, 400, 404)
            if response.status_code not in expected:
                unexpected.append(f"{response.request.method} {response.status_code} "
                                  f"{response.text[:200]}")

    threads = [threading.Thread(target=client_loop, args=(seed,)) for seed in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert unexpected == []
    report = verify.run(config.data_dir, files_dir=config.files_path)
    assert report.ok, report.lines()
    reachable, queue = set(), [alice.home_id]
    while queue:
        for node in alice.get(f"/api/nodes/{queue.pop()}/?page[size]=100").json()["data"]:
            reachable.add(node["id"])
            queue.append(node["id"])
    trashed = {row[0] for row in query_sql(
        config, "SELECT id FROM node WHERE trash_id IS NOT NULL")}
    assert reachable.isdisjoint(trashed)
    assert reachable | trashed == set(folders)


def test_a_backup_keeps_the_trash_and_the_history(alice, server, config, papers, tmp_path,
                                                  request):
    assert alice.delete(f"/api/nodes/{papers['bills']}/").status_code == 204
    trashed = alice.get("/api/trash/").json()["data"]
    history = alice.get(f"/api/nodes/{papers['document']}/history/").json()["data"]
    made = dms("backup", tmp_path / "backup.zip", *config_args(config))
    assert made.returncode == 0, made.stderr
    target = empty_target(config, request, tmp_path / "restored")
    restored = dms("restore", tmp_path / "backup.zip", *config_args(target))
    assert restored.returncode == 0, restored.stderr
    server, thread = served(target, replacing=server)
    try:
        again = Client(server.url).login("alice", "user-password-1")
        assert again.get("/api/trash/").json()["data"] == trashed
        found = None
        for _ in range(300):  # a restored data dir builds its search index first (503 till then)
            found = again.get("/api/search/", params={"q": "stadtwerke"})
            if found.status_code != 503:
                break
            time.sleep(0.1)
        assert (found.status_code, found.json()) == (200, [])
        assert again.get(f"/api/nodes/{papers['document']}/history/").json()["data"] == history
        assert again.post(f"/api/trash/{papers['bills']}/restore/").status_code == 200
        assert titles(again, papers["year"]) == ["letter.pdf"]
        wait_indexed(target)
        assert [hit["title"] for hit in again.get("/api/search/", params={
            "q": "stadtwerke"}).json()] == ["letter.pdf"]
    finally:
        server.stop()
        thread.join(15)
