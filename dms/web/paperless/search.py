"""The dialect's searches (api.md §17): the global search of Paperless-ngx's apps (documents by
dms's full-text search, and the caller's labels whose names contain the words) and word
completion (the words beginning so in the titles and texts of the best matches, most frequent
first)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, cast

from dms import search
from dms.domain import savedsearches
from dms.domain.rows import DOCUMENT
from dms.web.paperless import views
from dms.web.paperless.documents import shapes
from dms.web.paperless.labels import KINDS, shaped
from dms.web.paperless.protocol import Call, Routes, detail

routes = Routes()

GLOBAL_DOCUMENTS = 3  # documents the global search shows, as Paperless-ngx's
GLOBAL_OBJECTS = 3
COMPLETIONS = 10
WORD = re.compile(r"\w+")


def _hits(call: Call, text: str, limit: int) -> list[dict[str, Any]]:
    # Services names the engine by a narrower protocol than the search takes (as dms's own
    # GET /search/ does; a known gap of the type hints listed in mypy-baseline.txt).
    engine = cast("search.Indexer", call.services.search)
    return [hit for hit in search.query(engine, call.user, text, limit,
                                        call.config.search_timeout_seconds, language=False)
            if hit["node_type"] == DOCUMENT]


@routes.add("GET", "/api/search/")
def global_search(call: Call) -> Any:
    text = (call.arg("query") or "").strip()
    if not text:
        raise detail(400, "Query required")
    if len(text) < 3:
        raise detail(400, "Query must be at least 3 characters")
    db_only = (call.arg("db_only") or "").lower() in ("true", "1")
    documents = [] if db_only else shapes(
        call, [hit["id"] for hit in _hits(call, text, GLOBAL_DOCUMENTS)])
    wanted = text.casefold()
    found: dict[str, list[dict[str, Any]]] = {}
    for kind in KINDS:
        rows = [row for row in kind.rows(call.user) if wanted in row.name.casefold()]
        found[kind.path] = shaped(call, kind, rows[:GLOBAL_OBJECTS])
    found["saved_views"] = views.shaped(call, [
        row for row in savedsearches.searches_of(call.user)
        if wanted in row.name.casefold()][:GLOBAL_OBJECTS])
    return {"total": len(documents) + sum(len(rows) for rows in found.values()),
            "documents": documents, "saved_views": found["saved_views"], "tags": found["tags"],
            "correspondents": found["correspondents"],
            "document_types": found["document_types"], "storage_paths": [], "users": [],
            "groups": [], "mail_rules": [], "mail_accounts": [], "workflows": [],
            "custom_fields": found["custom_fields"]}


@routes.add("GET", "/api/search/autocomplete/")
def autocomplete(call: Call) -> list[str]:
    term = (call.arg("term") or "").strip().casefold()
    if not term:
        raise detail(400, "Term required")
    raw_limit = call.arg("limit") or str(COMPLETIONS)
    limit = min(int(raw_limit), 100) if raw_limit.isascii() and raw_limit.isdigit() \
        and len(raw_limit) <= 4 and int(raw_limit) > 0 else COMPLETIONS
    counted: Counter[str] = Counter()
    for hit in _hits(call, term, search.MAX_LIMIT):
        for word in WORD.findall(f"{hit['title']} {hit['highlight'] or ''}".casefold()):
            if word.startswith(term):
                counted[word] += 1
    return [word for word, _ in sorted(counted.items(), key=lambda item: (-item[1], item[0]))
            [:limit]]
