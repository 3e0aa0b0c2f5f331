"""The WHERE conditions of PostgreSQL's search (dms.search.postgres), over `search_entry AS s`
(joined with `node` for a query of the query language): how words match (`match`, as the
module dms.search.postgres describes), and a resolved query of the query language
(dms.domain.searchquery) as one condition (`condition`): the words matched by the GIN index of
search_entry as plain words are, the names, numbers and dates as the conditions on the node row
the resolver made, NOT, AND, OR as SQL's.

- Words anywhere: as the plain search (heading or body, prefixes by the stored beginnings).
  `title:` words: the heading's title part (weight A); `text:` the body; `notes:` the document's
  notes, folded by dms_fold when the query runs (a few short texts per candidate).
- A phrase: its words found by the index, then checked next to each other in this order with
  PostgreSQL's own phrase operator over the title, or each page of the latest version's text, or
  the notes, folded when the query runs — only for the documents that hold all of its words.
  (The body tsvector keeps no positions: smaller, and bounded for a long text.)
- Inside compound words (`inner`, api.md §22): the table search_part holds the inner parts of
  every word the search rows hold, each with its word (`bescheid` of `steuerbescheid`,
  migrations 0038 and 0039, the parts of dms.search.terms); dms.search.postgres turns a word into
  the owner's words whose parts begin with it (`Inner`: at most INNER_EXPANSIONS of them) and
  those whole words are matched beside the word itself. As in tantivy, only words anywhere (no
  field, no phrase, not under a NOT) are looked for inside others.
- A word longer than the stored beginnings (`Prefixes`): a `:*` prefix, or, where
  dms.search.postgres has them, the owner's words that begin with it, each matched as a whole
  word (in the first tier: the word itself only).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dms.domain.searchquery import All, Meta, Not, Words
from dms.domain.searchquery import Any as AnyOf
from dms.search.terms import MIN_TEXT_PREFIX, MIN_TITLE_PREFIX, looks_inside, terms

STORED_PREFIX = 5  # the longest beginning the schema stores as a lexeme
# A query word → the words it lies inside (dms.search.pgwords.inner_words); None: not looked
# for inside words.
Inner = Mapping[str, tuple[str, ...]] | None
# A query word longer than STORED_PREFIX → the owner's words that begin with it (itself among
# them: dms.search.pgwords.owner_prefixes); a word not in it, or None: a `:*` prefix, which GIN
# matches by gathering the postings of every owner's words that begin with it.
Prefixes = Mapping[str, tuple[str, ...]] | None

EVERYWHERE = "(s.heading || s.body) @@ ?::tsquery"
IN_HEADING = "s.heading @@ ?::tsquery"
# The same as EVERYWHERE (a tsquery without NOT that the heading matches, heading and body match
# too), but a row whose heading matches is not read further: its body, from TOAST, is ~20 times
# the heading (bench/pgplans.py at 100,000: 100 ms of 2,000 candidates' bodies for a piece inside
# words). Only where the rows come from the heading's index and one word is looked for
# (dms.search.postgres's HEADED): for the words' index, EVERYWHERE is its expression.
HEADING_FIRST = f"(s.heading @@ ?::tsquery OR {EVERYWHERE})"
# A word looked for inside others, as the alternatives it may match, one tsquery each: GIN scans
# a tsquery that ORs many lexemes as one key, testing every row of their union against all of
# them (28 ms for a piece inside 49 words at a million documents), an array as one scan per
# element (3.6 ms; bench/RESULTS.md, 2026-12-02).
EVERYWHERE_ANY = "(s.heading || s.body) @@ ANY(?::tsquery[])"
HEADING_FIRST_ANY = f"(s.heading @@ ANY(?::tsquery[]) OR {EVERYWHERE_ANY})"


def lexeme(text: str) -> str:
    """`text` quoted as one lexeme of a tsquery literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def term(word: str, shortest_prefix: int, inner: Inner = None,
         prefixes: Prefixes = None) -> str:
    """How `word` (an index term) matches: itself, a stored beginning, or a longer prefix
    (`prefixes`'s words beginning with it, else `:*`); with `inner`, or one of the words it lies
    inside."""
    if inner is not None and looks_inside(word) and inner.get(word):
        holders = " | ".join(lexeme(holder) for holder in inner[word])
        return f"({term(word, shortest_prefix, None, prefixes)} | {holders})"
    if len(word) < shortest_prefix:
        return lexeme(word)
    if MIN_TEXT_PREFIX <= len(word) <= STORED_PREFIX:
        return lexeme("~" + word)
    if prefixes is not None and word in prefixes:
        begun = prefixes[word]
        joined = " | ".join(lexeme(other) for other in begun)
        return joined if len(begun) == 1 else f"({joined})"
    return lexeme(word) + ":*"


