"""Search inside PostgreSQL: the same interface as the tantivy Indexer (dms.search.indexer), over
the `search_entry` table that the database's own triggers keep in step with the nodes, their
text and their tags, in the same transaction as each change (schema: postgresql_baseline.sql).

Matching, as the tantivy engine matches: every word of the query must match, as a prefix of
title and tag words from MIN_TITLE_PREFIX letters on and of text words from MIN_TEXT_PREFIX
letters on; shorter, only itself. A prefix of 3 to 5 letters is one lexeme of its own (`~inv`:
the schema stores the beginnings of every word), so it costs one GIN key however many words
begin with it; a longer one is the owner's own words that begin with it (see Ranking; to_tsquery,
as websearch_to_tsquery cannot do prefixes). Query words arrive folded by the tantivy analyzer
(dms.search.index.terms: lower case, accents folded), as the schema's dms_fold configuration
folds the documents' words, and are given to PostgreSQL as tsquery literals.

Ranking: titles and tag names that hold more of the words first, body-only matches after them.
A word longer than the stored beginnings is a prefix: the owner's words that begin with it,
each by its own postings (dms.search.pgwords; past PREFIX_EXPANSIONS of them, to_tsquery's `:*`,
which GIN matches by gathering the postings of every owner's words that begin with it). The
rows that hold such words whole are looked for first, and the prefixes only when those are fewer
than the page and the owner has a longer word that begins with one (after them: whole words
rank first). The count is of the prefixes.

GIN finds the matching rows but cannot rank a top-k, so a query reads at most CANDIDATES matching
rows whose heading holds a query word (by the heading's own index), in the order the index
yields them, and ranks those by ts_rank of the weighted heading; when they are fewer than the
page, the body-only matches follow, only as many as the page still needs, in table order (by id
within the page). When more rows match (a very common word or a short prefix), the best of the
first CANDIDATES are returned, not necessarily the best of all; another or a longer word narrows
the search. (A page deeper than CANDIDATES reads as many as it reaches.) The total of a paged
search is count(*) of the same condition. The rows come from the GIN indexes' bitmaps only
(BITMAPS_ONLY): PostgreSQL cannot estimate a prefix's or a rare pair's matches, and under a LIMIT
it would walk all of an owner's rows instead; a single word its statistics count in most rows is
the exception, looked for among the owner's first rows (WALK_ROWS) before its bitmap. Each
statement is planned for its own words, never by a generic plan kept for a prepared statement.

Inside compound words (the second tier, after every match of the words themselves): a word of
MIN_INNER letters or more is first looked up among the inner parts of the indexed words (all
owners', stored once: search_part, migration 0039), as the beginning of a part: the first
INNER_EXPANSIONS of the owner's words that hold it (dms.search.pgwords; in the order of their
parts, then of the words: `heit` finds `freiheit` before `gesundheitlich`) are then matched as
whole words, an array of alternatives that GIN scans one by one (pgquery.EVERYWHERE_ANY). A
piece inside more words than that finds the documents of those words only, as tantivy's
expansion is bounded (dms.search.terms); the parts read to find them are bounded too
(INNER_SCAN: a piece inside more words of everyone's vocabulary looks among the first of them).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator

from dms.db import database, write_transaction
from dms.domain.tagfilter import TagFilter
from dms.search.pgquery import (
    MIN_TITLE_PREFIX,
    Inner,
    Prefixes,
    alternatives,
    condition,
    long_prefixes,
    match,
    ranked_words,
    tsquery,
)
from dms.search.pgwords import inner_words, owner_prefixes
from dms.search.terms import inside, looks_inside
from dms.search.treequery import looks_inside_tree

CANDIDATES = 2000
REBUILD_BATCH = 500
# The text's own rank is left out: without positions it would only count which words a text
# holds, which every candidate does, and it would read every candidate's text once more.
SEARCH = """
    WITH candidates AS MATERIALIZED (
        SELECT s.node_id, s.heading FROM search_entry AS s {join}
        WHERE s.owner_id = ?{headed} AND {match}
        LIMIT ?)
    SELECT node_id FROM candidates
    ORDER BY ts_rank(heading, ?::tsquery) DESC, node_id
    LIMIT ?"""
# A word in most documents would make SEARCH test its first CANDIDATES rows' bodies, each
# decompressed from TOAST (~65 us a row: 134 ms at 3,000 documents, bench/pgplans.py). The rows
# that rank first are those whose heading holds a query word: taken first by the heading's own
# index (HEADED), then only as many body-only matches as the page still needs, in table order.
HEADED = " AND s.heading @@ ANY(?::tsquery[])"  # pgquery.alternatives: one scan each
# Both parts of a tier in one statement (one round trip and one plan instead of two; with 1,000
# owners a two-word search ran up to 16 statements, each planned for its own words): the
# body-only matches are read only when the headed ones are fewer than the page, and only as
# many as it still needs — LIMIT 0 reads nothing (the headed rows' count is an InitPlan, run
# once). Headed rows first by rank, then the body-only ones by id.
TIER = """
    WITH candidates AS MATERIALIZED (
        SELECT s.node_id, s.heading FROM search_entry AS s {join}
        WHERE s.owner_id = ?""" + HEADED + """ AND {headed_match}
        LIMIT ?),
    headed AS MATERIALIZED (
        SELECT node_id, ts_rank(heading, ?::tsquery) AS rank FROM candidates
        ORDER BY rank DESC, node_id LIMIT ?),
    body AS MATERIALIZED (
        SELECT s.node_id FROM search_entry AS s {join}
        WHERE s.owner_id = ? AND NOT (s.heading @@ ?::tsquery) AND {match}
        LIMIT greatest(? - (SELECT count(*) FROM headed), 0))
    SELECT node_id FROM (
        SELECT node_id, 0 AS part, rank FROM headed
        UNION ALL
        SELECT node_id, 1, 0 FROM body) AS found
    ORDER BY part, rank DESC, node_id"""
BODY_ONLY = """
    SELECT node_id FROM (
        SELECT s.node_id FROM search_entry AS s {join}
        WHERE s.owner_id = ? AND NOT (s.heading @@ ?::tsquery) AND {match}
        LIMIT ?) AS found
    ORDER BY node_id"""
# A word in nearly every body is found in the first of the owner's rows: walking them (by the
# owner's index) took 2 ms for `the` at a million documents, its words' bitmap 64 ms — but 10.9 s
# for a piece in no body, walking them all. So the walk is taken only for one word that
# PostgreSQL's statistics of the words' index (ANALYZE's most common elements) count in at least
# COMMON_SHARE of the rows, and only over the owner's first WALK_ROWS rows (the bitmap follows
# when those hold fewer than the page needs); any other word by its bitmap.
COMMON_SHARE = 0.2
WALK_ROWS = 2000
STATISTICS_SECONDS = 600  # how long the statistics read are kept (ANALYZE changes them rarely)
COMMON_LEXEMES = """
    SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats
    WHERE schemaname = current_schema() AND tablename = 'search_entry_words'"""
BODY_WALK = """
    SELECT node_id FROM (
        SELECT s.node_id FROM (SELECT * FROM search_entry WHERE owner_id = ? LIMIT ?) AS s {join}
        WHERE NOT (s.heading @@ ?::tsquery) AND {match}
        LIMIT ?) AS found
    ORDER BY node_id"""
INDEX_SCANS = "SELECT set_config('enable_indexscan', ?, true)"
COUNT = "SELECT count(*) FROM search_entry AS s {join} WHERE s.owner_id = ? AND {match}"
# Left to itself, the planner reads the table (or all the owner's rows, by their index) and tests
# each row's body from TOAST, which it does not cost: a count of a word in most rows 1.0-1.9 s at
# 100,000 documents, and the body-only matches of two words it expected in more rows 200 ms
# (bench/RESULTS.md). By the words' index's bitmap and the rows' own pages instead: 36-48 ms and
# 7 ms. The searches too: with a LIMIT, a match it expects in 5,000 of a million rows made it walk
# the owner's index (all of one owner's rows) until enough matched — 10.9 s for a piece found
# nowhere but inside words, where the bitmap takes 0.06 ms (bench/RESULTS.md, 2026-12-02). Only
# inside a search's own transaction (or savepoint), which ends with the settings. Index-only
# scans stay (the words inside which a piece lies are read by one). And a plan for the values
# at hand each time: psycopg prepares a statement run five times on a connection, and PostgreSQL
# may then keep a generic plan made without the tsqueries — for a 3-letter prefix a BitmapOr of
# the heading's and the words' indexes whose rows' bodies it reads, 17 → 100 ms at a million
# (bench/RESULTS.md, 2026-12-02).
BITMAPS_ONLY = ("SELECT set_config('enable_seqscan', 'off', true), "
                "set_config('enable_indexscan', 'off', true), "
                "set_config('plan_cache_mode', 'force_custom_plan', true)")
# A search row's node is its owner's and never in the trash (migration 0013), and every node is a
# folder or a document: said in the join, those let the node's own indexes led by the owner
# find the rows where the node's condition is the narrower. `vertrag created:2019` at a million
# documents, none of 2019: 2.2 s joining the 675,770 bodies that hold the word to their nodes,
# 17 ms by the owner's dates (node_owner_document_date; bench/RESULTS.md, 2026-12-02).
NODE_JOIN = ("JOIN node ON node.id = s.node_id AND node.owner_id = s.owner_id "
             "AND node.kind IN ('document', 'folder') AND node.trash_id IS NULL")


class PostgresSearch:
    """Always ready: there is no separate index to open, build or catch up."""
    ready = True
    reads_rows = True  # a query's custom fields are conditions of its own statement
    progress = (0, 0)
    message = None

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def notify(self) -> None:
        pass

    def status(self) -> dict:
        return {"state": "ready", "engine": "postgresql", "pending_changes": 0}

    def view(self, owner_id: str, seconds: float) -> PostgresSearch:
        """Always caught up: each change writes its entry in its own transaction."""
        return self

    def searchable(self) -> PostgresSearch:
        return self

    def search(self, owner_id: str, words: list[str], limit: int,
               tag_ids: tuple[str, ...] = (), tags_op: str = "all") -> list[tuple[str, float]]:
        """The owner's best matches for `words` (index terms) as (node id, score); with
        `tag_ids`, only nodes carrying all (or any) of those tags. Matches inside words after
        the others, as tantivy's (dms.search.snapshot)."""
        with planned(BITMAPS_ONLY):
            return self._tiered(owner_id, "", lambda inner, first, prefixes:
                                match(words, inner, first, prefixes),
                                any(looks_inside(word) for word in words), words, limit,
                                tag_ids, tags_op)

    def find(self, owner_id: str, tree, limit: int, tag_ids: tuple[str, ...] = (),
             tags_op: str = "all") -> list[tuple[str, float]]:
        """As `search`, for a resolved tree of the query language (dms.search.pgquery): one
        statement per tier, the tree's names and dates read from the node row."""
        with planned(BITMAPS_ONLY):
            return self._tiered(owner_id, NODE_JOIN,
                                lambda inner, first, prefixes:
                                condition(tree, inner, first, prefixes),
                                looks_inside_tree(tree), ranked_words(tree), limit, tag_ids,
                                tags_op)

    def total(self, owner_id: str, words: list[str], tag_ids: tuple[str, ...] = (),
              tags_op: str = "all") -> int:
        """How many nodes `search` finds in all: counted from the GIN index's bitmap, no row
        ranked."""
        inner = (inner_words(owner_id, words) if any(looks_inside(word) for word in words)
                 else None)
        prefixes = owner_prefixes(owner_id, long_prefixes(words))
        where, params = match(words, inner, prefixes=prefixes)
        return self._counted(owner_id, "", where, params, tag_ids, tags_op)

    def total_tree(self, owner_id: str, tree, tag_ids: tuple[str, ...] = (),
                   tags_op: str = "all") -> int:
        """How many nodes `find` finds in all."""
        ranked = ranked_words(tree)
        inner = inner_words(owner_id, ranked) if looks_inside_tree(tree) else None
        prefixes = owner_prefixes(owner_id, long_prefixes(ranked))
        where, params = condition(tree, inner, prefixes=prefixes)
        return self._counted(owner_id, NODE_JOIN, where, params, tag_ids, tags_op)

    @staticmethod
    def _tiered(owner_id: str, join: str,
                where_of: Callable[[Inner, bool, Prefixes], tuple[str, list]], broadens: bool,
                ranked: list[str], limit: int, tag_ids: tuple[str, ...],
                tags_op: str) -> list[tuple[str, float]]:
        """The best `limit` matching where_of(None, ..., each long prefix as itself) (when a
        ranked word is a long prefix), then, while they are fewer and one of them begins more
        of the owner's words, the best matching where_of(None, ..., the owner's words that
        begin with them), then the best matching where_of(the words inside which the ranked
        words lie, ...) only; where_of's second argument: test the heading first
        (pgquery.HEADING_FIRST). Scores only order the results: the best of the first tiers
        gets their number of rows, the last 1; the inner tier's are made negative
        (terms.inside)."""
        tags, extra = "", ()
        if tag_ids:
            sql, extra = TagFilter(tuple(tag_ids), tags_op).sql()
            join, tags = NODE_JOIN, f" AND {sql}"

        def rows(where_for: Callable[[bool], tuple[str, list]], inner: Inner, wanted: int,
                 prefixes: Prefixes) -> list[str]:
            where, params = where_for(False)
            if not ranked:
                return [node_id for (node_id,) in database.execute_sql(
                    SEARCH.format(join=join, headed="", match=where + tags),
                    (owner_id, *params, *extra, max(CANDIDATES, wanted), "", wanted))]
            any_word = tsquery(ranked, "|", MIN_TITLE_PREFIX, inner, prefixes)  # the rank's
            heading_holds = alternatives(ranked, MIN_TITLE_PREFIX, inner, prefixes)
            # One word: a heading that holds it matches, and its body need not be read. More:
            # the heading may hold one of them only, and the words' index narrows the rows
            # (a BitmapAnd with the heading's), which HEADING_FIRST's OR would forgo.
            headed_where, headed_params = where_for(len(ranked) == 1)
            headed_part = (owner_id, heading_holds, *headed_params, *extra,
                           max(CANDIDATES, wanted), any_word, wanted)
            if inner is not None or len(ranked) > 1 or not common(any_word):
                return [node_id for (node_id,) in database.execute_sql(
                    TIER.format(join=join, headed_match=headed_where + tags, match=where + tags),
                    (*headed_part, owner_id, any_word, *params, *extra, wanted))]
            headed = [node_id for (node_id,) in database.execute_sql(
                SEARCH.format(join=join, headed=HEADED, match=headed_where + tags),
                headed_part)]
            if len(headed) >= wanted:
                return headed
            needed = wanted - len(headed)
            database.execute_sql(INDEX_SCANS, ("on",))  # the walk, by the owner's index
            walked = [node_id for (node_id,) in database.execute_sql(
                BODY_WALK.format(join=join, match=where + tags),
                (owner_id, WALK_ROWS, any_word, *params, *extra, needed))]
            database.execute_sql(INDEX_SCANS, ("off",))
            if len(walked) >= needed:
                return headed + walked
            return headed + [node_id for (node_id,) in database.execute_sql(
                BODY_ONLY.format(join=join, match=where + tags),
                (owner_id, any_word, *params, *extra, needed))]

        def leaving_out(found: list[str], inner: Inner,
                        prefixes: Prefixes) -> Callable[[bool], tuple[str, list]]:
            """where_of without the nodes found by an earlier tier: when that tier found
            fewer than it was asked for, they are all of its matches (matching it again would
            read every candidate's text from TOAST)."""
            def where_for(heading_first: bool) -> tuple[str, list]:
                where, params = where_of(inner, heading_first, prefixes)
                if not found:
                    return where, params
                return f"({where}) AND s.node_id NOT IN ({','.join('?' * len(found))})", \
                    [*params, *found]
            return where_for

        first: list[str] = []
        longs = long_prefixes(ranked)
        itself = {word: (word,) for word in longs}
        prefixes: Prefixes = None  # looked up only when the page is not full without them
        if longs:  # the long words whole first, each by its own postings
            first = rows(leaving_out([], None, itself), None, limit, itself)
        if len(first) < limit:
            prefixes = owner_prefixes(owner_id, longs)
            # Then as prefixes, unless none begins a longer word of the owner's (the same again).
            if not longs or prefixes != itself:
                first += rows(leaving_out(first, None, prefixes), None, limit - len(first),
                              prefixes)
        hits = [(node_id, float(len(first) - rank)) for rank, node_id in enumerate(first)]
        if not broadens or len(hits) >= limit:
            return hits
        inner = inner_words(owner_id, ranked)
        if not any(inner.values()):
            return hits
        second = rows(leaving_out(first, inner, prefixes), inner, limit - len(hits), prefixes)
        return hits + [(node_id, inside(float(len(second) - rank)))
                       for rank, node_id in enumerate(second)]

    @staticmethod
    def _counted(owner_id: str, join: str, where: str, params: list, tag_ids: tuple[str, ...],
                 tags_op: str) -> int:
        extra: tuple = ()
        if tag_ids:
            sql, extra = TagFilter(tuple(tag_ids), tags_op).sql()
            join, where = NODE_JOIN, f"{where} AND {sql}"
        with planned(BITMAPS_ONLY):
            return database.execute_sql(COUNT.format(join=join, match=where),
                                        (owner_id, *params, *extra)).fetchone()[0]

    # -- for dms verify and dms reindex --------------------------------------------------------
    def count(self) -> int:
        return database.execute_sql("SELECT count(*) FROM search_entry").fetchone()[0]

    def rebuild_now(self) -> int:
        """Recompute every node's entry from the database (entries missing are added), in
        batches of REBUILD_BATCH nodes per transaction, one statement each; the node count.
        The owners' words and their parts (migration 0039) are emptied first and filled again by
        the recomputed entries: words no document holds any longer go (until a batch has run,
        a word inside others is found only as a word or a beginning)."""
        with write_transaction():
            database.execute_sql("TRUNCATE search_owner_word, search_part")
        done, last = 0, 0
        while True:
            with write_transaction():
                top, count = database.execute_sql(
                    "SELECT max(seq), count(*) FROM (SELECT seq FROM node WHERE seq > ? "
                    "ORDER BY seq LIMIT ?) AS batch", (last, REBUILD_BATCH)).fetchone()
                if not count:
                    return done
                database.execute_sql(
                    "INSERT INTO search_entry (node_id, owner_id, stale) "
                    "SELECT id, owner_id, 3 FROM node WHERE seq > ? AND seq <= ? "
                    "AND trash_id IS NULL ON CONFLICT (node_id) DO UPDATE SET stale = 3",
                    (last, top))
                database.execute_sql(  # a node in the trash has no entry (migration 0013)
                    "DELETE FROM search_entry WHERE node_id IN (SELECT id FROM node WHERE "
                    "seq > ? AND seq <= ? AND trash_id IS NOT NULL)", (last, top))
            done, last = done + count, top


@contextlib.contextmanager
def planned(settings: str) -> Iterator[None]:
    """The planner's `settings` (set_config(..., true)) for the statements inside only: in a
    transaction, or a savepoint of the caller's, rolled back after them (reads only)."""
    with database.atomic() as scope:
        database.execute_sql(settings)
        yield
        scope.rollback()


_statistics: tuple[float, dict[str, float]] = (-STATISTICS_SECONDS, {})


def common(query: str) -> bool:
    """Is this tsquery one lexeme (no prefix, no operator) that the statistics count in at least
    COMMON_SHARE of the rows? Statistics read at most every STATISTICS_SECONDS (none before
    the first ANALYZE: nothing is common)."""
    global _statistics
    if not (query.startswith("'") and query.endswith("'")) or query.count("'") != 2:
        return False  # a prefix (`:*`), several words, or a quote inside
    read_at, shares = _statistics
    if time.monotonic() - read_at >= STATISTICS_SECONDS:
        row = database.execute_sql(COMMON_LEXEMES).fetchone()
        shares = dict(zip(row[0], row[1], strict=False)) if row and row[0] else {}
        _statistics = (time.monotonic(), shares)
    return shares.get(query[1:-1], 0.0) >= COMMON_SHARE
