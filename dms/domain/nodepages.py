"""The rows of a listing a page at a time (api.md, "Listing a folder"): a NodeRow for each node
read, and the SQL of a listing — where, order, count, page, and every node's number — in its
general form (NodeListing) and the two a custom field makes (OrderedListing, FieldSortListing).
What to list for a request is dms.domain.listings'.

Hand-written SQL on purpose: on these hot paths peewee's query builder cost more than the
database's own work; rows are plain NodeRows, not models."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol, cast

from dms.db import database, is_postgresql, kept_until_change
from dms.db.models import Node, document_date_of
from dms.domain.metadata.orderedquery import OrderedMatches

EVERY = 2 ** 62  # a LIMIT of no limit that both engines take (SQLite's -1 is PostgreSQL's error)


class Filter(Protocol):
    """A condition on the node row (dms.domain.tagfilter, dms.domain.metadata.filters)."""
    def sql(self) -> tuple[str, tuple[Any, ...]]: ...


Filters = Sequence[Filter | None]


class NodeRow(NamedTuple):
    """A node as listings read it: plain values straight from SQLite, no peewee model.
    Building models made a page of 100 nodes five times slower; datetimes stay stored text."""
    id: str
    parent_id: str | None
    kind: str
    special: str | None
    title: str
    lang: str | None
    ocr: int | None
    ocr_status: str | None
    ocr_error: str | None
    file_name: str | None
    size: int
    page_count: int
    created_at: str
    updated_at: str
    owner_id: str
    # A document's metadata that its resource shows (dms.domain.metadata.document.about_heads),
    # read with the row rather than by a query of their own: a tenth of a page of 100.
    correspondent_id: str | None
    document_type_id: str | None
    document_date: str | None  # DOCUMENT_DATE: its date, else the day it was added
    asn: int | None
    seq: int | None

    # Node's properties, which read the fields above (not fields: mypy's NamedTuple refuses them).
    is_special = Node.is_special  # type: ignore[misc]
    is_folder = Node.is_folder  # type: ignore[misc]
    is_document = Node.is_document  # type: ignore[misc]


def row_columns(alias: str = "") -> str:
    """The columns of a NodeRow, in its order, of the table named `alias` ("n." or none)."""
    return ", ".join(document_date_of(alias) if name == "document_date" else f"{alias}{name}"
                     for name in NodeRow._fields)


ROW_COLUMNS = row_columns()


class NodeListing:
    """The nodes matching `where`, in `order`, a page at a time, as NodeRows.

    Hand-written SQL on purpose: on these hot paths peewee's query builder cost more than
    SQLite's own work. `where` and `order` come from this module's constants, never from a
    request; request values travel only as parameters."""

    def __init__(self, where: str, params: tuple[Any, ...], order: str,
                 order_params: tuple[Any, ...] = ()):
        self.where, self.params, self.order = where, params, order
        self.order_params = order_params  # a sort by a custom field names it

    def count(self) -> int:
        """Kept until the database changes (dms.db.kept): every page of a listing asks it, and
        at a million documents it walks a million index entries."""
        sql, params = self.count_sql()
        return kept_until_change(("count", sql, params), lambda: cast(
            int, database.execute_sql(sql, params).fetchone()[0]))

    def fetch(self, offset: int, limit: int) -> list[NodeRow]:
        return [NodeRow._make(row) for row in database.execute_sql(*self.page_sql(offset, limit))]

    def count_sql(self) -> tuple[str, tuple[Any, ...]]:
        return f"SELECT COUNT(*) FROM node WHERE {self.where}", self.params

    def page_sql(self, offset: int, limit: int,
                 columns: str = ROW_COLUMNS) -> tuple[str, tuple[Any, ...]]:
        return (f"SELECT {columns} FROM node WHERE {self.where} ORDER BY {self.order} "
                "LIMIT ? OFFSET ?", (*self.params, *self.order_params, limit, offset))

    def numbers(self) -> str:
        """The number (`seq`) of every node of the listing, in its order, as one text "7,3,12"
        joined by the database without reading the nodes (the Paperless-ngx dialect's `all`:
        10,000 numbers as Python objects and then JSON cost 4 times as much; their count is
        the text's). The aggregate reads the ordered, limited page as it comes (neither engine
        folds a subquery with a LIMIT into its aggregate). Kept until the database changes
        (dms.db.kept): a client paging through asks it for every page."""
        sql, params = self.page_sql(0, EVERY, columns="seq")
        joined = "string_agg(CAST(seq AS TEXT), ',')" if is_postgresql() else "group_concat(seq)"
        sql = f"SELECT {joined} FROM ({sql}) AS listed"
        return kept_until_change(("numbers", sql, params), lambda: cast(
            str, database.execute_sql(sql, params).fetchone()[0] or ""), len)

    def _numbers_of_rows(self) -> str:
        """`numbers` of a listing that reads its nodes another way: their ids, then numbers."""
        ids = [row.id for row in self.fetch(0, self.count())]
        found: dict[str, int] = {}
        for start in range(0, len(ids), 500):
            part = ids[start:start + 500]
            found.update(database.execute_sql(
                f"SELECT id, seq FROM node WHERE id IN ({','.join('?' * len(part))})", part))
        return ",".join(str(found[node_id]) for node_id in ids if node_id in found)


class OrderedListing(NodeListing):
    """The documents a custom field query keeps, in title order, read from the custom field
    values alone (dms.domain.metadata.orderedquery): the count reads only the matching values,
    a page skips index entries and then reads its own nodes."""

    def __init__(self, matches: OrderedMatches, scope: str, scope_params: tuple[Any, ...]):
        rows, params = matches.sql(scope, scope_params)
        super().__init__(f"id IN (SELECT document_id FROM ({rows}) AS matched)", params,
                         "title_sort, id")
        self.rows = rows

    def count_sql(self) -> tuple[str, tuple[Any, ...]]:
        return f"SELECT COUNT(*) FROM ({self.rows}) AS matched", self.params

    def page_sql(self, offset: int, limit: int,
                 columns: str = ROW_COLUMNS) -> tuple[str, tuple[Any, ...]]:
        return (f"SELECT {columns} FROM node WHERE id IN (SELECT document_id FROM "
                f"({self.rows} LIMIT ? OFFSET ?) AS page) ORDER BY {self.order}",
                (*self.params, limit, offset))


class FieldSortListing(NodeListing):
    """The nodes of a scope sorted by one custom field's value (`sort=[-]cf_<id>`, a number,
    date or amount): first those with a value, read in value order from the values' own index
    (migration 0025), then those without one by id — the general order `(value IS NULL), value,
    id`, reversed by `-` with the empty ones still last, without looking up and sorting every
    node's value. `value_scope` is the scope as a condition on the values' listing keys."""

    def __init__(self, where: str, params: tuple[Any, ...], value_scope: str,
                 value_params: tuple[Any, ...], field_id: str, column: str, descending: bool):
        super().__init__(where, params, "id DESC" if descending else "id")
        direction = " DESC" if descending else ""
        self.values = (f"FROM custom_field_value WHERE field_id = ? AND {value_scope}"
                       f"trash_id IS NULL AND {column} IS NOT NULL")
        self.value_params = (field_id, *value_params)
        self.value_order = f"{column}{direction}, document_id{direction}"
        self.without = (f"NOT EXISTS (SELECT 1 FROM custom_field_value AS v WHERE "
                        f"v.document_id = node.id AND v.field_id = ? AND v.{column} IS NOT NULL)")
        self.field_id = field_id

    def fetch(self, offset: int, limit: int) -> list[NodeRow]:
        ids = [row[0] for row in database.execute_sql(*self.page_sql(offset, limit))]
        if len(ids) < limit:  # past the values: the nodes without one, where this page needs them
            with_value = offset + len(ids) if ids else cast(int, database.execute_sql(
                f"SELECT count(*) {self.values}", self.value_params).fetchone()[0])
            ids += [row[0] for row in database.execute_sql(
                f"SELECT id FROM node WHERE {self.where} AND {self.without} "
                f"ORDER BY {self.order} LIMIT ? OFFSET ?",
                (*self.params, self.field_id, limit - len(ids), max(0, offset - with_value)))]
        if not ids:
            return []
        found = {row[0]: NodeRow._make(row) for row in database.execute_sql(
            f"SELECT {ROW_COLUMNS} FROM node WHERE id IN ({','.join('?' * len(ids))})", ids)}
        return [found[node_id] for node_id in ids if node_id in found]

    def numbers(self) -> str:
        return self._numbers_of_rows()

    def page_sql(self, offset: int, limit: int,
                 columns: str = ROW_COLUMNS) -> tuple[str, tuple[Any, ...]]:
        """The page's documents with a value (the nodes without one follow, when it needs
        them)."""
        return (f"SELECT document_id {self.values} ORDER BY {self.value_order} LIMIT ? OFFSET ?",
                (*self.value_params, limit, offset))
