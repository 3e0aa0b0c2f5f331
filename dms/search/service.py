"""Search (api.md, "Search") as the API answers it: the caller's folders and documents best first,
each hit checked against the database, with breadcrumbs and highlighted snippets.

Bounded work: at most MAX_QUERY_WORDS words; each word a prefix expanded to its most frequent
terms (dms.search.index); hits are checked again in the database (owner, existence), so an index
that lags behind a change may miss or mis-rank a just-changed node but never shows a deleted one
or another user's; text snippets only for the first SNIPPET_RESULTS results (the rest get their
title highlighted when it matched), each made from at most the first 256 KiB of the document's
text in the database (read for the ten at once). The whole search stops at its deadline (503)
and as soon as its client is gone.

"Done" means findable (docs/api.md, "Search"): a document whose status is `succeeded` is found by
the next search. The engine's `view` gives what a search looks at: on tantivy, the index's last
commit with the caller's few finished changes it lacks laid over it (dms.search.overlay), or, when
they are many, the commit once the index holds every change to the caller's nodes committed before
the search began — waiting at most CATCH_UP_SECONDS within its deadline (dms.search.indexer applies
them ahead of other users'). Other users' changes never make it wait. Past the wait the index is
searched as it is: the lag above.
"""

from __future__ import annotations

import datetime as dt
import heapq
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from dms.db import DeadlinePassed, database, statement_deadline
from dms.db.models import Node, User
from dms.domain import tree
from dms.domain.access.rule import shared_among, sharers
from dms.domain.access.sight import Sight
from dms.domain.docfilters import Condition
from dms.domain.listings import Filters, of_kind, owner_filter
from dms.domain.metadata.filters import metadata_filter
from dms.domain.searchquery import (
    All,
    Meta,
    Not,
    Words,
    condition,
    has_words,
    is_plain,
    parse,
    resolve,
)
from dms.domain.searchquery import Any as AnyOf
from dms.domain.searchquery.resolve import Keys, document_ids
from dms.domain.tagfilter import tag_filter
from dms.domain.tags import tags_of
from dms.errors import Invalid, Unavailable
from dms.search import highlight
from dms.search.index import terms
from dms.search.window import MAX_WINDOW, Found, Window, page_window

if TYPE_CHECKING:
    from dms.domain.services import SearchEngine
    from dms.search.indexer import Indexer

MAX_QUERY_WORDS = 8
DEFAULT_LIMIT = 100
MAX_LIMIT = 500
SNIPPET_RESULTS = 10
IDS_PER_STATEMENT = 5000  # far below the 32,766 parameters SQLite takes
# The longest a search waits for the index to take its caller's changes (api.md, "Search"): far more
# than a commit of the index takes (~10 ms), for a machine busy with other work.
CATCH_UP_SECONDS = 3.0
# The snippets' texts: the first PAGES_AT_ONCE pages of each document's latest version in one
# statement (ten statements were a tenth of a search at 20,000 documents); a document whose
# first pages hold less than SCAN_CHARS has its further pages read on their own (PAGES_AFTER).
PAGES_AT_ONCE = 8
PAGES_START = """
    SELECT v.document_id, substr(p.text, 1, ?) FROM document_version AS v
    JOIN page AS p ON p.version_id = v.id
    WHERE v.document_id IN ({marks}) AND p.number <= ? AND v.number = (
        SELECT max(w.number) FROM document_version AS w WHERE w.document_id = v.document_id)
    ORDER BY v.document_id, p.number"""
PAGES_AFTER = """
    SELECT substr(text, 1, ?) FROM page WHERE version_id = (
        SELECT id FROM document_version WHERE document_id = ? ORDER BY number DESC LIMIT 1)
    AND number > ? ORDER BY number"""


def check_limit(raw: object) -> int:
    try:
        limit = int(raw)
    except (TypeError, ValueError):
        limit = 0
    if not 1 <= limit <= MAX_LIMIT:
        raise Invalid(f"limit must be a whole number from 1 to {MAX_LIMIT}.")
    return limit


def query(indexer: Indexer, user: User, text: str | None, limit: object = DEFAULT_LIMIT,
          timeout: float = 10.0, client_gone: Callable[[], bool] = lambda: False,
          tags: str | None = None, tags_op: str | None = None,
          about: Mapping[str, str] | None = None, language: bool = True,
          field: str = "q") -> list[dict]:
    """The caller's best matches first, in the shape of api.md, "Search"; without `text`, the
    caller's most recently changed documents. `text` is a query of the query language (api.md,
    "The query language"; `language` False: plain words whatever it holds); one it cannot read
    is an Invalid naming `field`. `tags`/`tags_op` keep only nodes with all (any) of those tags,
    the metadata filters in `about` (the request's query) only documents matching them: the best
    MAX_LIMIT matches are filtered."""
    window = Window(0, check_limit(limit), counted=False)
    return _found(indexer, user, text, window, timeout, client_gone, tags, tags_op, about,
                  language, field).results


