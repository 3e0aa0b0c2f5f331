"""What a word becomes in the search index (dms.search.index), in a query and in the overlay
(dms.search.overlay): the analyzer, and where and how far a query word is looked for.

Words inside compound words (api.md §22, "Search"): `bescheid` finds `Steuerbescheid`. Each term
of MIN_COMPOUND letters or more of a node's title, tag names and text also gives its inner parts:
its endings that begin INNER_START letters or more into it and are MIN_INNER letters or longer
(`steuerbescheid`: `euerbescheid` ... `heid`). A word found inside another is then the beginning
of one of its parts: a prefix lookup in the term dictionary, as fast as any prefix, instead of a
scan of every term (a regular expression over the dictionary walks all of it: 2 million terms at
a million documents). A query word is looked for inside others from MIN_INNER letters on: a
shorter one (`ung`, `ein`) lies inside a large share of all long words, a flood of weak matches
whose expansions alone would cost more than the search. Words shorter than MIN_COMPOUND give no
parts: a compound of two words is that long (Abschlag, Ölrechnung), and a text's many shorter
words would make the index larger and slower to build for few finds. Matches inside a word rank
below every match of the whole word or its beginning (`inside`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

ANALYZER = "dms_fold"
MAX_TERM_CHARS = 40
TITLE_BOOST = 3.0
TAGS_BOOST = 2.0
EXPANSIONS_LAST = 50
EXPANSIONS_OTHER = 10
MIN_TITLE_PREFIX = 2
MIN_TEXT_PREFIX = 3
MIN_INNER = 4
INNER_START = 2  # a compound's first part has two letters at least (Öl-, Ab-)
MIN_COMPOUND = 8
MAX_INNER_CHARS = 1_000_000  # of a node's inner parts; its text is cut into words this far
# Where a word is looked for: (field, boost, shortest prefix).
ANYWHERE = (("title", TITLE_BOOST, MIN_TITLE_PREFIX), ("tags", TAGS_BOOST, MIN_TITLE_PREFIX),
            ("body", 1.0, MIN_TEXT_PREFIX))
RAW_WORDS = re.compile(r"[^\W_]+")  # runs of letters and digits, as the simple tokenizer cuts
# Runs without a space that may hold a word the analyzer drops (MAX_TERM_CHARS bytes or more:
# at most 4 bytes a character).
LONG_ASCII_RUN = re.compile(rf"\S{{{MAX_TERM_CHARS},}}")
MAYBE_LONG_RUN = re.compile(rf"\S{{{MAX_TERM_CHARS // 4},}}")


@functools.lru_cache(maxsize=1)
def analyzer():
    import tantivy  # imported on first use: keeps the idle server small

    return (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.remove_long(MAX_TERM_CHARS))
            .filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.ascii_fold())
            .build())


def terms(text: str) -> list[str]:
    """The index's terms for `text`: what a query word or an indexed word becomes."""
    return analyzer().analyze(text)


@functools.lru_cache(maxsize=1)
def _unbounded():
    """The tokenizer alone, and the analyzer without dropping long words: the same words, in
    the same order (lowercasing and folding change words, never drop one)."""
    import tantivy

    bare = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).build()
    folded = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
              .filter(tantivy.Filter.lowercase())
              .filter(tantivy.Filter.ascii_fold())
              .build())
    return bare, folded


def positioned(text: str) -> list[str | None]:
    """The index's terms for `text` at their positions: None where the analyzer dropped a word
    (MAX_TERM_CHARS bytes or more before folding). Tantivy leaves that position empty, so the
    words around it are not next to each other for a phrase (dms.search.pairs, the overlay)."""
    if not _may_drop(text):
        return list(terms(text))
    bare, folded = _unbounded()
    words, made = bare.analyze(text), folded.analyze(text)
    if len(words) != len(made):  # never seen: then no two of its terms count as neighbours
        return [term for found in terms(text) for term in (found, None)]
    return [None if len(word.encode()) >= MAX_TERM_CHARS else term
            for word, term in zip(words, made, strict=True)]


def _may_drop(text: str) -> bool:
    """Whether `text` may hold a word the analyzer drops: a run without a space that long."""
    if text.isascii():
        return LONG_ASCII_RUN.search(text) is not None
    return any(len(run.encode()) >= MAX_TERM_CHARS for run in MAYBE_LONG_RUN.findall(text))


def compound_terms(text: str) -> list[str]:
    """The terms of `text` that may hold inner parts, once each, in order of appearance. Only
    its long words, once each, go through the analyzer: cutting all of a text a second time (the
    index cuts it too) made building the index several times slower. (Folding never shortens
    a word much: the raw words kept are a little shorter than MIN_COMPOUND, to be safe.)"""
    long_words = dict.fromkeys(word for word in RAW_WORDS.findall(text)
                               if len(word) >= MIN_COMPOUND - 2)
    return [term for term in terms(" ".join(long_words)) if len(term) >= MIN_COMPOUND]


def inner_parts(words: Iterable[str]) -> list[str]:
    """The inner parts of index terms (see above): what a word inside them begins. Bounded as
    PostgreSQL's search rows are: the parts of the first distinct words (in the order given)
    until MAX_INNER_CHARS characters of parts."""
    parts: list[str] = []  # two words may share a part: the index keeps a node's terms once
    size = 0
    for word in dict.fromkeys(words):
        made, chars = _parts_of(word)
        size += chars
        if size > MAX_INNER_CHARS:
            break
        parts += made
    return parts


@functools.lru_cache(maxsize=4096)
def _parts_of(word: str) -> tuple[tuple[str, ...], int]:
    """A term's inner parts and their characters (with a separator each). Kept for the terms
    met most recently: a language's common words come again, document after document (a few
    thousand words: a MiB or two, kept after a rebuild)."""
    if len(word) < MIN_COMPOUND:
        return (), 0
    made = tuple(word[start:] for start in range(INNER_START, len(word) - MIN_INNER + 1))
    return made, sum(len(part) + 1 for part in made)


def looks_inside(word: str) -> bool:
    """Whether a query word (an index term) is also looked for inside other words."""
    return len(word) >= MIN_INNER


def inside(score: float) -> float:
    """The score of a match inside a word: below every other match's (those are 0 or more),
    in the order of `score`."""
    return -1.0 / (1.0 + score)
