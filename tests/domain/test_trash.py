"""The trash (docs/api.md, "The trash"). Through the API as a user would: a deleted folder with what
is below it leaves every listing, read, download and search and comes back whole; a node in the
trash is answered as an unknown one; every route for its owner, another user and anonymous; many
clients at once; a backup. On the fast tier (the domain's functions, no server): restoring into
.home when the parent went too; deleting for good, emptying, the periodic purge, DMS_TRASH_DAYS=0;
a node in the trash cannot be changed; deleting its owner; a version restored without reading it
again, and the history of every change (with the queue's workers reading the files)."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import random
import threading
import time

import pytest

from dms.db.models import Node, TrashEntry, User, utcnow
from dms.domain import accounts, documents, history, listings, tags, trash, tree, uploads
from dms.ops import verify
from tests.harness import samples
from tests.harness.appserver import empty_target, served
from tests.harness.client import JSON, NOT_FOUND, VND, Client, assert_error
from tests.harness.database import query_sql, snapshot
from tests.harness.documents import new_document, stored_files, upload
from tests.harness.domaintier import (
    assert_refused,
    home_id,
    inbox_id,
    new_folder,
    new_user,
    read_document,
    upload_file,
    wait_read,
)
from tests.harness.domaintier import new_document as create_document
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


def test_a_node_in_the_trash_is_answered_as_an_unknown_one(alice, config):
    """One refusal of each kind through the API (the fast tier has them all): a change of a node in
    the trash is the 404 of an unknown id; a new node inside one, a 400 with its pointer."""
    bills = folder(alice, "Bills", alice.home_id)
    year = folder(alice, "2026", bills)
    assert alice.delete(f"/api/nodes/{bills}/").status_code == 204
    before = snapshot(config)
    assert_404(alice.patch(f"/api/nodes/{year}/", {"data": {"type": "folders", "id": year,
                                                            "attributes": {"title": "x"}}}))
    new = alice.post("/api/nodes/", {"data": {"type": "folders", "attributes": {"title": "x"},
                                              "relationships": {"parent": {"data": {
                                                  "type": "folders", "id": year}}}}})
    assert_error(new, 400, "does_not_exist", f"Invalid parent {year!r}: the folder does not exist.",
                 "/data/relationships/parent")
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


# -- the fast tier: the domain's functions on the test's own database, no server -----------------

@pytest.fixture
def shelf(services) -> dict:
    """alice's .home/Bills/2026/letter.pdf, uploaded (not read: no workers run), and alice."""
    alice = new_user("alice")
    bills = new_folder(services, alice, "Bills", home_id(alice))
    year = new_folder(services, alice, "2026", bills)
    document_id = create_document(services, alice, "letter.pdf", year)
    upload_file(services, alice, document_id, "letter.pdf", LETTER)
    return {"user": alice, "bills": bills, "year": year, "document": document_id}



def listed(user: User, folder_id: str) -> list[str]:
    """The titles of a folder's children, in listing order (GET /nodes/{id}/)."""
    return [row.title for row in listings.listing(user, folder_id)[1].fetch(0, 100)]


def trashed_ids(user: User) -> list[str]:
    """The ids of the user's trash, newest first (GET /trash/)."""
    return [row.id for row, _ in trash.trashed(user).fetch(0, 100)]


def test_restore_goes_to_home_when_the_parent_is_in_the_trash(services, shelf):
    alice = shelf["user"]
    trash.delete(services, alice, shelf["document"], Node.DOCUMENT)
    trash.delete(services, alice, shelf["year"], Node.FOLDER)
    assert trashed_ids(alice) == [shelf["year"], shelf["document"]]  # newest first
    restored = trash.restore(services, alice, shelf["document"])
    assert (restored.id, restored.parent_id) == (shelf["document"], home_id(alice))
    assert listed(alice, home_id(alice)) == ["Bills", "letter.pdf"]
    # The folder comes back, into its parent, without the document its own deletion did not take.
    assert trash.restore(services, alice, shelf["year"]).parent_id == shelf["bills"]
    assert trashed_ids(alice) == []
    assert listed(alice, shelf["year"]) == []


