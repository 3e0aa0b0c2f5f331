"""A Paperless-ngx export's groups and object permissions as dms's (api.md §18, §21): each group
becomes a group of the same name (found again by name) with the imported users that were its
members; a user's or group's `view_document` permission on a document becomes a viewer grant,
`change_document` an editor grant, given by the document's owner (merged: a second run or a
stronger grant already there changes nothing). Permissions on anything else (tags,
correspondents, saved views...: each person's own in dms) and global permissions are counted
for the report. Only a superuser may make groups: with `--user` someone else, groups and the
grants to them are reported instead."""

from __future__ import annotations

from collections import Counter
from typing import Any

from dms.db.models import Group, User
from dms.domain.access import grants, groups
from dms.domain.tagfilter import name_key
from dms.errors import DomainError
from dms.intake.paperless.labels import Owners
from dms.intake.paperless.manifest import Library
from dms.text import is_whole_number

ROLES = {"view_document": "viewer", "change_document": "editor"}
RANK = {"viewer": 1, "editor": 2}


class Sharing:
    def __init__(self, library: Library, owners: Owners, actor: User, dry_run: bool,
                 counts: Counter, problems: list[str], not_imported: Counter):
        self.library, self.owners, self.actor, self.dry_run = library, owners, actor, dry_run
        self.counts, self.problems, self.not_imported = counts, problems, not_imported
        self._groups: dict[Any, str | None] = {}

    def groups(self) -> None:
        """Every exported group (its members: the imported users that were), and the count of
        global permissions, which dms has no place for."""
        held = sum(len(user.get("user_permissions") or [])
                   for user in self.library.objects["users"].values()) + \
            sum(len(group.get("permissions") or [])
                for group in self.library.objects["groups"].values())
        if held:
            self.not_imported["global permissions"] += held
        for pk, exported in self.library.objects["groups"].items():
            self._groups[pk] = self._group(exported)
        for user_pk, exported in self.library.objects["users"].items():
            wanted = [self._groups.get(group_pk) for group_pk in exported.get("groups") or []]
            wanted_ids = [group_id for group_id in wanted if group_id]
            if not wanted_ids or self.dry_run or self.owners.only is not None:
                continue
            member = self.owners.of(user_pk)
            if member.id == self.owners.default.id and \
                    exported.get("username") != member.username:
                continue  # not made: their memberships are not the default owner's
            try:
                groups.join(self.actor, member.id, wanted_ids)
            except DomainError as error:
                self.problems.append(f"memberships of {exported.get('username')!r} not "
                                     f"imported ({error.message})")

    def _group(self, exported: dict[str, Any]) -> str | None:
        name = exported.get("name")
        if not isinstance(name, str) or not name.strip():
            return None
        found = Group.get_or_none(Group.name_key == name_key(name))
        if found is not None:
            return str(found.id)
        if not self.actor.is_superuser or self.owners.only is not None:
            self.not_imported["groups"] += 1
            return None
        self.counts["groups"] += 1
        if self.dry_run:
            return None
        try:
            return str(groups.create(self.actor, {"name": name.strip()[:150]}).id)
        except DomainError as error:
            self.problems.append(f"group {name!r} not imported ({error.message})")
            return None

    def grants(self, node_of: dict[Any, str], owner_of: dict[Any, User]) -> None:
        """The object permissions on imported documents as grants."""
        wanted: dict[str, dict[tuple[str, str], str]] = {}
        owners: dict[str, User] = {}
        for kind, grantee_pk, permission_pk, object_pk in self.library.shares:
            content_type, codename = self.library.permissions.get(permission_pk, (None, ""))
            app_model = self.library.content_types.get(content_type)
            if app_model != ("documents", "document"):
                self.not_imported["permissions on tags, labels and views"] += 1
                continue
            role = ROLES.get(codename)
            document = _document_key(object_pk, node_of)
            if role is None or document is None:
                continue  # delete_/add_ permissions: an owner's in dms
            grantee = self._grantee(kind, grantee_pk)
            if grantee is None:
                continue
            node_id = node_of[document]
            mine = wanted.setdefault(node_id, {})
            if RANK[role] > RANK.get(mine.get(grantee, ""), 0):
                mine[grantee] = role
            owners[node_id] = owner_of[document]
        for node_id, shares in wanted.items():
            self.counts["grants"] += len(shares)
            if self.dry_run or not node_id:
                continue
            try:
                grants.set_grants(owners[node_id], node_id, shares, merge=True)
            except DomainError as error:
                self.problems.append(f"sharing of a document not imported ({error.message})")

    def _grantee(self, kind: str, pk: Any) -> tuple[str, str] | None:
        if kind == "group":
            group_id = self._groups.get(pk)
            if group_id is None:
                self.not_imported["shares with groups not imported"] += 1
            return ("group", group_id) if group_id else None
        if self.owners.only is not None or pk not in self.library.objects["users"]:
            return None
        return ("user", self.owners.of(pk).id)


def _document_key(object_pk: str, node_of: dict[Any, str]) -> Any:
    """The document's key as the manifest wrote it (a number), if it was imported."""
    for key in (object_pk, int(object_pk) if is_whole_number(object_pk) else None):
        if key is not None and key in node_of:
            return key
    return None
