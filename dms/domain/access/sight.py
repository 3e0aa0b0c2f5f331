"""What one person sees of the nodes they reach (api.md §21): their role on each (`access`), its
owner, and a path that shows nothing above what is shared with them.

The owner sees a node as it is. Anyone else reaches it through grants on it or on folders above
it; for them its breadcrumb starts at their `.shared` folder and then at the highest folder shared
with them (the owner's folders above it stay unseen: their titles are the owner's), and the shared
root's parent is `.shared`. `.shared` is not a row: a folder of each user's that lists the roots
shared with them (dms.domain.listings.shared_roots), named by an id derived from the user's, so
that no route that changes nodes can ever reach it.
"""

from __future__ import annotations

import uuid
from functools import cached_property, lru_cache
from typing import NamedTuple

from dms.db import database
from dms.db.models import Node, User
from dms.domain.access.rule import OWNER, RANK, TO_USER

SHARED = "shared"  # the special name of the .shared folder
SHARED_TITLE = ".shared"
_NAMESPACE = uuid.UUID("5b0a4d1e-3c1f-4f5e-9d61-0c1e5a2d7a11")  # dms's, for .shared's ids


@lru_cache(maxsize=4096)  # asked on every GET /users/me/ and for each shared node of a page
def shared_folder_id(user_id: str) -> str:
    """The id of the user's .shared folder: the same on every node, for ever."""
    return str(uuid.uuid5(_NAMESPACE, f"shared:{user_id}"))


def shared_folder(user: User) -> Node:
    """The caller's .shared folder as a (never saved) node: read-only, without a parent."""
    return Node(id=shared_folder_id(user.id), owner=user.id, parent=None, kind=Node.FOLDER,
                special=SHARED, title=SHARED_TITLE, title_sort=SHARED_TITLE,
                created_at=user.date_joined, updated_at=user.date_joined)


class Shown(NamedTuple):
    access: str  # owner, editor or viewer
    owner: str  # the owner's username
    breadcrumb: list[list[str]]
    parent_id: str | None


class Sight:
    """One person's view of the nodes of one answer: their grants read once (one query)."""

    def __init__(self, user: User):
        self.user = user
        self._owners: dict[str, str] = {user.id: user.username}

    @cached_property
    def grants(self) -> dict[str, str]:
        """{node id: the highest role a grant on it gives the person}."""
        found: dict[str, str] = {}
        for node_id, role in database.execute_sql(
                f"SELECT g.node_id, g.role FROM node_grant AS g WHERE {TO_USER}",
                (self.user.id, self.user.id)):
            if RANK[role] > RANK.get(found.get(node_id, ""), 0):
                found[node_id] = role
        return found

    def shown(self, node_id: str, owner_id: str, parent_id: str | None,
              breadcrumb: list[list[str]]) -> Shown:
        if owner_id == self.user.id:
            return Shown(OWNER, self.user.username, breadcrumb, parent_id)
        shared = shared_folder_id(self.user.id)
        top = next((index for index, (_, crumb_id) in enumerate(breadcrumb)
                    if crumb_id in self.grants), None)
        if top is None:  # nothing names them: no route serialises such a node
            return Shown("none", self._username(owner_id), [[SHARED_TITLE, shared]], shared)
        path = breadcrumb[top:]
        role = max((self.grants[crumb_id] for _, crumb_id in path if crumb_id in self.grants),
                   key=RANK.__getitem__)
        return Shown(role, self._username(owner_id), [[SHARED_TITLE, shared], *path],
                     shared if top == len(breadcrumb) - 1 else parent_id)

    def owners(self, owner_ids: set[str]) -> None:
        """Read the usernames of these owners at once (the nodes of a page)."""
        missing = [owner_id for owner_id in owner_ids if owner_id not in self._owners]
        if missing:
            self._owners.update(database.execute_sql(
                f'SELECT id, username FROM "user" WHERE id IN ({",".join("?" * len(missing))})',
                missing).fetchall())

    def _username(self, owner_id: str) -> str:
        self.owners({owner_id})
        return self._owners.get(owner_id, "")
