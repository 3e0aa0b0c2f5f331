"""A Paperless-ngx export's users, labels and custom fields made dms's (api.md §18), per owner
and on demand: a label is made for each owner whose documents use it, found again by name on a
second run (names are unique per owner regardless of case in both systems)."""

from __future__ import annotations

from typing import Any

from dms.db.models import CustomField, Tag, User
from dms.domain import imported, tags
from dms.domain.metadata import fields, labels
from dms.domain.tagfilter import name_key
from dms.errors import DomainError
from dms.intake.paperless.manifest import Library

KINDS = {"correspondents": labels.CORRESPONDENTS, "document_types": labels.DOCUMENT_TYPES}
# Paperless-ngx's matching algorithms by number, as dms names them (the same seven).
ALGORITHMS = {0: "none", 1: "any", 2: "all", 3: "exact", 4: "regex", 5: "fuzzy", 6: "auto"}


def matching(exported: dict[str, Any]) -> dict[str, Any]:
    """How a label files documents by itself there: the same in dms."""
    algorithm = ALGORITHMS.get(exported.get("matching_algorithm"))  # type: ignore[arg-type]
    if algorithm is None or algorithm == "none":
        return {}
    found: dict[str, Any] = {"matching_algorithm": algorithm}
    if isinstance(exported.get("match"), str):
        found["match"] = exported["match"]
    if isinstance(exported.get("is_insensitive"), bool):
        found["is_insensitive"] = exported["is_insensitive"]
    return found
MAX_TAG_DEPTH = 10  # Paperless-ngx nests at most 5
COLOR = "#a6cee3"


class Owners:
    """Each exported user's dms account; None: the default owner's (`--user`, or the first
    superuser). Made with their Django hash when new; an existing account is used as it is."""

    def __init__(self, library: Library, default: User, only: User | None,
                 problems: list[str], dry_run: bool):
        self.library, self.default, self.only = library, default, only
        self.problems, self.dry_run = problems, dry_run
        self.made = self.found = 0
        self._users: dict[Any, User] = {}

    def of(self, user_pk: Any) -> User:
        if self.only is not None or user_pk is None:
            return self.only or self.default
        if user_pk not in self._users:
            self._users[user_pk] = self._account(user_pk)
        return self._users[user_pk]

    def _account(self, user_pk: Any) -> User:
        exported = self.library.objects["users"].get(user_pk)
        if exported is None or not isinstance(exported.get("username"), str):
            return self.default
        username = exported["username"]
        found = User.get_or_none(User.username == username)
        if found is not None:
            self.found += 1
            return found
        if self.dry_run:
            self.made += 1
            return self.default
        try:
            user = imported.create_imported_user(username, exported)
        except DomainError as error:
            self.problems.append(f"user {username!r} not made ({error.message}); their documents "
                                 f"are {self.default.username}'s")
            return self.default
        self.made += 1
        return user


class Labels:
    """The dms ids of an owner's tags, correspondents, types and custom fields, by Paperless-ngx
    key; made when first asked for."""

    def __init__(self, library: Library, dry_run: bool, problems: list[str]):
        self.library, self.dry_run, self.problems = library, dry_run, problems
        self.made: dict[str, int] = {"tags": 0, "correspondents": 0, "document_types": 0,
                                     "custom_fields": 0}
        self._ids: dict[tuple[str, str, Any], str | None] = {}

    def label(self, owner: User, kind: str, pk: Any) -> str | None:
        key = (owner.id, kind, pk)
        if key not in self._ids:
            exported = self.library.objects[kind].get(pk) or {}
            name = exported.get("name")
            self._ids[key] = self._label(owner, kind, name, exported) \
                if isinstance(name, str) else None
        return self._ids[key]

    def _label(self, owner: User, kind: str, name: str,
               exported: dict[str, Any]) -> str | None:
        model = KINDS[kind].model
        found = model.get_or_none(model.owner == owner.id, model.name_key == name_key(name))
        if found is not None:
            return str(found.id)
        self.made[kind] += 1
        if self.dry_run:
            return None
        attributes = {"name": name[:128], **matching(exported)}
        try:
            return str(labels.create(KINDS[kind], owner, attributes).id)
        except DomainError as error:
            self.problems.append(f"the matching of {name!r} not imported ({error.message})")
            return str(labels.create(KINDS[kind], owner, {"name": name[:128]}).id)

    def tag_name(self, owner: User, pk: Any, depth: int = 0) -> str | None:
        """The owner's tag for this Paperless-ngx tag (its parents made first): its name."""
        key = (owner.id, "tags", pk)
        if key not in self._ids:
            self._ids[key] = self._tag(owner, pk, depth)
        return self._ids[key]

    def _tag(self, owner: User, pk: Any, depth: int) -> str | None:
        exported = self.library.objects["tags"].get(pk) or {}
        name = exported.get("name")
        if not isinstance(name, str) or not name.strip():
            return None
        found = Tag.get_or_none(Tag.owner == owner.id, Tag.name_key == name_key(name))
        if found is not None:
            return str(found.name)
        parent = exported.get("tn_parent")
        parent_name = self.tag_name(owner, parent, depth + 1) \
            if parent is not None and depth < MAX_TAG_DEPTH else None
        self.made["tags"] += 1
        if self.dry_run:
            return name
        attributes: dict[str, Any] = {"name": name.strip()[:128], **matching(exported)}
        if exported.get("is_inbox_tag") is True:
            attributes["is_inbox_tag"] = True
        color = exported.get("color")
        if isinstance(color, str) and len(color) == 7 and color.startswith("#"):
            attributes["bg_color"] = color
        if parent_name is not None:
            parent_tag = Tag.get_or_none(Tag.owner == owner.id,
                                         Tag.name_key == name_key(parent_name))
            if parent_tag is not None:
                attributes["parent"] = parent_tag.id
        try:
            return str(tags.create_tag(owner, attributes).name)
        except DomainError as error:
            self.problems.append(f"the colour or matching of tag {name!r} not imported "
                                 f"({error.message})")
            kept = {key: attributes[key] for key in ("name", "parent") if key in attributes}
            return str(tags.create_tag(owner, kept).name)

    def field(self, owner: User, pk: Any) -> CustomField | None:
        """The owner's custom field for this Paperless-ngx field (same name and type)."""
        key = (owner.id, "custom_fields", pk)
        if key not in self._ids:
            self._ids[key] = self._field(owner, pk)
        field_id = self._ids[key]
        return CustomField.get_by_id(field_id) if field_id is not None else None

    def _field(self, owner: User, pk: Any) -> str | None:
        exported = self.library.objects["custom_fields"].get(pk)
        if exported is None or not isinstance(exported.get("name"), str):
            return None
        name, data_type = exported["name"], exported.get("data_type")
        found = CustomField.get_or_none(CustomField.owner == owner.id,
                                        CustomField.name_key == name_key(name))
        if found is not None:
            return str(found.id) if found.data_type == data_type else None
        if data_type not in fields.DATA_TYPES:
            return None
        self.made["custom_fields"] += 1
        if self.dry_run:
            return None
        extra: dict[str, Any] = exported.get("extra_data") or {}
        if not isinstance(extra, dict):
            extra = {}
        kept: dict[str, Any] = {}
        if data_type == "select":
            kept["select_options"] = extra.get("select_options") or []
        if data_type == "monetary" and extra.get("default_currency"):
            kept["default_currency"] = extra["default_currency"]
        return str(fields.create_field(owner, {"name": name[:128], "data_type": data_type,
                                               "extra_data": kept}).id)
