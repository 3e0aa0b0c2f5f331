"""Pairs of neighbouring terms with a common word in them (common grams), so that a phrase of
common words is fast: `"with for"` at a million documents made tantivy read the positions of
every document holding both words (nearly all of them) to find those where they stand together,
4× the two words alone (docs/performance.md). Each node's title, text and notes also give every
pair of neighbouring terms one of which is a stop word of one of tantivy's 13 built-in lists
(`with for`, `of the`, `und die`), indexed as one term each in the `pairs` field, without
positions; a phrase then must also hold each of its pairs with a common word, and tantivy walks
the rarest of those first (dms.search.treequery). The positions still decide: a pair only
narrows, so a phrase finds exactly what it found without them.

Pairs are made from the index's own terms (its analyzer, dms.search.terms), each field apart,
a long text a piece at a time, cut between words."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator

from dms.search.terms import terms

FIELD = "pairs"
LANGUAGES = ("danish", "dutch", "english", "finnish", "french", "german", "hungarian",
             "italian", "norwegian", "portuguese", "russian", "spanish", "swedish")
PIECE_CHARS = 65_536  # of a long text, cut into terms this much at a time


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


def pairs_of(found: Iterable[str]) -> Iterator[str]:
    """The pairs with a common word among neighbouring terms, in order (repeated as they come)."""
    before = None
    for term in found:
        if before is not None and (is_common(before) or is_common(term)):
            yield f"{before} {term}"
        before = term


def node_pairs(*texts: str) -> list[str]:
    """The pairs of a node's texts (its title, text and notes), each text apart, once each."""
    kept: dict[str, None] = {}
    for text in texts:
        kept.update(dict.fromkeys(pairs_of(_terms_of(text))))
    return list(kept)


def _terms_of(text: str) -> Iterator[str]:
    """`text`'s terms, a piece of about PIECE_CHARS at a time, each piece cut after a space (or,
    in a piece without one, after another sign: tantivy's tokenizer ends a term at both; a run
    of letters and digits longer than a piece stays whole), so that no term is cut in two."""
    start = 0
    while start < len(text):
        end = start + PIECE_CHARS
        if end < len(text):
            space = text.rfind(" ", start + 1, end)
            if space > start:
                end = space
            else:
                cut = end
                while cut > start + 1 and text[cut - 1].isalnum():
                    cut -= 1
                if cut > start + 1:
                    end = cut
                else:
                    while end < len(text) and text[end].isalnum():
                        end += 1
        yield from terms(text[start:end])
        start = end