def tsquery(words: list[str], operator: str, shortest_prefix: int, inner: Inner = None,
            prefixes: Prefixes = None) -> str:
    return f" {operator} ".join(term(word, shortest_prefix, inner, prefixes) for word in words)


def expanded(word: str, inner: Inner) -> bool:
    """Is `word` looked for inside the words `inner` gives it?"""
    return inner is not None and looks_inside(word) and bool(inner.get(word))


def widened(word: str, prefixes: Prefixes) -> bool:
    """Does `word` match several of the owner's words that begin with it (`prefixes`)?"""
    return prefixes is not None and len(word) > STORED_PREFIX and len(prefixes.get(word, ())) > 1


def alternatives(words: list[str], shortest_prefix: int, inner: Inner = None,
                 prefixes: Prefixes = None) -> list[str]:
    """What any of `words` matches, as `term` says, one tsquery per alternative (a word inside
    others: itself and each of those words; a longer prefix: each of the owner's words that
    begin with it), for `@@ ANY(...)` (EVERYWHERE_ANY)."""
    found: list[str] = []
    for word in words:
        if prefixes is not None and widened(word, prefixes):
            found += [lexeme(other) for other in prefixes[word]]
        else:
            found.append(term(word, shortest_prefix, None, prefixes))
        if inner is not None and expanded(word, inner):
            found += [lexeme(holder) for holder in inner[word]]
    return list(dict.fromkeys(found))


def long_prefixes(words: list[str]) -> list[str]:
    """Those of `words` longer than the stored beginnings (a prefix matched as `Prefixes`
    says), once each."""
    return list(dict.fromkeys(word for word in words if len(word) > STORED_PREFIX))


def match(words: list[str], inner: Inner = None, heading_first: bool = False,
          prefixes: Prefixes = None) -> tuple[str, list]:
    """The WHERE condition that every word matches, and its parameters: one tsquery for the
    words that are matched alike everywhere; a word of MIN_TITLE_PREFIX letters, but shorter
    than MIN_TEXT_PREFIX, is a prefix in the heading or a whole word anywhere. With `inner`:
    also inside words, and with `prefixes`, a longer prefix as the owner's words beginning with
    it (the word of most alternatives a condition of its own, EVERYWHERE_ANY);
    `heading_first`: the heading tested before the body (HEADING_FIRST)."""
    title_only = [w for w in words if MIN_TITLE_PREFIX <= len(w) < MIN_TEXT_PREFIX]
    # The word of the most alternatives is an array (EVERYWHERE_ANY), the others' alternatives
    # ORed in the tsquery: two arrays in one statement are scanned for every pair of their
    # elements (a prefix of 25 of the owner's words and one of 2, with 1,000 owners at 300,000
    # documents: 21 ms as two arrays, 11 ms as one and a tsquery, bench/RESULTS.md).
    broadened = [w for w in words if w not in title_only
                 and (expanded(w, inner) or widened(w, prefixes))]
    arrayed = max(broadened, default=None,
                  key=lambda w: len(alternatives([w], MIN_TEXT_PREFIX, inner, prefixes)))
    alike = [w for w in words if w not in title_only and w != arrayed]
    conditions: list[str] = []
    params: list = []
    if alike:
        query = tsquery(alike, "&", MIN_TEXT_PREFIX, inner, prefixes)
        conditions.append(HEADING_FIRST if heading_first else EVERYWHERE)
        params += [query, query] if heading_first else [query]
    if arrayed is not None:
        options = alternatives([arrayed], MIN_TEXT_PREFIX, inner, prefixes)
        conditions.append(HEADING_FIRST_ANY if heading_first else EVERYWHERE_ANY)
        params += [options, options] if heading_first else [options]
    for word in title_only:
        conditions.append(f"({IN_HEADING} OR {EVERYWHERE})")
        params += [lexeme(word) + ":*", lexeme(word)]
    return " AND ".join(conditions), params


