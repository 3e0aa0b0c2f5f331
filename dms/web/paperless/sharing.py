"""Sharing in Paperless-ngx's words (api.md §17, §21): a document's `permissions` (`{"view":
{"users", "groups"}, "change": {...}}`) are the dms grants that reach it — on it and on the folders
above it — a `viewer` in `view`, an `editor` in both; `set_permissions` sets the document's own
grants (those of a folder above stay the folder's: dms's sharing changes them). Only the owner (or
a superuser) sees who else has a document, as in dms's GET /nodes/{id}/access/; anyone else gets
empty lists."""

from __future__ import annotations

from typing import Any

from dms.domain import numbers
from dms.domain.access import grants
from dms.domain.access.rule import EDITOR, VIEWER, live_node
from dms.domain.rows import User
from dms.web.paperless import translate
from dms.web.paperless.protocol import Call, invalid

MAX_NAMED = grants.MAX_GRANTS_PER_NODE  # users and groups one set_permissions names


def full_perms(call: Call) -> bool:
    """Whether the answer carries `permissions` (asked for, and always for PUT and PATCH, as
    Paperless-ngx does) instead of `user_can_change` and `is_shared_by_requester`."""
    return (call.arg("full_perms") or "").lower() in ("true", "1") or \
        call.environ.get("REQUEST_METHOD") in ("PATCH", "PUT")


class Shares:
    """The grants reaching a page of documents, for the caller: read once for the page."""

    def __init__(self, user: User, owners: dict[str, str]):
        """`owners`: {document id: its owner's id}."""
        visible = [node_id for node_id, owner in owners.items()
                   if owner == user.id or user.is_superuser]
        self.covering = grants.covering(visible)
        users = {user_id for rows in self.covering.values() for user_id, _, _ in rows if user_id}
        groups = {group_id for rows in self.covering.values()
                  for _, group_id, _ in rows if group_id}
        self.user_numbers = numbers.numbers_of("user", list(users))
        self.group_numbers = numbers.numbers_of("group", list(groups))

    def shared(self, node_id: str) -> bool:
        return bool(self.covering.get(node_id))

    def permissions(self, node_id: str) -> dict[str, dict[str, list[int]]]:
        shown: dict[str, dict[str, set[int]]] = {
            "view": {"users": set(), "groups": set()}, "change": {"users": set(), "groups": set()}}
        for user_id, group_id, role in self.covering.get(node_id, []):
            kind, number = ("users", self.user_numbers.get(user_id)) if user_id else \
                ("groups", self.group_numbers.get(group_id or ""))
            if number is None:
                continue
            shown["view"][kind].add(number)
            if role == EDITOR:
                shown["change"][kind].add(number)
        return {action: {kind: sorted(found) for kind, found in kinds.items()}
                for action, kinds in shown.items()}


def wanted_grants(given: object) -> dict[tuple[str, str], str]:
    """A `set_permissions` object as the grants it asks for: {("user"|"group", id): role}; an
    unknown user or group is DRF's 400."""
    if not isinstance(given, dict):
        raise invalid("set_permissions", "Expected a dictionary of items.")
    wanted: dict[tuple[str, str], str] = {}
    for action, role in (("view", VIEWER), ("change", EDITOR)):
        named = given.get(action) or {}
        if not isinstance(named, dict):
            raise invalid("set_permissions", "Expected a dictionary of items.")
        for kind, noun in (("users", "user"), ("groups", "group")):
            values = named.get(kind) or []
            if not isinstance(values, list) or len(values) > MAX_NAMED:
                raise invalid("set_permissions", f"{kind} is a list of at most {MAX_NAMED} ids.")
            wanted_numbers = [translate.pk("set_permissions", value) for value in values]
            ids = numbers.ids_of(noun, wanted_numbers)
            for number_ in wanted_numbers:
                if number_ not in ids:
                    raise invalid("set_permissions",
                                  f"Some {kind} in set_permissions don't exist.")
                key = (noun, ids[number_])
                if wanted.get(key) != EDITOR:
                    wanted[key] = role
    if len(wanted) > MAX_NAMED:
        raise invalid("set_permissions", f"At most {MAX_NAMED} users and groups.")
    return wanted


def check_may_share(call: Call, document_id: str) -> None:
    """403 with dms's sentence unless the caller may change who has the document: checked before
    a PATCH changes anything else."""
    grants.access_of(call.user, document_id)


def owner_unchanged(document_id: str, given: Any) -> None:
    """dms never moves a document to another owner: `owner` may only name the owner it has."""
    node = live_node(document_id)
    owner_id = str(node.owner_id) if node is not None else ""
    if given is not None and numbers.id_of("user", translate.pk("owner", given)) != owner_id:
        raise invalid("owner", "dms does not give a document to another owner; share it "
                               "instead (set_permissions).")
