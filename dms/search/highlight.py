"""Highlighted snippets of search results, made from the stored text with bounded work.

A snippet is a few words around the first word that starts with one of the query's words,
folded as the index folds them (`kase` marks `Käse`); the text is HTML-escaped and each
matching word wrapped in <em>…</em>. Only the first SCAN_CHARS characters of a text are looked
at (a 4 MiB text full of matches once kept a search busy for minutes), and the caller's
`should_stop` is asked every few thousand candidate words.
"""

from __future__ import annotations

import bisect
import functools
import html
import re
from collections.abc import Callable, Iterable

from dms.search.index import terms
from dms.search.terms import INNER_START, looks_inside

WORD = re.compile(r"\w+")
SCAN_CHARS = 256 * 1024
SNIPPET_WORDS = 12  # words shown around a match
WORDS_BEFORE = 4
CHECK_EVERY_WORDS = 4096
OPEN, CLOSE = "<em>", "</em>"
ELLIPSIS = "…"


class Stopped(Exception):
    """should_stop() said so: nobody waits for this result any more."""


def fold(word: str) -> str:
    """A word as the index folds it (dms.search.index.terms): Käse -> kase, Straße -> strasse."""
    if word.isascii():
        return word.lower()
    return _fold_unicode(word)


@functools.lru_cache(maxsize=4096)
def _fold_unicode(word: str) -> str:
    return "".join(terms(word))


def snippet(text: str, prefixes: Iterable[str], should_stop: Callable[[], bool] = lambda: False,
            whole: bool = False, inside: bool = False) -> str | None:
    """The text around its first match, highlighted; None if nothing matches in the scanned part.
    `whole` highlights every match of a short text (a title) instead of cutting a window;
    `inside`: a word is a match also where it lies inside another (a compound word, as
    dms.search.terms finds them)."""
    return Highlighter(prefixes, should_stop).snippet(text, whole, inside)


class Highlighter:
    """The snippets of one search's results: its words and their patterns prepared once."""

    def __init__(self, prefixes: Iterable[str], should_stop: Callable[[], bool] = lambda: False):
        self.prefixes = tuple(prefixes)
        self.inner = tuple(word for word in self.prefixes if looks_inside(word))
        self.should_stop = should_stop

    def snippet(self, text: str, whole: bool = False, inside: bool = False) -> str | None:
        """As `snippet` above, for these words."""
        if not self.prefixes or not text:
            return None
        return _snippet(text, self.prefixes, self.inner if inside else (), self.should_stop,
                        whole)

    def titles(self, titles: list[str], inside: list[bool]) -> dict[int, str]:
        """Each of these short titles that holds a match, by its position, wholly highlighted
        (as snippet(title, whole=True, inside=inside[position])): one pass of the candidates'
        expression over them all, each candidate folded and tested once, so that a search does
        not make ~90 snippets of titles one by one (a third of a 3-letter prefix's time at
        20,000 documents, 2026-12-02)."""
        if not self.prefixes:
            return {}
        # Titles joined by a line break: no word runs across one, so each candidate lies in one.
        joined, starts, position = "\n".join(titles), [], 0
        for title in titles:
            starts.append(position)
            position += len(title) + 1
        hits: dict[int, list[re.Match]] = {}
        # Pieces inside words only where a title was found by one (fewer candidates else).
        inner = self.inner if any(inside) else ()
        for count, candidate in enumerate(_candidates(self.prefixes, inner).finditer(joined), 1):
            if count % CHECK_EVERY_WORDS == 0 and self.should_stop():
                raise Stopped()
            word = WORD.match(joined, candidate.start())
            index = bisect.bisect_right(starts, candidate.start()) - 1
            if word is not None and _starts(fold(word.group()), self.prefixes,
                                            self.inner if inside[index] else ()):
                hits.setdefault(index, []).append(word)
        return {index: _render(joined, starts[index], starts[index] + len(titles[index]), found,
                               False, False) for index, found in hits.items()}


def _starts(folded: str, prefixes: tuple[str, ...], inner: tuple[str, ...]) -> bool:
    """A folded word begins with one of `prefixes` or holds one of `inner` past its start."""
    return folded.startswith(prefixes) or any(word in folded[INNER_START:] for word in inner)


