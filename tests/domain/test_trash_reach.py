"""What the trash reaches (docs/api.md, "The trash"), on the fast tier (the domain's functions, no
server) on both engines: a node in the trash is left out of a folder's archive and of the inbox
count; deleting for good, by hand or by the periodic purge, takes the node's history with it; a
restored version's searchable PDF is the very file of the version it restores (with the queue's
workers reading the scan)."""

from __future__ import annotations

import io
import zipfile

from dms.db.models import Node, TrashEntry, User, utcnow
from dms.domain import archives, documents, listings, trash, tree
from dms.domain.services import Services
from tests.harness import samples
from tests.harness.database import query_sql
from tests.harness.domaintier import (
    assert_refused,
    home_id,
    inbox_id,
    new_document,
    new_folder,
    new_user,
    read_document,
    upload_file,
    wait_read,
)


def with_file(services: Services, user: User, title: str, parent_id: str, name: str,
              data: bytes) -> str:
    """A document with its first file (not read: no workers run); its id."""
    document_id = new_document(services, user, title, parent_id)
    upload_file(services, user, document_id, name, data)
    return document_id


def zip_of(services: Services, user: User, node_ids: list[str]) -> zipfile.ZipFile:
    """The zip of GET /nodes/download/?node_ids=...: the caller's nodes (404 for any other),
    each folder with what is below it."""
    nodes = tree.reached_nodes(user, node_ids)
    members = archives.entries([node.id for node in nodes], services.store, False,
                               services.config.max_tree_depth)
    return zipfile.ZipFile(io.BytesIO(b"".join(archives.stream_zip(members))))


def events_of(config, node_ids) -> int:
    marks = ",".join("?" * len(node_ids))
    return query_sql(config, f"SELECT count(*) FROM event WHERE node_id IN ({marks})",
                     *node_ids)[0][0]


def test_a_folder_zip_leaves_out_what_is_in_the_trash(services, config):
    alice = new_user("alice")
    folder = new_folder(services, alice, "Mail", home_id(alice))
    below = new_folder(services, alice, "Old", folder)
    with_file(services, alice, "Kept", folder, "kept.txt", samples.text("kept\n"))
    gone = with_file(services, alice, "Gone", folder, "gone.txt", samples.text("gone\n"))
    with_file(services, alice, "Deep", below, "deep.txt", samples.text("deep\n"))
    assert sorted(zip_of(services, alice, [folder]).namelist()) == [
        "Mail/", "Mail/Gone.txt", "Mail/Kept.txt", "Mail/Old/", "Mail/Old/Deep.txt"]
    for node_id in (gone, below):
        trash.delete(services, alice, node_id)
    archive = zip_of(services, alice, [folder])
    assert sorted(archive.namelist()) == ["Mail/", "Mail/Kept.txt"]
    assert archive.read("Mail/Kept.txt") == samples.text("kept\n")
    # Asked for by id, a node in the trash is as unknown as any.
    for node_ids in ([gone], [folder, gone]):
        assert_refused(config, lambda ids=node_ids: zip_of(services, alice, ids), "not_found",
                       "Not found.", None)


def test_the_inbox_count_leaves_out_what_is_in_the_trash(services):
    alice = new_user("alice")
    first = new_document(services, alice, "first", inbox_id(alice))
    new_document(services, alice, "second", inbox_id(alice))
    new_folder(services, alice, "Sorted", inbox_id(alice))
    assert listings.inbox_count(alice) == 3
    trash.delete(services, alice, first)
    assert listings.inbox_count(alice) == 2
    trash.restore(services, alice, first)
    assert listings.inbox_count(alice) == 3


def test_deleting_for_good_takes_the_history_along(services, config):
    alice = new_user("alice")
    by_hand = new_folder(services, alice, "By hand", home_id(alice))
    by_hand_child = new_document(services, alice, "inside", by_hand)
    purged = new_folder(services, alice, "Purged", home_id(alice))
    purged_child = new_document(services, alice, "inside", purged)
    kept = new_folder(services, alice, "Kept", home_id(alice))
    for node_id in (by_hand, purged, kept):
        trash.delete(services, alice, node_id)
    # created, and deleted for the roots
    assert events_of(config, [by_hand, by_hand_child, purged, purged_child, kept]) == 8
    trash.purge(services, alice, by_hand)
    assert events_of(config, [by_hand, by_hand_child]) == 0
    # The periodic purge, as if the deletion were past DMS_TRASH_DAYS (kept's stays: later).
    at = TrashEntry.get(TrashEntry.node == purged).purge_at
    assert trash.purge_expired(services, at) == 1
    assert events_of(config, [purged, purged_child]) == 0
    assert events_of(config, [kept]) == 2
    assert trash.purge_expired(services, utcnow()) == 0


def test_a_restored_version_serves_the_same_searchable_pdf(reading):
    services, alice = reading, new_user("alice")
    document_id = read_document(services, alice, "scan", "scan.png", samples.png("Hello again"),
                                home_id(alice))
    [first] = documents.versions(document_id)
    assert first.searchable_size is not None
    original = services.store.searchable_path(first.id).read_bytes()
    assert original.startswith(b"%PDF") and len(original) == first.searchable_size
    upload_file(services, alice, document_id, "note.txt", samples.text("replaced\n"))
    assert wait_read(document_id)[-1] == "succeeded"
    restored = documents.restore_version(services, alice, document_id, first.id)
    assert (restored.kind, restored.ocr_status) == (Node.DOCUMENT, "succeeded")
    third = documents.versions(document_id)[2]
    assert (third.number, third.searchable_size) == (3, len(original))
    # What GET /documents/{id}/download/?searchable=1 and the version's own download serve.
    latest = documents.latest_file(alice, document_id)
    by_version = documents.reached_version(alice, third.id)
    assert latest.id == by_version.id == third.id
    assert services.store.searchable_path(latest.id).read_bytes() == \
        services.store.searchable_path(by_version.id).read_bytes() == original
    assert third.searchable_sha256 == first.searchable_sha256
