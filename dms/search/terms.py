"""What a word becomes in the search index (dms.search.index), in a query and in the overlay
(dms.search.overlay): the analyzer, and where and how far a query word is looked for."""

from __future__ import annotations

import functools

ANALYZER = "dms_fold"
MAX_TERM_CHARS = 40
TITLE_BOOST = 3.0
TAGS_BOOST = 2.0
EXPANSIONS_LAST = 50
EXPANSIONS_OTHER = 10
MIN_TITLE_PREFIX = 2
MIN_TEXT_PREFIX = 3
# Where a word is looked for: (field, boost, shortest prefix).
ANYWHERE = (("title", TITLE_BOOST, MIN_TITLE_PREFIX), ("tags", TAGS_BOOST, MIN_TITLE_PREFIX),
            ("body", 1.0, MIN_TEXT_PREFIX))


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