@functools.lru_cache(maxsize=64)
def _candidates(prefixes: tuple[str, ...], inner: tuple[str, ...]) -> re.Pattern:
    """The beginnings of the words that may match: an ASCII word folds to its lower case, so
    the regular expression tells those exactly, in C; a word with a letter beyond ASCII is a
    candidate whatever it holds (`Käse` folds to `kase`) and `_starts` decides. Folding every
    word in Python was a third of a search's time (20,000 documents, 2026-12-01)."""
    alternatives = [re.escape(word) for word in prefixes]
    if inner:
        pieces = "|".join(re.escape(word) for word in inner)
        alternatives.append(rf"\w{{{INNER_START}}}\w*?(?:{pieces})")
    # Case is ignored in the ASCII alternatives only: ignoring it in the class would let `İ`
    # (lower case `i`) pass for ASCII.
    return re.compile(rf"(?<!\w)(?:(?i:{'|'.join(alternatives)})|\w*[^\W\x00-\x7f])")


def _first_match(text: str, prefixes: tuple[str, ...], inner: tuple[str, ...], limit: int,
                 should_stop: Callable[[], bool]) -> re.Match | None:
    """The first word of text[:limit] that matches, as WORD finds words."""
    candidates, position, count = _candidates(prefixes, inner), 0, 0
    while (candidate := candidates.search(text, position, limit)) is not None:
        count += 1
        if count % CHECK_EVERY_WORDS == 0 and should_stop():
            raise Stopped()
        word = WORD.match(text, candidate.start(), limit)
        if word is None:  # cannot be: each alternative begins at a word's first letter
            return None
        if _starts(fold(word.group()), prefixes, inner):
            return word
        position = word.end()
    return None


def _words_before(text: str, position: int, count: int) -> list[re.Match]:
    """The last `count` whole words before `position` (fewer at the text's start)."""
    reach = 64 * count
    while True:
        start = max(0, position - reach)
        words = list(WORD.finditer(text, start, position))
        if start > 0 and words and words[0].start() == start and WORD.match(text, start - 1):
            words = words[1:]  # begun before the window: not whole
        if len(words) >= count or start == 0:
            return words[-count:]
        reach *= 4


def _snippet(text: str, prefixes: tuple[str, ...], inner: tuple[str, ...],
             should_stop: Callable[[], bool], whole: bool) -> str | None:
    limit = len(text) if whole else min(len(text), SCAN_CHARS)
    match = _first_match(text, prefixes, inner, limit, should_stop)
    if match is None:
        return None
    before = [] if whole else _words_before(text, match.start(), WORDS_BEFORE)
    shown = [*before, match]
    for following in WORD.finditer(text, match.end(), limit):
        if not whole and len(shown) >= SNIPPET_WORDS:
            break
        shown.append(following)
    start = 0 if whole or len(before) < WORDS_BEFORE else before[0].start()
    end = len(text) if whole or shown[-1].end() >= _last_word_end(text, limit) \
        else shown[-1].end()
    candidates = _candidates(prefixes, inner)
    hits = [m for m in shown if candidates.match(text, m.start(), m.end())
            and _starts(fold(m.group()), prefixes, inner)]
    return _render(text, start, end, hits, start > 0, end < len(text))


def _last_word_end(text: str, limit: int) -> int:
    """Where the last word of the scanned part ends (so a snippet reaching it takes the rest)."""
    tail = text[max(0, limit - 200):limit]
    matches = list(WORD.finditer(tail))
    return limit - len(tail) + matches[-1].end() if matches else limit


def _render(text: str, start: int, end: int, hits: list, cut_before: bool, cut_after: bool) -> str:
    parts, position = [ELLIPSIS] if cut_before else [], start
    for hit in hits:
        parts.append(html.escape(text[position:hit.start()], quote=False))
        parts.append(OPEN + html.escape(hit.group(), quote=False) + CLOSE)
        position = hit.end()
    parts.append(html.escape(text[position:end], quote=False))
    if cut_after:
        parts.append(ELLIPSIS)
    return "".join(parts)
