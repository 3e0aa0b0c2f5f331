"""The trash (docs/api.md, "The trash"): nothing a user deletes is gone at once.

Deleting a node marks it and everything live below it with its id (`node.trash_id`) and writes a
`trash_entry` (when, until when, and the parent it had), in one write transaction with its
`deleted` event: from then on it behaves as if it did not exist (dms.domain.tree reads live nodes
only), it leaves search (the outbox and PostgreSQL's triggers, migration 0013), and its reading
stops. Restoring clears exactly that mark — a folder deleted earlier on its own inside it stays in
the trash — and puts it back under its parent, or in `.home` when that parent is itself in the
trash. Deleting for good removes the rows in one transaction and the files after the commit (a
crash in between leaves files the sweep removes); the periodic purge does that for entries past
their `purge_at` (DMS_TRASH_DAYS after deletion; 0 deletes at once, as before the trash).

Concurrency: every change here runs in the owner's write scope, as moves and creations do, so a
delete, a restore and a move of the same nodes are serialised and the tree stays a tree.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from dms.db import database, events, owner_scope, with_space_reserve, write_transaction
from dms.db.models import Node, OcrStatus, TrashEntry, User, insert_row, update_rows, utcnow
from dms.domain import listings, tree
from dms.domain.access.rule import Reached, changing
from dms.domain.rules import store as rules
from dms.errors import Forbidden, NotFound
from dms.files.storage import Blob, versions_of

if TYPE_CHECKING:
    from dms.domain.services import Services

log = logging.getLogger("dms.trash")

PURGE_BATCH = 100  # entries deleted for good per write transaction
PURGE_SECONDS = 60  # a purge run stops after this long; the rest waits for the next period
EMPTY_LIMIT = 100_000  # entries one DELETE /trash/ removes (in batches); the rest stays


def delete(services: Services, user: User, node_id: str, kind: str | None = None) -> None:
    """DELETE of a node (api.md, "Deleting"): into the caller's trash with everything below it, or,
    with DMS_TRASH_DAYS=0, gone for good at once."""
    def remove() -> Removed:
        with changing(user, node_id, kind) as reached:
            return remove_in_transaction(services, user, _deletable(reached))
    # On a full disk too: deleting is how space is made (into the trash, then out of it).
    with_space_reserve(remove).finish(services)


class Removed(NamedTuple):
    """What a removal leaves to do once it has committed."""
    stopped: list[str]  # versions whose reading stops (in the trash: resumed if restored)
    gone: list[Blob]  # files of versions deleted for good: removed

    def finish(self, services: Services) -> None:
        services.jobs.cancel(self.stopped)
        remove_files(services, self.gone)


def remove_in_transaction(services: Services, user: User, node: Node) -> Removed:
    """Put the live, non-special `node` in its owner's trash with its subtree (or, with
    DMS_TRASH_DAYS=0, delete it for good), with its `deleted` event by `user`, inside the caller's
    write transaction (in the owner's scope). Also for the documents a page operation empties or
    replaces (dms.domain.pages.commit)."""
    owner_id = node.owner_id
    if services.config.trash_days == 0:
        rules.disable_for_deleted(owner_id, f"{tree.SUBTREE} SELECT id FROM below", (node.id,))
        gone = tree.delete_subtree_rows(node.id)
        return Removed(versions_of(gone), gone)
    now = utcnow()
    parent = Node.get_by_id(node.parent_id)
    tree.trash_subtree(node.id)
    # Rules that move into a folder now in the trash stop, saying why (api.md, "Rules").
    rules.disable_for_deleted(owner_id, "SELECT id FROM node WHERE trash_id = ?", (node.id,))
    insert_row(TrashEntry, dict(node=node.id, owner=owner_id, deleted_at=now,
                                purge_at=now + dt.timedelta(days=services.config.trash_days),
                                original_parent_id=parent.id, original_parent_title=parent.title))
    events.record(owner_id, node.id, events.DELETED, user.id, title=node.title,
                  parent={"id": parent.id, "title": parent.title})
    return Removed(tree.subtree_version_ids(node.id), [])


def _deletable(reached: Reached) -> Node:
    """The node, unless it is a special folder or the folder or document someone shared with the
    caller (an editor deletes what is inside it; the owner decides about the whole)."""
    node = reached.node
    if node.is_special:
        raise Forbidden(f"The special folder {node.title} cannot be deleted.")
    if not reached.inside:
        raise Forbidden(f"{node.title} is shared with you; only its owner can delete it.")
    return node


def trashed(user: User) -> TrashListing:
    """The roots of the caller's deletions, newest first (GET /trash/), as NodeListing rows with
    the entry's columns after the node's."""
    return TrashListing(user.id)


class TrashListing(listings.NodeListing):
    def __init__(self, owner_id: str):
        super().__init__("t.owner_id = ?", (owner_id,), "t.deleted_at DESC, n.id")

    def count(self) -> int:
        return cast(int, database.execute_sql(
            "SELECT count(*) FROM trash_entry AS t WHERE t.owner_id = ?",
            self.params).fetchone()[0])

    # Each row with its trash entry's columns: the trash's resources show both.
    def fetch(  # type: ignore[override]
            self, offset: int, limit: int) -> list[tuple[listings.NodeRow, tuple[Any, ...]]]:
        rows = database.execute_sql(
            f"SELECT {listings.row_columns('n.')}, t.deleted_at, t.purge_at, t.original_parent_id, "
            f"t.original_parent_title FROM trash_entry AS t JOIN node AS n ON n.id = t.node_id "
            f"WHERE {self.where} ORDER BY {self.order} LIMIT ? OFFSET ?",
            (*self.params, limit, offset)).fetchall()
        width = len(listings.NodeRow._fields)
        return [(listings.NodeRow._make(row[:width]), row[width:]) for row in rows]


def _entry(user: User, node_id: str) -> tuple[Node, TrashEntry]:
    """The caller's deletion rooted at `node_id`, else the 404 of an unknown id."""
    entry = TrashEntry.get_or_none(TrashEntry.node == node_id, TrashEntry.owner == user.id)
    if entry is None:
        raise NotFound()
    return Node.get_by_id(node_id), entry


def restore(services: Services, user: User, node_id: str) -> Node:
    """POST /trash/{id}/restore/: the deletion undone, whole, under its old parent or in .home."""
    with write_transaction(owner_scope(user.id)):
        node, entry = _entry(user, node_id)
        parent = Node.get_or_none(Node.id == node.parent_id)
        if parent is None or parent.trash_id is not None:
            parent = tree.special_folder(user, Node.HOME)
            update_rows(Node, [node.id], {"parent": parent.id})
            node.parent_id = parent.id
        restored = [row[0] for row in database.execute_sql(
            "SELECT id FROM node WHERE trash_id = ?", (node.id,))]
        database.execute_sql("UPDATE node SET trash_id = NULL WHERE trash_id = ?", (node.id,))
        TrashEntry.delete().where(TrashEntry.node == node.id).execute()
        events.record(user.id, node.id, events.RESTORED, user.id, title=node.title,
                      parent={"id": parent.id, "title": parent.title})
        node.trash_id = None
    for version_id in _unread_versions(restored):  # their reading stopped with the deletion
        services.jobs.enqueue(version_id)
    return node


def _unread_versions(node_ids: list[str]) -> list[str]:
    """The latest versions of those documents that are still to be read."""
    found = []
    for start in range(0, len(node_ids), 500):
        part = node_ids[start:start + 500]
        found += [row[0] for row in database.execute_sql(
            "SELECT v.id FROM node AS n JOIN document_version AS v ON v.document_id = n.id "
            f"WHERE n.id IN ({','.join('?' * len(part))}) AND n.ocr_status IN (?, ?) "
            "AND v.number = (SELECT max(number) FROM document_version WHERE document_id = n.id)",
            (*part, OcrStatus.RECEIVED, OcrStatus.STARTED))]
    return found


def purge(services: Services, user: User, node_id: str) -> None:
    """DELETE /trash/{id}/: that deletion, gone for good, files included."""
    def delete_rows() -> list[Blob]:
        with write_transaction(owner_scope(user.id)):
            node, _ = _entry(user, node_id)
            return tree.delete_subtree_rows(node.id)
    remove_files(services, with_space_reserve(delete_rows))


def empty(services: Services, user: User) -> int:
    """DELETE /trash/: every deletion of the caller's, gone for good, PURGE_BATCH per write
    transaction (other writers get their turn in between); the number of entries removed."""
    removed = 0
    while removed < EMPTY_LIMIT:
        ids = [row[0] for row in database.execute_sql(
            "SELECT node_id FROM trash_entry WHERE owner_id = ? ORDER BY deleted_at LIMIT ?",
            (user.id, PURGE_BATCH))]
        if not ids:
            break
        removed += _delete_entries(services, ids, owner_id=user.id)
    return removed


def purge_expired(services: Services, now: dt.datetime | None = None) -> int:
    """The periodic purge (dms.runtime's table): deletions older than DMS_TRASH_DAYS, oldest
    first, for at most PURGE_SECONDS; the number removed."""
    cutoff = TrashEntry.purge_at.db_value(now or utcnow())
    removed, deadline = 0, time.monotonic() + PURGE_SECONDS
    while time.monotonic() < deadline:
        ids = [row[0] for row in database.execute_sql(
            "SELECT node_id FROM trash_entry WHERE purge_at <= ? ORDER BY purge_at LIMIT ?",
            (cutoff, PURGE_BATCH))]
        if not ids:
            break
        removed += _delete_entries(services, ids)
    if removed:
        log.info("trash: deleted %d expired deletion(s) for good", removed)
    return removed


def _delete_entries(services: Services, node_ids: list[str], owner_id: str | None = None) -> int:
    """Delete these trash roots for good (those still there: a restore may have come first), in
    their owners' write scopes, so that a restore of the same entry waits or wins."""
    marks = ",".join("?" * len(node_ids))
    owners = {row[0] for row in database.execute_sql(
        f"SELECT owner_id FROM trash_entry WHERE node_id IN ({marks})", node_ids)}
    if owner_id is not None:
        owners = {owner_id}

    def delete_rows() -> tuple[int, list[Blob]]:
        files: list[Blob] = []
        count = 0
        with write_transaction(*(owner_scope(owner) for owner in sorted(owners))):
            for node_id in node_ids:
                entry = TrashEntry.get_or_none(TrashEntry.node == node_id)
                if entry is None or entry.owner_id not in owners:
                    continue
                files += tree.delete_subtree_rows(node_id)
                count += 1
        return count, files
    count, files = with_space_reserve(delete_rows)
    remove_files(services, files)
    return count


def remove_files(services: Services, files: list[Blob]) -> None:
    """Once their rows are deleted: the versions' readings stop and their files go."""
    services.jobs.cancel(versions_of(files))
    services.store.remove(files)
    services.store.ensure_reserve()