def test_deleting_for_good_and_emptying_remove_the_files(services, config, shelf):
    alice = shelf["user"]
    stored = [path.name for path in stored_files(config)]
    assert stored  # the letter (not read here: no searchable PDF beside it)
    other = create_document(services, alice, "note", inbox_id(alice))
    upload_file(services, alice, other, "note.txt", samples.text("a note\n"))
    for node_id in (shelf["bills"], other):
        trash.delete(services, alice, node_id)
    trash.purge(services, alice, shelf["bills"])
    assert trashed_ids(alice) == [other]
    assert query_sql(config, "SELECT count(*) FROM node WHERE id IN (?, ?, ?)",
                     shelf["bills"], shelf["year"], shelf["document"]) == [(0,)]
    remaining = [path.name for path in stored_files(config)]
    assert not set(stored) & set(remaining)
    assert trash.empty(services, alice) == 1
    assert trashed_ids(alice) == []
    assert query_sql(config, "SELECT count(*) FROM document_version") == [(0,)]
    assert stored_files(config) == []


def test_the_purge_deletes_what_is_past_its_time(services, config, shelf):
    alice, bob = shelf["user"], new_user("bob")
    kept = create_document(services, bob, "kept", home_id(bob))
    trash.delete(services, alice, shelf["bills"])
    trash.delete(services, bob, kept, Node.DOCUMENT)
    assert trash.purge_expired(services, utcnow() + dt.timedelta(days=29)) == 0
    assert trashed_ids(alice) == [shelf["bills"]]
    at = TrashEntry.get(TrashEntry.node == shelf["bills"]).purge_at
    assert trash.purge_expired(services, at) == 1  # bob deleted his later: his stays
    assert trashed_ids(alice) == []
    assert trashed_ids(bob) == [kept]
    assert query_sql(config, "SELECT count(*) FROM node WHERE id = ?", shelf["bills"]) == [(0,)]


@pytest.mark.config(trash_days=0)
def test_with_no_trash_days_a_delete_is_for_good_at_once(services, config, shelf):
    trash.delete(services, shelf["user"], shelf["bills"])
    assert trashed_ids(shelf["user"]) == []
    assert query_sql(config, "SELECT count(*) FROM node WHERE id = ?", shelf["document"]) == \
        [(0,)]
    assert stored_files(config) == []


def test_a_node_in_the_trash_cannot_be_changed_moved_into_uploaded_into_or_tagged(services, config,
                                                                                  shelf):
    alice, year, document_id = shelf["user"], shelf["year"], shelf["document"]
    trash.delete(services, alice, shelf["bills"])
    other = new_folder(services, alice, "Other", home_id(alice))
    depth = services.config.max_tree_depth
    refused = [
        lambda: tree.update_node(alice, year, Node.FOLDER, {"title": "x"}),
        lambda: tree.move_nodes(alice, [shelf["bills"]], other, depth),
        lambda: upload_file(services, alice, document_id, "again.pdf", LETTER),
        lambda: tags.change_node_tags(alice, document_id, ["paid"], "replace"),
        lambda: trash.delete(services, alice, year),
        lambda: tree.move_nodes(alice, [other], year, depth),  # into one
    ]
    for call in refused:
        assert_refused(config, call, "not_found", "Not found.", None)
    assert_refused(config, lambda: tree.create_node(
        alice, Node.FOLDER, {"title": "x"}, year, parent_field="/data/relationships/parent",
        default_lang="eng", max_depth=depth), "does_not_exist",
        f"Invalid parent {year!r}: the folder does not exist.", "/data/relationships/parent")
    assert stored_files(config) == [services.store.path(documents.versions(document_id)[0].id)]


def test_deleting_a_user_deletes_their_trash(services, config, root, shelf):
    alice = shelf["user"]
    trash.delete(services, alice, shelf["bills"])
    accounts.delete_user_by(services, root, alice.id)
    assert query_sql(config, "SELECT count(*) FROM trash_entry") == [(0,)]
    assert query_sql(config, "SELECT count(*) FROM node WHERE owner_id = ?", alice.id) == [(0,)]
    assert query_sql(config, "SELECT count(*) FROM event WHERE owner_id = ?", alice.id) == [(0,)]
    assert stored_files(config) == []


