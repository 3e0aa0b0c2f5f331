"""The owner's words that a query word stands for on PostgreSQL (dms.search.postgres): the longer
words that begin with it (a prefix longer than the stored beginnings) and the words it lies
inside, read from each owner's list of long words (search_owner_word, migrations 0039 and 0041)
and the inner parts of everyone's words (search_part), both bounded."""

from __future__ import annotations

from collections.abc import Iterable

from dms.db import database
from dms.search.terms import looks_inside

INNER_EXPANSIONS = 100
INNER_SCAN = 10_000
# The words whose inner parts begin with a piece and that the owner has: the parts by their index
# (part, word), in its order, at most INNER_SCAN of them, each word kept if it is one of the
# owner's (migration 0039). A word can have two parts that begin with the same piece, and a
# part can be stored twice: twice as many rows are read as words wanted.
INNER_LOOKUP = """
    SELECT p.word FROM (SELECT part, word FROM search_part WHERE part >= ? AND part < ?
                        ORDER BY part, word LIMIT ?) AS p
    WHERE EXISTS (SELECT 1 FROM search_owner_word AS o
                  WHERE o.owner_number = (SELECT number FROM search_owner WHERE owner_id = ?)
                    AND o.word = p.word)
    ORDER BY p.part, p.word LIMIT ?"""
LAST_CHARACTER = "\U0010ffff"
# A query word longer than the stored beginnings is a prefix, which GIN's `:*` matches by
# gathering the postings of every word of every owner that begins with it (with 1,000 owners
# at 300,000 documents, two such words 9.9 ms for the statement that found 3 rows,
# bench/RESULTS.md). The owner's own words that begin with it (longer: of 7 letters or more,
# which search_owner_word holds, migration 0041) are few: matched as whole words instead, one
# GIN scan each (pgquery.Prefixes), unless there are more than PREFIX_EXPANSIONS of them.
PREFIX_EXPANSIONS = 50
OWNER_PREFIXES = """
    SELECT DISTINCT word FROM search_owner_word
    WHERE owner_number = (SELECT number FROM search_owner WHERE owner_id = ?)
      AND word > ? AND word < ?
    ORDER BY word LIMIT ?"""


def owner_prefixes(owner_id: str, words: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """For each of `words` (longer than the stored beginnings), itself and the owner's longer
    words that begin with it, if they are at most PREFIX_EXPANSIONS (else it is left out: a
    `:*` prefix)."""
    found: dict[str, tuple[str, ...]] = {}
    for word in dict.fromkeys(words):
        longer = [other for (other,) in database.execute_sql(
            OWNER_PREFIXES, (owner_id, word, word + LAST_CHARACTER, PREFIX_EXPANSIONS + 1))]
        if len(longer) <= PREFIX_EXPANSIONS:
            found[word] = (word, *longer)
    return found


def inner_words(owner_id: str, words: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """For each word looked for inside others, the owner's words that hold it (at most
    INNER_EXPANSIONS; none for a piece none of their words holds)."""
    found: dict[str, tuple[str, ...]] = {}
    for word in dict.fromkeys(word for word in words if looks_inside(word)):
        holders = database.execute_sql(
            INNER_LOOKUP,
            (word, word + LAST_CHARACTER, INNER_SCAN, owner_id, 2 * INNER_EXPANSIONS)
        ).fetchall()
        found[word] = tuple(dict.fromkeys(holder for (holder,) in holders))[:INNER_EXPANSIONS]
    return found
