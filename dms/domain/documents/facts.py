"""Everything a page of documents shows at once (the Paperless-ngx dialect's documents, api.md
§17): each document's number, its node, what it is about (dms.domain.metadata.document.about),
the caller's tags on it, its latest version (type, checksum, name, whether a searchable PDF was
made), its text and its notes — a fixed number of queries per IDS_PER_QUERY documents, never one
per document. The documents are ones the caller reaches (the listing or the rule chose them); a
listing's page hands over the rows it read (facts_of_rows), so that they are not read again."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from dms.db import database
from dms.db.models import DOCUMENT_DATE, PAGE_SEPARATOR
from dms.domain.metadata.document import Head, about_heads
from dms.domain.nodepages import NodeRow

IDS_PER_QUERY = 500


class Version(NamedTuple):
    id: str
    mime_type: str
    sha256: str
    file_name: str
    searchable: bool
    created_at: str


class NoteFact(NamedTuple):
    id: str
    number: int
    note: str
    created_at: str
    user_id: str | None
    username: str | None


class DocumentFacts(NamedTuple):
    id: str
    number: int
    owner_id: str
    title: str
    created_at: str
    updated_at: str
    page_count: int
    about: dict[str, Any]  # correspondent, document_type, document_date, asn, custom_fields
    tag_ids: list[str]  # the caller's tags on it
    latest: Version | None
    text: str
    notes: list[NoteFact]


class _Node(NamedTuple):
    """A document's own columns that its facts show."""
    id: str
    seq: int
    owner_id: str
    title: str
    created_at: str
    updated_at: str
    page_count: int
    head: Head  # what `about` reads from the node itself


def facts(document_ids: list[str], viewer_id: str, with_text: bool = True) -> \
        dict[str, DocumentFacts]:
    """{id: its facts} of these live documents, for the user `viewer_id` (whose tags show)."""
    found: dict[str, DocumentFacts] = {}
    for start in range(0, len(document_ids), IDS_PER_QUERY):
        ids = document_ids[start:start + IDS_PER_QUERY]
        nodes = [_Node(node_id, seq, owner_id, title, created_at, updated_at, page_count,
                       (node_id, correspondent, document_type, date, asn, seq))
                 for node_id, seq, owner_id, title, created_at, updated_at, page_count,
                 correspondent, document_type, date, asn in database.execute_sql(
                     "SELECT id, seq, owner_id, title, created_at, updated_at, page_count, "
                     f"correspondent_id, document_type_id, {DOCUMENT_DATE}, asn FROM node "
                     f"WHERE id IN ({','.join('?' * len(ids))}) AND kind = 'document'", ids)]
        found.update(_facts(nodes, viewer_id, with_text))
    return found


def facts_of_rows(rows: Sequence[NodeRow], viewer_id: str) -> dict[str, DocumentFacts]:
    """As `facts` (with the text), of the documents among a listing's `rows`, without reading
    their nodes again: of a page of 100 in the Paperless-ngx dialect, two statements fewer."""
    nodes = [_Node(row.id, row.seq or 0, row.owner_id, row.title, row.created_at,
                   row.updated_at, row.page_count, (row.id, row.correspondent_id,
                                                    row.document_type_id, row.document_date,
                                                    row.asn, row.seq))
             for row in rows if row.kind == "document"]
    found: dict[str, DocumentFacts] = {}
    for start in range(0, len(nodes), IDS_PER_QUERY):
        found.update(_facts(nodes[start:start + IDS_PER_QUERY], viewer_id, True))
    return found


def _facts(nodes: list[_Node], viewer_id: str, with_text: bool) -> dict[str, DocumentFacts]:
    if not nodes:
        return {}
    ids = [node.id for node in nodes]
    marks = ",".join("?" * len(ids))
    tags: dict[str, list[str]] = {}
    for node_id, tag_id in database.execute_sql(
            f"SELECT nt.node_id, nt.tag_id FROM node_tag AS nt JOIN tag AS t ON t.id = nt.tag_id "
            f"WHERE nt.node_id IN ({marks}) AND t.owner_id = ? ORDER BY t.name_key",
            (*ids, viewer_id)):
        tags.setdefault(node_id, []).append(tag_id)
    # The latest version of each, with its pages' text in order (a version without pages: one
    # row, its text NULL).
    latest: dict[str, Version] = {}
    texts: dict[str, list[str]] = {}
    text = "p.text" if with_text else "NULL"
    pages = "LEFT JOIN page AS p ON p.version_id = v.id" if with_text else ""
    order = "ORDER BY v.document_id, p.number" if with_text else ""
    for row in database.execute_sql(
            "SELECT v.document_id, v.id, v.mime_type, v.sha256, v.file_name, "
            f"v.searchable_size IS NOT NULL, v.created_at, {text} FROM document_version AS v "
            f"{pages} WHERE v.document_id IN ({marks}) AND v.number = (SELECT max(number) FROM "
            f"document_version WHERE document_id = v.document_id) {order}", ids):
        if row[0] not in latest:
            latest[row[0]] = Version(row[1], row[2], row[3], row[4], bool(row[5]), row[6])
        if row[7] is not None:
            texts.setdefault(row[0], []).append(row[7])
    notes: dict[str, list[NoteFact]] = {}
    for row in database.execute_sql(
            "SELECT n.document_id, n.id, n.seq, n.note, n.created_at, n.user_id, u.username "
            'FROM note AS n LEFT JOIN "user" AS u ON u.id = n.user_id '
            f"WHERE n.document_id IN ({marks}) ORDER BY n.created_at, n.seq", ids):
        notes.setdefault(row[0], []).append(NoteFact(*row[1:]))
    metadata = about_heads([node.head for node in nodes])
    return {node.id: DocumentFacts(
        node.id, node.seq, node.owner_id, node.title, node.created_at, node.updated_at,
        node.page_count, metadata.get(node.id, {}), tags.get(node.id, []),
        latest.get(node.id), PAGE_SEPARATOR.join(texts.get(node.id, [])),
        notes.get(node.id, [])) for node in nodes}
