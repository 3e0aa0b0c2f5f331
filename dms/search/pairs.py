"""Pairs of neighbouring terms with a common word in them (common grams), so that a phrase of
common words is fast: `"with for"` at a million documents made tantivy read the positions of
every document holding both words (nearly all of them) to find those where they stand together,
4× the two words alone (docs/performance.md). Each node's title, text and notes also give every
pair of neighbouring terms one of which is a stop word of one of tantivy's 13 built-in lists
(`with for`, `of the`, `und die`), indexed as one term each, as often as it comes, without
positions, in a field of their own beside the text's (FIELDS: `body_pairs` for `body`). A phrase
of two words with a common one is then its pair: one term, no positions read (format 7). A longer
phrase must also hold each of its pairs with a common word, and tantivy checks positions only
where it does (dms.search.treequery). Only the beginning of a very long text gives pairs
(PAIRED_CHARS): such a text is marked PAST, and a phrase checks the positions of the few marked.

A pair is exactly two terms at neighbouring positions of that field in the index: made from the
index's own terms (its analyzer, dms.search.terms), not across a word the analyzer dropped
(tantivy leaves its position empty, dms.search.terms.positioned), a long text a piece at a time,
cut only where no term can be cut in two."""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable, Iterator

from dms.search.terms import positioned

FIELDS = {"title": "title_pairs", "body": "body_pairs", "notes": "notes_pairs"}
LANGUAGES = ("danish", "dutch", "english", "finnish", "french", "german", "hungarian",
             "italian", "norwegian", "portuguese", "russian", "spanish", "swedish")
PIECE_CHARS = 65_536  # of a long text, cut into terms this much at a time
# The pairs of a text's first PAIRED_CHARS characters (cut between words) are made: its pairs cost
# ~0.6 µs a character in Python and ~5 MiB a million characters. A longer text also gets PAST,
# which no pair is (a pair has a space inside), and a phrase checks such texts by their positions.
PAIRED_CHARS = 262_144
PAST = " "


@functools.lru_cache(maxsize=1)
def _stop_words():
    import tantivy  # imported on first use: keeps the idle server small

    builder = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.raw())
    for language in LANGUAGES:
        builder = builder.filter(tantivy.Filter.stopword(language))
    return builder.build()


@functools.lru_cache(maxsize=4096)
def is_common(term: str) -> bool:
    """Whether an index term is a stop word of one of the lists (an accented stop word, folded,
    is not: `fur` is not `für`). Kept for the terms met most recently, as the inner parts are
    (dms.search.terms): a language's frequent words come again, document after document, and a
    larger cache would stay in the server's memory after a rebuild."""
    return not _stop_words().analyze(term)


def pairs_of(found: Iterable[str | None]) -> Iterator[str]:
    """The pairs with a common word among neighbouring terms, in order (repeated as they come;
    None, an empty position, is no one's neighbour)."""
    before = None
    for term in found:
        if before is not None and term is not None and (is_common(before) or is_common(term)):
            yield f"{before} {term}"
        before = term


def text_pairs(text: str) -> list[str]:
    """The pairs of one field's text, as often as they come (tantivy counts them: a phrase's
    score is its pair's); of a text longer than PAIRED_CHARS, those of its beginning and PAST."""
    if len(text) <= PAIRED_CHARS:
        return list(pairs_of(_terms_of(text)))
    cut = text.rfind(" ", 0, PAIRED_CHARS + 1)  # none: no pairs, its positions decide
    return [*pairs_of(_terms_of(text[:max(cut, 0)])), PAST]


def _terms_of(text: str) -> Iterator[str | None]:
    """`text`'s terms at their positions, a piece of about PIECE_CHARS at a time, each piece cut
    after a space (or, in a piece without one, after another sign that is not a mark: tantivy's
    tokenizer ends a term at both, and takes some marks for letters; a run of letters and digits
    longer than a piece stays whole), so that no term is cut in two."""
    start = 0
    while start < len(text):
        end = start + PIECE_CHARS
        if end < len(text):
            space = text.rfind(" ", start + 1, end)
            if space > start:
                end = space
            else:
                cut = end
                while cut > start + 1 and _in_word(text[cut - 1]):
                    cut -= 1
                if cut > start + 1:
                    end = cut
                else:
                    while end < len(text) and _in_word(text[end]):
                        end += 1
        yield from positioned(text[start:end])
        start = end


def _in_word(sign: str) -> bool:
    """Whether a term may go on across `sign` (tantivy's letters and digits, marks included)."""
    return sign.isalnum() or unicodedata.category(sign).startswith("M")
