"""A query's names made conditions (api.md, "The query language"): each leaf that is not words —
a tag, correspondent, type, folder, file type, serial number, date span or custom field — becomes
one SQL condition on the node row (dms.domain.docfilters.Condition), the caller's names looked up
once; the words stay words, for a search engine's index. A query without words is then wholly one
condition (`condition`), which the document list runs in the database's own indexes.

- `tag:` the caller's tags of that name (regardless of case) and the tags below them;
  `correspondent:` and `type:` those of that name of the caller and of the people who share with
  them (a shared document's are its owner's). A name that names nothing matches nothing.
- `folder:` a path of titles from the caller's .home (or from .inbox when it starts with Inbox),
  regardless of case, everything below it included; unknown: nothing.
- `mime:` a type (`application/pdf`), a kind (`image`) or a file ending (`pdf`, `png`, `jpg`,
  `tiff`, `txt`).
- `cf.<name>:` the caller's custom field of that name (an unknown one is a 400 at its place):
  text fields contain the value, a select is the option of that label, a boolean true/false, a
  date a span (`cf.Due:2024-03`, `cf.Due:>2024-03`), numbers and amounts compared; read and
  compiled by the custom field query of api.md §16 (dms.domain.metadata.fieldquery), so a value
  that does not fit the field is refused in its words, at the leaf's place.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any as Anything

from dms.db import database
from dms.db.models import DOCUMENT_DATE, Correspondent, DocumentType, Node, Tag, User
from dms.domain import docfilters, tagtree
from dms.domain.access.rule import sharers
from dms.domain.metadata.fieldquery import compile_field_query
from dms.domain.metadata.filters import query_fields
from dms.domain.searchquery import dates
from dms.domain.searchquery.grammar import QueryError
from dms.domain.searchquery.tree import (
    All,
    Any,
    Custom,
    Named,
    Not,
    Number,
    Query,
    Span,
    Words,
)
from dms.domain.tagfilter import name_key
from dms.errors import Invalid

NOTHING = docfilters.Condition("1 = 0")
MAX_FOLDER_DEPTH = 1000
MAX_FOLDERS = 10_000  # below a folder: `folder:` is a set of parent folders
MAX_DOCUMENTS = 50_000  # a custom field's matches looked up for a search index
MIME_ENDINGS = {"pdf": "application/pdf", "png": "image/png", "jpg": "image/jpeg",
                "jpeg": "image/jpeg", "tif": "image/tiff", "tiff": "image/tiff",
                "txt": "text/plain", "text": "text/plain"}
TEXT_TYPES = ("string", "longtext", "url")
ORDER_NAMES = {">": "gt", ">=": "gte", "<": "lt", "<=": "lte"}
BOOLEANS = {"true": True, "yes": True, "false": False, "no": False}


@dataclass(frozen=True)
class Keys:
    """In a search index: the node holds one of `values` in `field` (none: matches nothing)."""
    field: str  # tag_ids, parent, correspondent, doctype, mime
    values: tuple[str, ...]


@dataclass(frozen=True)
class Between:
    """In a search index: a whole-number field (a day as date.toordinal(), or the serial
    number) within [low, high], both included; None: open on that side."""
    field: str  # created, added, asn
    low: int | None
    high: int | None


@dataclass(frozen=True)
class Meta:
    """A leaf made a condition on the node row, and what a search index holds of it (None: the
    index cannot tell — a custom field —, ask the database for the documents: `document_ids`)."""
    condition: docfilters.Condition
    at: int
    index: Keys | Between | None = None


def resolve(user: User, query: Query, today: dt.date, field: str = "q") -> Anything:
    """The tree with every leaf that is not words made a Meta (`today`: the day the query's
    relative dates count from, as it was parsed)."""
    return _Resolver(user, today, field).walk(query)


def has_words(query: Anything) -> bool:
    if isinstance(query, Words):
        return True
    if isinstance(query, Not):
        return has_words(query.part)
    if isinstance(query, (All, Any)):
        return any(has_words(part) for part in query.parts)
    return False


def condition(query: Anything) -> docfilters.Condition:
    """The one condition of a resolved tree without words (NOT, AND, OR as SQL's)."""
    if isinstance(query, Meta):
        return query.condition
    if isinstance(query, Not):  # IS NOT TRUE: a document without the value (NULL) is kept
        inner = condition(query.part)
        return docfilters.Condition(f"({inner.where}) IS NOT TRUE", inner.params)
    if isinstance(query, (All, Any)):
        parts = [condition(part) for part in query.parts]
        joint = " AND " if isinstance(query, All) else " OR "
        return docfilters.Condition(joint.join(f"({part.where})" for part in parts),
                                    tuple(param for part in parts for param in part.params))
    raise ValueError("a tree with words has no one condition")  # has_words(query) is true


def document_ids(user: User, meta: Meta, field: str = "q") -> tuple[str, ...]:
    """The documents of the caller and of those who share with them that `meta` keeps (for a
    leaf a search index cannot tell: a custom field), at most MAX_DOCUMENTS."""
    owners = [user.id, *sharers(user)]
    rows = database.execute_sql(
        f"SELECT id FROM node WHERE owner_id IN ({','.join('?' * len(owners))}) AND kind = ? "
        f"AND trash_id IS NULL AND ({meta.condition.where}) LIMIT ?",
        (*owners, Node.DOCUMENT, *meta.condition.params, MAX_DOCUMENTS + 1)).fetchall()
    if len(rows) > MAX_DOCUMENTS:
        raise QueryError(meta.at, f"a custom field value that fits at most {MAX_DOCUMENTS:,} "
                         "documents, together with words (narrow it, or leave out the words)",
                         field)
    return tuple(node_id for (node_id,) in rows)


def _day_number(day: dt.date | None) -> int | None:
    return None if day is None else day.toordinal()


def _bounds(operator: str, low: int, high: int) -> tuple[int | None, int | None]:
    """The whole numbers a comparison with [low, high] keeps, as a range."""
    return {"=": (low, high), ">": (high + 1, None), ">=": (low, None),
            "<": (None, low - 1), "<=": (None, high)}[operator]


class _Resolver:
    def __init__(self, user: User, today: dt.date, field: str):
        self.user, self.today, self.field = user, today, field
        self._owners: list[str] | None = None
        self._fields: list[Anything] | None = None

    @property
    def owners(self) -> list[str]:
        if self._owners is None:
            self._owners = [self.user.id, *sharers(self.user)]
        return self._owners

    def walk(self, query: Query) -> Anything:
        if isinstance(query, Words):
            return query
        if isinstance(query, Not):
            return Not(self.walk(query.part))
        if isinstance(query, All):
            return All(tuple(self.walk(part) for part in query.parts))
        if isinstance(query, Any):
            return Any(tuple(self.walk(part) for part in query.parts))
        return self.leaf(query)

    def leaf(self, query: Query) -> Meta:
        if isinstance(query, Named):
            named: Callable[[str, int], Meta] = getattr(self, f"_{query.field}")
            return named(query.value, query.at)
        if isinstance(query, Number):
            low, high = _bounds(query.operator, query.value, query.value)
            return Meta(docfilters.Condition(f"asn {query.operator} ?", (query.value,)),
                        query.at, Between("asn", low, high))
        if isinstance(query, Span):
            return self._span(query)
        assert isinstance(query, Custom)
        return Meta(self._custom(query), query.at)

    # -- names ---------------------------------------------------------------------------------
    def _tag(self, name: str, at: int) -> Meta:
        ids = [tag.id for tag in Tag.select(Tag.id).where(Tag.owner == self.user.id,
                                                          Tag.name_key == name_key(name))]
        if not ids:
            return Meta(NOTHING, at, Keys("tag_ids", ()))
        every = sorted(tagtree.below(ids) | set(ids))
        return Meta(docfilters.tags(self.user, every, "any"), at, Keys("tag_ids", tuple(every)))

    def _labelled(self, model: Anything, name: str, column: str, field: str, at: int) -> Meta:
        ids = [row.id for row in model.select(model.id).where(
            model.owner.in_(self.owners), model.name_key == name_key(name))]
        return Meta(docfilters.label(column, ids, "in") if ids else NOTHING, at,
                    Keys(field, tuple(ids)))

    def _correspondent(self, name: str, at: int) -> Meta:
        return self._labelled(Correspondent, name, "correspondent", "correspondent", at)

    def _type(self, name: str, at: int) -> Meta:
        return self._labelled(DocumentType, name, "document_type", "doctype", at)

    def _folder(self, path: str, at: int) -> Meta:
        """The folder's documents and folders, and those of every folder below it: their
        parent is one of those folders (at most MAX_FOLDERS)."""
        found = self._folder_at(path)
        if found is None:
            return Meta(NOTHING, at, Keys("parent", ()))
        rows = database.execute_sql(
            "WITH RECURSIVE below(id, depth) AS (SELECT id, 0 FROM node WHERE id = ? "
            "UNION ALL SELECT n.id, below.depth + 1 FROM node AS n JOIN below "
            "ON n.parent_id = below.id WHERE n.kind = ? AND below.depth < ?) "
            "SELECT id FROM below LIMIT ?",
            (found, Node.FOLDER, MAX_FOLDER_DEPTH, MAX_FOLDERS + 1)).fetchall()
        if len(rows) > MAX_FOLDERS:
            raise QueryError(at, f"a folder with at most {MAX_FOLDERS:,} folders below it",
                             self.field)
        ids = tuple(sorted(folder_id for (folder_id,) in rows))
        return Meta(docfilters.Condition(f"parent_id IN ({','.join('?' * len(ids))})", ids),
                    at, Keys("parent", ids))

    def _folder_at(self, path: str) -> str | None:
        steps = [step.strip() for step in path.strip("/").split("/") if step.strip()]
        special = Node.HOME
        if steps and steps[0].casefold() in (".inbox", "inbox"):
            special, steps = Node.INBOX, steps[1:]
        elif steps and steps[0].casefold() in (".home", "home"):
            steps = steps[1:]
        found = Node.get_or_none(Node.owner == self.user.id, Node.special == special)
        for step in steps[:MAX_FOLDER_DEPTH]:
            if found is None:
                return None
            found = Node.select(Node.id).where(
                Node.parent == found.id, Node.kind == Node.FOLDER, Node.trash_id.is_null(),
                Node.title_sort == step.casefold()).order_by(Node.id).first()
        return None if found is None else found.id

    def _mime(self, value: str, at: int) -> Meta:
        """A whole type, or a kind (the part before the slash: the index holds both)."""
        wanted = value.strip().lower()
        latest = docfilters.LATEST.format(column="mime_type")
        if "/" in wanted or wanted in MIME_ENDINGS:
            whole = MIME_ENDINGS.get(wanted, wanted)
            return Meta(docfilters.Condition(f"{latest} = ?", (whole,)), at,
                        Keys("mime", (whole,)))
        return Meta(docfilters.Condition(
            f"{latest} LIKE ? ESCAPE '\\'",
            (wanted.replace("%", "\\%").replace("_", "\\_") + "/%",)), at, Keys("mime", (wanted,)))

    # -- dates ---------------------------------------------------------------------------------
    def _span(self, query: Span) -> Meta:
        column = DOCUMENT_DATE if query.field == "created" else "substr(created_at, 1, 10)"
        parts, params = [], []
        if query.start is not None:
            parts.append(f"{column} >= ?")
            params.append(query.start.isoformat())
        if query.end is not None:
            parts.append(f"{column} <= ?")
            params.append(query.end.isoformat())
        return Meta(docfilters.Condition(" AND ".join(parts) or "1 = 1", tuple(params)), query.at,
                    Between(query.field, _day_number(query.start), _day_number(query.end)))

    # -- custom fields ---------------------------------------------------------------------------
    def _custom(self, query: Custom) -> docfilters.Condition:
        if self._fields is None:
            self._fields = query_fields(self.user)
        fields = {name_key(field.name): field for field in self._fields}
        field = fields.get(name_key(query.name))
        if field is None:
            raise QueryError(query.at, f"a custom field of yours, not “{query.name}”", self.field)
        atom = self._atom(field, query)
        try:
            sql, params = compile_field_query(json.dumps(atom), self._fields)
        except Invalid as refused:
            raise QueryError(query.at, f"a value that fits {field.name}: {refused.message}",
                             self.field) from None
        return docfilters.Condition(sql.removeprefix("(").removesuffix(")"), params)

    def _atom(self, field: Anything, query: Custom) -> list[Anything]:
        """The custom field query (api.md §16) of the leaf, in its JSON form."""
        kind, value = field.data_type, query.value
        if query.high is not None:
            if kind == "date":
                return [field.name, "range", [self._day(value, query).isoformat(),
                                              self._day(query.high, query, True).isoformat()]]
            return [field.name, "range", [value, query.high]]
        if kind == "date":
            first, last = self._day(value, query), self._day(value, query, True)
            start, end = dates.compared(query.operator, first, last)
            if start is not None and end is not None:
                return [field.name, "range", [start.isoformat(), end.isoformat()]]
            if start is not None:
                return [field.name, "gte", start.isoformat()]
            assert end is not None  # a comparison leaves one side open, never both
            return [field.name, "lte", end.isoformat()]
        if query.operator != "=":
            return [field.name, ORDER_NAMES[query.operator], value]
        if kind in TEXT_TYPES:
            return [field.name, "icontains", value]
        if kind == "boolean":
            if value.lower() not in BOOLEANS:
                raise QueryError(query.at, f"true or false after cf.{query.name}", self.field)
            return [field.name, "exact", BOOLEANS[value.lower()]]
        return [field.name, "exact", value]

    def _day(self, text: str, query: Custom, last: bool = False) -> dt.date:
        try:
            first, final = dates.span(text, self.today)
        except ValueError:
            raise QueryError(query.at, dates.EXPECTED, self.field) from None
        return final if last else first
