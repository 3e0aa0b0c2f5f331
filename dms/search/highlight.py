"""Highlighted snippets of search results, made from the stored text with bounded work.

A snippet is a few words around the first word that starts with one of the query's words,
folded as the index folds them (`kase` marks `Käse`); the text is HTML-escaped and each
matching word wrapped in <em>…</em>. Only the first SCAN_CHARS characters of a text are looked
at (a 4 MiB text full of matches once kept a search busy for minutes), and the caller's
`should_stop` is asked every few thousand words.
"""

from __future__ import annotations

import collections
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
    prefixes = tuple(prefixes)
    if not prefixes or not text:
        return None
    inner = tuple(word for word in prefixes if looks_inside(word)) if inside else ()
    return _snippet(text, prefixes, inner, should_stop, whole)


def _starts(folded: str, prefixes: tuple[str, ...], inner: tuple[str, ...]) -> bool:
    """A folded word begins with one of `prefixes` or holds one of `inner` past its start."""
    return folded.startswith(prefixes) or any(word in folded[INNER_START:] for word in inner)


def _snippet(text: str, prefixes: tuple[str, ...], inner: tuple[str, ...],
             should_stop: Callable[[], bool], whole: bool) -> str | None:
    limit = len(text) if whole else min(len(text), SCAN_CHARS)
    words = WORD.finditer(text, 0, limit)
    before: collections.deque = collections.deque(maxlen=0 if whole else WORDS_BEFORE)
    for count, match in enumerate(words, start=1):
        if count % CHECK_EVERY_WORDS == 0 and should_stop():
            raise Stopped()
        if not _starts(fold(match.group()), prefixes, inner):
            before.append(match)
            continue
        shown = [*before, match]
        for following in words:
            if not whole and len(shown) >= SNIPPET_WORDS:
                break
            shown.append(following)
        start = 0 if whole or not before or len(before) < WORDS_BEFORE else before[0].start()
        end = len(text) if whole or shown[-1].end() >= _last_word_end(text, limit) \
            else shown[-1].end()
        hits = [m for m in shown if _starts(fold(m.group()), prefixes, inner)]
        return _render(text, start, end, hits, start > 0, end < len(text))
    return None


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