FOLDED = "to_tsvector('dms_fold', dms_search_words({}))"
NOTE_WORDS = (f"EXISTS (SELECT 1 FROM note WHERE note.document_id = s.node_id AND "
              f"{FOLDED.format('note.note')} @@ ?::tsquery)")
PAGE_PHRASE = (f"EXISTS (SELECT 1 FROM page AS p WHERE p.version_id = (SELECT id FROM "
               "document_version WHERE document_id = s.node_id ORDER BY number DESC LIMIT 1) "
               f"AND {FOLDED.format('p.text')} @@ ?::tsquery)")
TITLE_PHRASE = f"{FOLDED.format('node.title')} @@ ?::tsquery"


def condition(tree: Any, inner: Inner = None, heading_first: bool = False,
              prefixes: Prefixes = None) -> tuple[str, list[Any]]:
    """The WHERE condition of `tree` and its parameters; with `inner`: words anywhere also
    inside words; `heading_first`, `prefixes`: as match's, for the words anywhere."""
    if isinstance(tree, Meta):
        return f"({tree.condition.where})", list(tree.condition.params)
    if isinstance(tree, Not):  # IS NOT TRUE: a document without the value (NULL) is kept
        negated, params = condition(tree.part)
        return f"({negated}) IS NOT TRUE", params
    if isinstance(tree, (All, AnyOf)):
        parts = [condition(part, inner, heading_first, prefixes) for part in tree.parts]
        joint = " AND " if isinstance(tree, All) else " OR "
        return (f"({joint.join(sql for sql, _ in parts)})",
                [param for _, params in parts for param in params])
    assert isinstance(tree, Words)
    return _words(tree, inner, heading_first, prefixes)


def ranked_words(tree: Any) -> list[str]:
    """The terms of the words not under a NOT: what the ranking looks for."""
    if isinstance(tree, Words):
        return terms(tree.text)
    if isinstance(tree, (All, AnyOf)):
        return [word for part in tree.parts for word in ranked_words(part)]
    return []


def _words(leaf: Words, inner: Inner = None, heading_first: bool = False,
           prefixes: Prefixes = None) -> tuple[str, list[Any]]:
    found = terms(leaf.text)
    if not found:
        return "TRUE", []
    if leaf.phrase:
        return _phrase(found, leaf.field)
    if leaf.field is None:
        sql, params = match(found, inner, heading_first, prefixes)
        return f"({sql})", params
    if leaf.field == "title":  # the title's words and beginnings carry weight A
        query = " & ".join(_weighted(word) for word in found)
        return IN_HEADING, [query]
    if leaf.field == "text":
        return "s.body @@ ?::tsquery", [" & ".join(term(word, MIN_TEXT_PREFIX) for word in found)]
    return NOTE_WORDS, [" & ".join(_prefix(word) for word in found)]


def _weighted(word: str) -> str:
    if len(word) < MIN_TITLE_PREFIX:
        return lexeme(word) + ":A"
    if MIN_TEXT_PREFIX <= len(word) <= 5:
        return lexeme("~" + word) + ":A"
    return lexeme(word) + ":*A"


def _prefix(word: str) -> str:
    """A word as a prefix of folded words made at query time (no stored beginnings there)."""
    return lexeme(word) + (":*" if len(word) >= MIN_TEXT_PREFIX else "")


def _phrase(found: list[str], field: str | None) -> tuple[str, list[Any]]:
    together = " <-> ".join(lexeme(word) for word in found)
    every = " & ".join(lexeme(word) for word in found)
    if field == "notes":
        return NOTE_WORDS, [together]
    checks, params = [], []
    if field in (None, "title"):
        checks.append(TITLE_PHRASE)
        params.append(together)
    if field in (None, "text"):
        checks.append(PAGE_PHRASE)
        params.append(together)
    found_by = "(s.heading || s.body) @@ ?::tsquery" if field is None else (
        "s.heading @@ ?::tsquery" if field == "title" else "s.body @@ ?::tsquery")
    if field == "title":
        every = " & ".join(lexeme(word) + ":A" for word in found)
    return f"({found_by} AND ({' OR '.join(checks)}))", [every, *params]
