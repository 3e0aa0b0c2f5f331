"""The words of a document's metadata that search finds (api.md §16): its correspondent's and
document type's names, the text values of its custom fields (string, longtext, url, a select's
label) and its notes, newest first, cut at MAX_SEARCH_CHARS. The tantivy index reads them here;
PostgreSQL's search computes the same in SQL (dms_search_metadata, migration 0021). Numbers,
dates and amounts are found with custom field queries, not words."""

from __future__ import annotations

import json

from dms.db import database

MAX_SEARCH_CHARS = 100_000  # as migration 0021's SEARCH_EXTRA_CHARS: a tsvector holds ≤ 1 MiB
NAMES = ("SELECT c.name, d.name FROM node AS n "
         "LEFT JOIN correspondent AS c ON c.id = n.correspondent_id "
         "LEFT JOIN document_type AS d ON d.id = n.document_type_id WHERE n.id = ?")
VALUES = ("SELECT f.data_type, f.extra_data, v.value_text FROM custom_field_value AS v "
          "JOIN custom_field AS f ON f.id = v.field_id WHERE v.document_id = ? "
          "AND f.data_type IN ('string', 'longtext', 'url', 'select') "
          "AND v.value_text IS NOT NULL ORDER BY f.name_key")
NOTES = ("SELECT substr(note, 1, ?) FROM note WHERE document_id = ? "
         "ORDER BY created_at DESC, id LIMIT 1000")


def search_words(document_id: str) -> str:
    parts: list[str] = []
    row = database.execute_sql(NAMES, (document_id,)).fetchone()
    if row is not None:
        parts.extend(name for name in row if name)
    for data_type, extra_data, value in database.execute_sql(VALUES, (document_id,)):
        if data_type == "select":
            labels = {option.get("id"): option.get("label")
                      for option in json.loads(extra_data).get("select_options", [])}
            value = labels.get(value)
        if value:
            parts.append(value)
    used = sum(len(part) + 1 for part in parts)
    for (note,) in database.execute_sql(NOTES, (MAX_SEARCH_CHARS, document_id)):
        if used >= MAX_SEARCH_CHARS:
            break
        parts.append(note)
        used += len(note) + 1
    return " ".join(parts)[:MAX_SEARCH_CHARS]