def query_page(engine: SearchEngine, user: User, text: str | None, page: object,
               page_size: object = DEFAULT_LIMIT, timeout: float = 10.0,
               client_gone: Callable[[], bool] = lambda: False, tags: str | None = None,
               tags_op: str | None = None, about: Mapping[str, str] | None = None) -> dict:
    """One page of what `query` finds, with the total (api.md, "Search": `page`)."""
    window = page_window(page, page_size)
    found = _found(cast("Indexer", engine), user, text, window, timeout, client_gone, tags,
                   tags_op, about)
    total = found.total or 0
    return {"results": found.results, "count": total, "page": window.number,
            "pages": max(1, -(-total // window.size)), "page_size": window.size}


def _found(indexer: Indexer, user: User, text: str | None, window: Window, timeout: float,
           client_gone: Callable[[], bool], tags: str | None, tags_op: str | None,
           about: Mapping[str, str] | None, language: bool = True, field: str = "q") -> Found:
    only = tag_filter(user, tags, tags_op)
    if only is not None and only.matches_nothing:
        return Found([], 0)
    about = about or {}
    if text is None or not text.strip():
        return _listed(user, window, _recent_documents(user, tags, tags_op, about))
    tree = parse(text, utc_today(), field) if language else None
    if tree is not None and not is_plain(tree):
        resolved = resolve(user, tree, utc_today(), field)
        if not has_words(resolved):  # names and dates only: the document list's conditions
            return _listed(user, window, _recent_documents(user, tags, tags_op, about,
                                                           condition(resolved)))
        return _ranked(indexer, user, _shown_words(resolved)[:MAX_QUERY_WORDS], window, timeout,
                       client_gone, only, about, resolved, field)
    words = terms(text)[:MAX_QUERY_WORDS]
    if not words:
        return Found([], 0)
    return _ranked(indexer, user, words, window, timeout, client_gone, only, about)


def utc_today() -> dt.date:
    """The day relative dates count from: upload times are kept in UTC."""
    return dt.datetime.now(dt.UTC).date()


def _shown_words(tree: Any) -> list[str]:
    """The terms of the words a result is found by (not those under a NOT): highlighted."""
    if isinstance(tree, Words):
        return terms(tree.text)
    if isinstance(tree, (All, AnyOf)):
        return list(dict.fromkeys(word for part in tree.parts for word in _shown_words(part)))
    return []


def _with_ids(user: User, tree: Any, field: str) -> Any:
    """The tree with each leaf an index cannot tell (a custom field) made the documents the
    database finds for it."""
    if isinstance(tree, Meta) and tree.index is None:
        return Meta(tree.condition, tree.at, Keys("id", document_ids(user, tree, field)))
    if isinstance(tree, Not):
        return Not(_with_ids(user, tree.part, field))
    if isinstance(tree, (All, AnyOf)):
        return type(tree)(tuple(_with_ids(user, part, field) for part in tree.parts))
    return tree


def _ranked(indexer: Indexer, user: User, words: list[str], window: Window, timeout: float,
            client_gone: Callable[[], bool], only: Any, about: Mapping[str, str],
            tree: Any = None, field: str = "q") -> Found:
    """_ranking within the search's timeout: on PostgreSQL no statement of it runs longer
    either (dms.db.statement_deadline), a planner's mistake or a locked table included."""
    try:
        with statement_deadline(timeout):
            return _ranking(indexer, user, words, window, timeout, client_gone, only, about,
                            tree, field)
    except DeadlinePassed:
        raise Unavailable(_took_too_long(timeout)) from None


def _took_too_long(timeout: float) -> str:
    return (f"The search took longer than {timeout:g} s and was stopped; search for longer or "
            "more words.")


def _ranking(indexer: Indexer, user: User, words: list[str], window: Window, timeout: float,
             client_gone: Callable[[], bool], only: Any, about: Mapping[str, str],
             tree: Any = None, field: str = "q") -> Found:
    """The engine's best matches of `words` (or of the resolved `tree`, `words` its terms to
    highlight) in `window`, checked in the database, with snippets; counted if it asks.

    The total: the engine counts the caller's own matches; the matches of those who share with
    the caller, and all of them when metadata or owner filters apply (the database checks
    those), are counted among the best MAX_WINDOW of each owner that are checked."""
    about_filter = metadata_filter(user, about)
    whose = owner_filter(user, about.get("owner"))
    filtered = about_filter is not None or whose is not None
    deadline = time.monotonic() + timeout
    index = indexer.view(user.id, min(CATCH_UP_SECONDS, timeout))
    if index is None:
        raise Unavailable(not_ready(indexer))

    def should_stop() -> bool:
        return time.monotonic() > deadline or client_gone()

    def checked(owner_id: str) -> bool:  # counted among its hits that the database keeps
        return filtered or owner_id != user.id

    try:
        if tree is not None and not getattr(index, "reads_rows", False):
            tree = _with_ids(user, tree, field)
        ranked, total = [], 0
        for owner_id in [user.id, *sharers(user)]:  # what others share with the caller too
            tagged = (only.tag_ids, only.op) if only else ()
            if not window.counted:
                wanted = max(MAX_LIMIT, window.reach) if filtered else window.reach
            elif checked(owner_id):
                wanted = MAX_WINDOW
            else:
                wanted = window.reach
                total += (index.total(owner_id, words, *tagged) if tree is None
                          else index.total_tree(owner_id, tree, *tagged))
            ranked.append(index.search(owner_id, words, wanted, *tagged) if tree is None
                          else index.find(owner_id, tree, wanted, *tagged))
            if should_stop():
                raise highlight.Stopped()
        # Interleaved by score, each owner's list in its own order (the caller's own changes,
        # laid over the index, come first in theirs).
        hits = list(heapq.merge(*ranked, key=lambda hit: -hit[1]))
        nodes, parents = _readable(user, list(dict.fromkeys(node_id for node_id, _ in hits)),
                                   (only, about_filter, whose))
        scores: dict[str, float] = {}
        for node_id, score in hits:
            scores.setdefault(node_id, score)
        kept = [node_id for node_id in scores if node_id in nodes]
        total += sum(1 for node_id in kept if checked(nodes[node_id][3]))
        shown = kept[window.offset:window.reach]
        marks = highlight.Highlighter(words, should_stop)
        texts = _texts_start([node_id for node_id in shown[:SNIPPET_RESULTS]
                              if nodes[node_id][0] == "document"])
        titled = marks.titles([nodes[node_id][1] for node_id in shown],
                              [scores[node_id] < 0 for node_id in shown])
        results = []
        for rank, node_id in enumerate(shown):
            kind, title, _, _ = nodes[node_id]
            inside = scores[node_id] < 0  # found inside words only
            found = marks.snippet(texts[node_id], inside=inside) if node_id in texts else None
            if found is None:
                found = titled.get(rank)
            results.append((node_id, kind, title, found))
    except highlight.Stopped:
        raise Unavailable(_took_too_long(timeout)) from None
    known = {node_id: (parent_id, title) for node_id, (_, title, parent_id, _) in nodes.items()}
    return Found(_results(user, results, {**parents, **known},
                          {node_id: owner_id for node_id, (*_, owner_id) in nodes.items()}),
                 total if window.counted else None)


def _results(user: User, rows: list[tuple[str, str, str, str | None]],
             known: dict[str, tuple[str | None, str]] | None = None,
             owners: dict[str, str] | None = None) -> list[dict]:
    """(id, kind, title, highlight) rows in the shape of api.md, "Search"; `known`: {id: (parent id,
    title)} already read, for the breadcrumbs, and `owners` {id: owner id} of every row. A
    document someone shares with the caller shows its owner, the caller's role, and its path from
    their .shared folder (dms.domain.access.sight)."""
    ids = [row[0] for row in rows]
    crumbs, labels = tree.breadcrumbs(ids, known), tags_of(ids, user.id)
    if owners is None:
        owners = dict(database.execute_sql(
            f"SELECT id, owner_id FROM node WHERE id IN ({','.join('?' * len(ids))})", ids)
            .fetchall()) if ids else {}
    sight = Sight(user)
    sight.owners(set(owners.values()))
    results = []
    for node_id, kind, title, found in rows:
        path = crumbs[node_id]
        shown = sight.shown(node_id, owners.get(node_id, user.id),
                            path[-2][1] if len(path) > 1 else None, path)
        results.append({
            "id": node_id,
            "title": title,
            "node_type": kind,
            "breadcrumb": [crumb_title for crumb_title, _ in shown.breadcrumb],
            "tags": [label["name"] for label in labels[node_id]],
            "highlight": found,
            "text": None,
            "user_id": None,
            "owner": shown.owner,
            "access": shown.access,
        })
    return results


def _recent_documents(user: User, tags: str | None, tags_op: str | None,
                      about: Mapping[str, str], also: Condition | None = None) -> Any:
    """GET /search/ without q (or with only names and dates: `also`): the caller's documents and
    those shared with them, most recently changed first: the list of all documents
    (dms.domain.listings.of_kind) in that order."""
    return of_kind(user, Node.DOCUMENT, tags, tags_op, {**about, "sort": "-updated_at"},
                   extra=[also] if also is not None else ())


def _listed(user: User, window: Window, listing: Any) -> Found:
    """A window of a listing, counted by the database if asked."""
    total = listing.count() if window.counted else None
    rows = [] if total is not None and window.offset >= total else (
        listing.fetch(window.offset, window.size))
    return Found(_results(user, [(row.id, row.kind, row.title, None) for row in rows]), total)


def not_ready(indexer: Indexer) -> str:
    if getattr(indexer, "message", None):
        return indexer.message
    done, total = indexer.progress
    if total:
        return (f"The search index is being built ({done:,} of {total:,} folders and documents); "
                "search again in a moment.")
    return "The search index is being opened; search again in a moment."


def _conditions(only: Filters) -> tuple[str, tuple[Any, ...]]:
    """The filters' conditions ANDed (TRUE without any) and their parameters."""
    parts = [part.sql() for part in only if part is not None]
    if not parts:
        return "TRUE", ()
    return " AND ".join(sql for sql, _ in parts), tuple(p for _, params in parts for p in params)


def _readable(user: User, node_ids: list[str], only: Filters
              ) -> tuple[dict[str, tuple[str, str, str | None, str]],
                         dict[str, tuple[str | None, str]]]:
    """{id: (kind, title, parent id, owner id)} of those hits that are still the caller's nodes
    or shared with them (and still match the filters), and {parent id: (its parent id, title)}
    of their folders, read in the same statement (the breadcrumbs' first level)."""
    condition, extra = _conditions(only)
    rows = []
    for start in range(0, len(node_ids), IDS_PER_STATEMENT):
        chosen = node_ids[start:start + IDS_PER_STATEMENT]
        # The owner is compared here, not in SQL: given `owner_id = ?`, SQLite chose the
        # owner's index and read all of the owner's nodes (8.8 ms at 20,000 documents, 500 ms
        # at a million) instead of looking up these few ids.
        # The filters name the hits' columns unqualified: they apply inside, the join outside.
        rows += database.execute_sql(
            f"SELECT hit.*, above.parent_id, above.title FROM ("
            f"SELECT id, owner_id, kind, title, parent_id FROM node WHERE id IN "
            f"({','.join('?' * len(chosen))}) AND {condition} AND trash_id IS NULL) AS hit "
            f"LEFT JOIN node AS above ON above.id = hit.parent_id", (*chosen, *extra)).fetchall()
    shared = shared_among(user.id, [row[0] for row in rows if row[1] != user.id])
    nodes, parents = {}, {}
    for node_id, owner_id, kind, title, parent_id, above_parent, above_title in rows:
        if owner_id == user.id or node_id in shared:
            nodes[node_id] = (kind, title, parent_id, owner_id)
            if parent_id is not None:
                parents[parent_id] = (above_parent, above_title)
    return nodes, parents


def _texts_start(document_ids: list[str]) -> dict[str, str]:
    """{id: the first SCAN_CHARS characters of the document's text (its latest version's
    pages)} for a few documents at once."""
    if not document_ids:
        return {}
    parts: dict[str, list[str]] = {document_id: [] for document_id in document_ids}
    sizes = dict.fromkeys(document_ids, 0)
    for document_id, text in database.execute_sql(
            PAGES_START.format(marks=",".join("?" * len(document_ids))),
            (highlight.SCAN_CHARS, *document_ids, PAGES_AT_ONCE)):
        if sizes[document_id] < highlight.SCAN_CHARS:  # later pages past the limit: not used
            parts[document_id].append(text)
            sizes[document_id] += len(text) + 2
    for document_id, pages in parts.items():
        if len(pages) == PAGES_AT_ONCE and sizes[document_id] < highlight.SCAN_CHARS:
            for (text,) in database.execute_sql(
                    PAGES_AFTER, (highlight.SCAN_CHARS, document_id, PAGES_AT_ONCE)):
                pages.append(text)
                sizes[document_id] += len(text) + 2
                if sizes[document_id] >= highlight.SCAN_CHARS:
                    break
    return {document_id: "\n\n".join(pages) for document_id, pages in parts.items()}
