"""What the trash reaches (docs/api.md, "The trash"), through the API on both engines: a node in the
trash is left out of a folder's zip and of the inbox count; deleting for good, by hand or by the
periodic purge, takes the node's history with it; a restored version's searchable PDF is the very
file of the version it restores."""

from __future__ import annotations

import datetime as dt
import io
import zipfile

from dms.db.models import utcnow
from dms.domain import trash
from tests.harness import samples
from tests.harness.database import query_sql
from tests.harness.documents import make_folder, new_document, upload
from tests.harness.waiting import wait_processed


def uploaded(client, title, parent, name, data) -> str:
    document_id = new_document(client, title, parent)
    assert upload(client, document_id, name, data).status_code == 201
    assert wait_processed(client, document_id)[-1] == "succeeded"
    return document_id


def events_of(config, node_ids) -> int:
    marks = ",".join("?" * len(node_ids))
    return query_sql(config, f"SELECT count(*) FROM event WHERE node_id IN ({marks})",
                     *node_ids)[0][0]


def test_a_folder_zip_leaves_out_what_is_in_the_trash(alice):
    folder = make_folder(alice, "Mail", alice.home_id)
    below = make_folder(alice, "Old", folder)
    uploaded(alice, "Kept", folder, "kept.txt", samples.text("kept\n"))
    gone = uploaded(alice, "Gone", folder, "gone.txt", samples.text("gone\n"))
    uploaded(alice, "Deep", below, "deep.txt", samples.text("deep\n"))
    archive = zipfile.ZipFile(io.BytesIO(
        alice.get(f"/api/nodes/download/?node_ids={folder}").content))
    assert sorted(archive.namelist()) == ["Mail/", "Mail/Gone.txt", "Mail/Kept.txt", "Mail/Old/",
                                          "Mail/Old/Deep.txt"]
    for node_id in (gone, below):
        assert alice.delete(f"/api/nodes/{node_id}/").status_code == 204
    archive = zipfile.ZipFile(io.BytesIO(
        alice.get(f"/api/nodes/download/?node_ids={folder}").content))
    assert sorted(archive.namelist()) == ["Mail/", "Mail/Kept.txt"]
    assert archive.read("Mail/Kept.txt") == samples.text("kept\n")
    # Asked for by id, a node in the trash is as unknown as any.
    for node_ids in (gone, f"{folder},{gone}"):
        response = alice.get(f"/api/nodes/download/?node_ids={node_ids}")
        assert response.status_code == 404, response.text


def test_the_inbox_count_leaves_out_what_is_in_the_trash(alice):
    first = new_document(alice, "first", alice.inbox_id)
    new_document(alice, "second", alice.inbox_id)
    make_folder(alice, "Sorted", alice.inbox_id)
    assert alice.get("/api/nodes/inboxcount/").json() == {"data": {"count": 3}}
    assert alice.delete(f"/api/nodes/{first}/").status_code == 204
    assert alice.get("/api/nodes/inboxcount/").json() == {"data": {"count": 2}}
    assert alice.post(f"/api/trash/{first}/restore/").status_code == 200
    assert alice.get("/api/nodes/inboxcount/").json() == {"data": {"count": 3}}


def test_deleting_for_good_takes_the_history_along(alice, server, config):
    by_hand = make_folder(alice, "By hand", alice.home_id)
    by_hand_child = new_document(alice, "inside", by_hand)
    purged = make_folder(alice, "Purged", alice.home_id)
    purged_child = new_document(alice, "inside", purged)
    kept = make_folder(alice, "Kept", alice.home_id)
    for node_id in (by_hand, purged, kept):
        assert alice.delete(f"/api/nodes/{node_id}/").status_code == 204
    # created, and deleted for the roots
    assert events_of(config, [by_hand, by_hand_child, purged, purged_child, kept]) == 8
    assert alice.delete(f"/api/trash/{by_hand}/").status_code == 204
    assert events_of(config, [by_hand, by_hand_child]) == 0
    # The periodic purge, as if the deletion were past DMS_TRASH_DAYS (kept's stays: later).
    at = query_sql(config, "SELECT purge_at FROM trash_entry WHERE node_id = ?", purged)[0][0]
    assert trash.purge_expired(server.runtime.services,
                               dt.datetime.strptime(at, "%Y-%m-%d %H:%M:%S.%f")) == 1
    assert events_of(config, [purged, purged_child]) == 0
    assert events_of(config, [kept]) == 2
    assert trash.purge_expired(server.runtime.services, utcnow()) == 0


def test_a_restored_version_serves_the_same_searchable_pdf(alice):
    document_id = uploaded(alice, "scan", alice.home_id, "scan.png", samples.png("Hello again"))
    [first] = alice.get(f"/api/documents/{document_id}/").json()["data"]["attributes"][
        "versions"]
    assert first["searchable_pdf"] is True
    original = alice.get(f"/api/document-versions/{first['id']}/download/?searchable=1")
    assert original.status_code == 200 and original.content.startswith(b"%PDF")
    assert upload(alice, document_id, "note.txt", samples.text("replaced\n")).status_code == 201
    assert wait_processed(alice, document_id)[-1] == "succeeded"
    response = alice.post(f"/api/documents/{document_id}/versions/{first['id']}/restore/")
    assert response.status_code == 201, response.text
    third = response.json()["data"]["attributes"]["versions"][2]
    assert (third["number"], third["searchable_pdf"], third["searchable_pdf_size"]) == \
        (3, True, len(original.content))
    latest = alice.get(f"/api/documents/{document_id}/download/?searchable=1")
    by_version = alice.get(f"/api/document-versions/{third['id']}/download/?searchable=1")
    assert latest.content == by_version.content == original.content
