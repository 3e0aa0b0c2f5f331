"""Several things of one document changed at once, all or nothing (a Paperless-ngx client's PUT or
PATCH, api.md §17): what it is about (title, correspondent, type, date, serial number, custom
fields: dms.domain.metadata.document), the caller's tags on it (dms.domain.tags) and who it is
shared with (dms.domain.access.grants). One write transaction holds every scope the parts take
— the owner's, the caller's (their tags), and USERS for the grants — so the parts join it and
never wait for each other crosswise; a refusal of any part leaves the document as it was."""

from __future__ import annotations

from typing import Any

from dms.db import USERS, owner_scope, write_transaction
from dms.db.models import Node, User
from dms.domain import tags
from dms.domain.access import grants
from dms.domain.access.rule import reach
from dms.domain.metadata import document as document_metadata


def change(user: User, document_id: str, attributes: dict[str, Any],
           tag_names: list[str] | None, wanted_grants: dict[tuple[str, str], str] | None) -> None:
    """`attributes` as dms's PATCH takes them; `tag_names`: the caller's tags on it become these
    (None: unchanged); `wanted_grants`: its own grants become these (None: unchanged; only its
    owner or a superuser may)."""
    owner_id = reach(user, document_id, kind=Node.DOCUMENT).node.owner_id
    scopes = {owner_scope(owner_id), owner_scope(user.id)} | (
        {USERS} if wanted_grants is not None else set())
    with write_transaction(*sorted(scopes)):
        if wanted_grants is not None:
            grants.access_of(user, document_id)  # 403 before anything else changes
        if attributes:
            document_metadata.update_node(user, document_id, Node.DOCUMENT, attributes)
        if tag_names is not None:
            tags.change_node_tags(user, document_id, tag_names, "replace")
        if wanted_grants is not None:
            grants.set_grants(user, document_id, wanted_grants, merge=False)
