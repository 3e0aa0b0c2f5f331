"""Everything a page of documents shows at once (the Paperless-ngx dialect's documents, api.md
§17): each document's number, its node, what it is about (dms.domain.metadata.document.about),
the caller's tags on it, its latest version (type, checksum, name, whether a searchable PDF was
made), its text and its notes — a fixed number of queries per IDS_PER_QUERY documents, never one
per document. The documents are ones the caller reaches (the listing or the rule chose them)."""

from __future__ import annotations

from typing import Any, NamedTuple

from dms.db import database
from dms.db.models import PAGE_SEPARATOR
from dms.domain.metadata.document import about

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


def facts(document_ids: list[str], viewer_id: str, with_text: bool = True) -> \
        dict[str, DocumentFacts]:
    """{id: its facts} of these live documents, for the user `viewer_id` (whose tags show)."""
    found: dict[str, DocumentFacts] = {}
    for start in range(0, len(document_ids), IDS_PER_QUERY):
        found.update(_facts(document_ids[start:start + IDS_PER_QUERY], viewer_id, with_text))
    return found


def _facts(ids: list[str], viewer_id: str, with_text: bool) -> dict[str, DocumentFacts]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    nodes = database.execute_sql(
        f"SELECT id, seq, owner_id, title, created_at, updated_at, page_count FROM node "
        f"WHERE id IN ({marks}) AND kind = 'document'", ids).fetchall()
    tags: dict[str, list[str]] = {}
    for node_id, tag_id in database.execute_sql(
            f"SELECT nt.node_id, nt.tag_id FROM node_tag AS nt JOIN tag AS t ON t.id = nt.tag_id "
            f"WHERE nt.node_id IN ({marks}) AND t.owner_id = ? ORDER BY t.name_key",
            (*ids, viewer_id)):
        tags.setdefault(node_id, []).append(tag_id)
    latest: dict[str, Version] = {}
    for row in database.execute_sql(
            "SELECT v.document_id, v.id, v.mime_type, v.sha256, v.file_name, "
            "v.searchable_size IS NOT NULL, v.created_at FROM document_version AS v "
            f"WHERE v.document_id IN ({marks}) AND v.number = (SELECT max(number) FROM "
            "document_version WHERE document_id = v.document_id)", ids):
        latest[row[0]] = Version(row[1], row[2], row[3], row[4], bool(row[5]), row[6])
    texts: dict[str, list[str]] = {}
    if with_text and latest:
        version_of = {version.id: document_id for document_id, version in latest.items()}
        for version_id, text in database.execute_sql(
                "SELECT version_id, text FROM page WHERE version_id IN "
                f"({','.join('?' * len(version_of))}) ORDER BY version_id, number",
                list(version_of)):
            texts.setdefault(version_of[version_id], []).append(text)
    notes: dict[str, list[NoteFact]] = {}
    for row in database.execute_sql(
            "SELECT n.document_id, n.id, n.seq, n.note, n.created_at, n.user_id, u.username "
            'FROM note AS n LEFT JOIN "user" AS u ON u.id = n.user_id '
            f"WHERE n.document_id IN ({marks}) ORDER BY n.created_at, n.seq", ids):
        notes.setdefault(row[0], []).append(NoteFact(*row[1:]))
    metadata = about(ids)
    return {node_id: DocumentFacts(
        node_id, seq, owner_id, title, created_at, updated_at, page_count,
        metadata.get(node_id, {}), tags.get(node_id, []), latest.get(node_id),
        PAGE_SEPARATOR.join(texts.get(node_id, [])), notes.get(node_id, []))
        for node_id, seq, owner_id, title, created_at, updated_at, page_count in nodes}