def test_versions_restore_reuses_the_text_without_reading_again(reading, config):
    services, alice = reading, new_user("alice")
    document_id = read_document(services, alice, "letter.pdf", "letter.pdf", LETTER,
                                home_id(alice))
    [first] = documents.versions(document_id)
    upload_file(services, alice, document_id, "other.txt", samples.text("replaced\n"))
    assert wait_read(document_id)[-1] == "succeeded"
    restored = documents.restore_version(services, alice, document_id, first.id)
    versions = documents.versions(document_id)
    assert (restored.ocr_status, restored.file_name, restored.page_count,
            [v.number for v in versions]) == ("succeeded", "letter.pdf", 2, [1, 2, 3])
    third = documents.reached_version(alice, versions[2].id)
    content = services.store.path(third.id).read_bytes()
    assert hashlib.sha256(content).hexdigest() == hashlib.sha256(LETTER).hexdigest()
    assert documents.latest_text(document_id) == \
        "Stadtwerke electricity invoice November\n\nTotal 42.17 EUR"
    rows = history.history_of(alice, document_id).fetch(0, 100)
    actions = [row.action for row in rows]
    # Two readings (the upload and the text file), none for the restored version.
    assert actions.count("processed") == 2 and actions[0] == "version_restored"
    assert rows[0].details == {"version": 3, "restored": 1, "file_name": "letter.pdf"}
    other = create_document(services, alice, "other", home_id(alice))
    assert_refused(config, lambda: documents.restore_version(services, alice, other, first.id),
                   "not_found", "Not found.", None)


def changes(user: User, node_id: str) -> list[tuple]:
    """(action, the actor's username, details) of the node's history, newest first, its ids
    checked to fall (GET /nodes/{id}/history/)."""
    rows = history.history_of(user, node_id).fetch(0, 100)
    assert [row.id for row in rows] == sorted((row.id for row in rows), reverse=True)
    return [(row.action, row.actor_username, row.details) for row in rows]


def test_history_records_every_change_newest_first_with_its_actor(reading, config):
    services, alice = reading, new_user("alice")
    home, inbox = home_id(alice), inbox_id(alice)
    first = new_folder(services, alice, "First", home)
    second = new_folder(services, alice, "Second", home)
    document_id = create_document(services, alice, "scan", first)
    upload_file(services, alice, document_id, "scan.pdf", LETTER)
    assert wait_read(document_id)[-1] == "succeeded"
    [version] = documents.versions(document_id)
    tree.update_node(alice, document_id, Node.DOCUMENT, {"title": "Invoice"}, Node.DOCUMENT)
    tree.move_nodes(alice, [document_id], second, services.config.max_tree_depth)
    assert tags.change_node_tags(alice, document_id, ["paid", "2026"], "replace") == \
        ["2026", "paid"]
    assert tags.change_node_tags(alice, document_id, ["2026"], "remove") == ["paid"]
    trash.delete(services, alice, second, Node.FOLDER)
    trash.restore(services, alice, second)
    documents.restore_version(services, alice, document_id, version.id)
    text = samples.text("a note\n")
    note = uploads.upload_to_inbox(services, alice, io.BytesIO(text), len(text), "note.txt").id

    me = "alice"
    assert changes(alice, document_id) == [
        ("version_restored", me, {"version": 2, "restored": 1, "file_name": "scan.pdf"}),
        ("untagged", me, {"tags": ["2026"]}),
        ("tagged", me, {"tags": ["2026", "paid"]}),
        ("moved", me, {"title": "Invoice", "from": {"id": first, "title": "First"},
                       "to": {"id": second, "title": "Second"}}),
        ("renamed", me, {"title": "Invoice", "previous": "scan"}),
        ("processed", None, {"status": "succeeded", "version": version.id, "pages": 2}),
        ("uploaded", me, {"version": 1, "file_name": "scan.pdf", "size": len(LETTER)}),
        ("created", me, {"title": "scan", "kind": "document",
                         "parent": {"id": first, "title": "First"}}),
    ]
    assert changes(alice, second) == [
        ("restored", me, {"title": "Second", "parent": {"id": home, "title": ".home"}}),
        ("deleted", me, {"title": "Second", "parent": {"id": home, "title": ".home"}}),
        ("created", me, {"title": "Second", "kind": "folder",
                         "parent": {"id": home, "title": ".home"}}),
    ]
    assert wait_read(note)[-1] == "succeeded"
    [note_version] = documents.versions(note)
    assert changes(alice, note) == [("processed", None, {
        "status": "succeeded", "version": note_version.id, "pages": 1}), ("imported", me, {
        "source": "api", "title": "note.txt", "file_name": "note.txt", "size": 7,
        "parent": {"id": inbox, "title": ".inbox"}})]
    # Never a document's text.
    rows = query_sql(config, "SELECT details FROM event")
    assert not any("Stadtwerke" in details or "a note" in details for (details,) in rows)
