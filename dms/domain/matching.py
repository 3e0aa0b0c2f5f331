"""What a rule's `match` finds in a document (api.md, "Rules"), and a correspondent's or document
type's (api.md §16): the five algorithms over one field or all of them, and the matched text
(`{match}` of a title template).

- `any` / `all`: one / every word of the pattern is a word of the field. `exact`: the pattern's
  words, in order, next to each other. Words are runs of letters and digits (Unicode), so
  punctuation and line breaks between them do not matter: `INV-2024` is the words `INV 2024`.
- `regex`: a search with RE2 (google-re2), whose matching time grows linearly with the text:
  `(a+)+$` against a million characters takes milliseconds, where Python's backtracking `re`
  would run for ages. RE2 has no backreferences and no lookaround; such patterns are refused when
  the rule is saved. `{match}` is the first group if the pattern has one, else the whole match.
- `fuzzy`: the pattern's words against every run of as many words of the field (and one more or
  one fewer, for a word OCR split or merged), scored by rapidfuzz's `ratio` (the Indel similarity,
  0-100); a match scores at least FUZZY_THRESHOLD. Both sides are first folded: case, and the
  characters OCR confuses most (0/o, 1/l/i, m/rn, w/vv) count as the same. Always case-blind.

Each algorithm costs time linear in the field's length (fuzzy: times the pattern's words); a
document's fields are split into words once (`Words`), whatever the number of rules. RE2 and
rapidfuzz are imported when first needed (6 MiB a process that has no such rule does not carry;
packaging/pyinstaller.spec names them).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from dms.errors import Invalid
from dms.files.fairness import yield_to_requests

FIELDS = ("text", "title", "file_name", "mail_from", "mail_subject", "any")
# `any` looks at the fields in this order; the first that matches is the match.
ANY_ORDER = ("title", "file_name", "mail_subject", "mail_from", "text")
ALGORITHMS = ("any", "all", "exact", "regex", "fuzzy")
# Tuned by tests/domain/test_rules_fuzzy.py on OCR misreadings: a missing letter, a substituted
# letter in a word of 7 or more, and the folded confusions match; Alliance for Allianz,
# Krankenhaus for Krankenkasse, invoke for invoice do not.
FUZZY_THRESHOLD = 85
MAX_MATCH_LENGTH = 100  # characters of the matched text kept for {match} and the dry run
# RE2's memory for one pattern, its program and its cache of matching states (a quarter of RE2's
# default): a pattern needing more is refused; with the programs kept (_compile's cache), at
# most 256 x 2 MiB, in practice a few KiB each.
REGEX_MEMORY = 2 << 20

WORD = re.compile(r"\w+")  # a fixed pattern of dms's own, linear: no user input reaches `re`
# OCR's usual confusions, folded to one spelling on both sides of a fuzzy comparison.
FOLD_CHARACTERS = str.maketrans({"0": "o", "1": "l", "i": "l"})
# Spread, not merged: folding "rn" into "m" would also fold a real "r" followed by "n" left
# next to each other by a missing letter ("insurnce"), and lose that word.
FOLD_PAIRS = (("m", "rn"), ("w", "vv"))


@dataclass(frozen=True)
class Match:
    """Where a rule matched and the text it matched (at most MAX_MATCH_LENGTH characters)."""
    field: str
    text: str


@dataclass(frozen=True)
class Pattern:
    """A rule's `match`, checked."""
    field: str
    algorithm: str
    pattern: str
    case_sensitive: bool


def check_pattern(algorithm: str, pattern: str, case_sensitive: bool, pointer: str) -> None:
    """Invalid (at `pointer`) unless the pattern can be matched with this algorithm."""
    if algorithm == "regex":
        compiled_regex(pattern, case_sensitive)
        return
    if not WORD.search(pattern):
        raise Invalid(f"A pattern of the {algorithm} algorithm needs at least one word (letters "
                      "or digits).", pointer)


def regex_options(case_sensitive: bool) -> Any:
    import re2

    options = re2.Options()
    options.case_sensitive = case_sensitive
    options.max_mem = REGEX_MEMORY
    options.log_errors = False  # a refused pattern is the user's answer, not a log line
    return options


@functools.lru_cache(maxsize=256)
def _compile(pattern: str, case_sensitive: bool) -> tuple[Any, str | None]:
    import re2

    try:
        return re2.compile(pattern, regex_options(case_sensitive)), None
    except re2.error as error:
        reason = error.args[0] if error.args else error
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        return None, str(reason)


def compiled_regex(pattern: str, case_sensitive: bool) -> Any:
    """The RE2 program of a pattern (compiled once per process); Invalid with RE2's reason."""
    program, reason = _compile(pattern, case_sensitive)
    if program is None:
        raise Invalid(f"The regular expression is not valid for RE2: {reason}. (RE2 has no "
                      "backreferences or lookaround; see the guide.)", "match/pattern")
    return program


def fold(text: str) -> str:
    """A fuzzy comparison's spelling of `text`: casefolded, OCR's confusions made one."""
    text = text.casefold().translate(FOLD_CHARACTERS)
    for pair, single in FOLD_PAIRS:
        text = text.replace(pair, single)
    return text


T = TypeVar("T")

class Words:
    """One field's text split into words, and the views the algorithms need, each made once."""

    def __init__(self, text: str):
        self.text = text
        self.words: list[str] = WORD.findall(text)
        self._cache: dict[object, object] = {}

    def _once(self, key: object, make: Callable[[], T]) -> T:
        if key not in self._cache:
            self._cache[key] = make()
        return cast(T, self._cache[key])

    def keys(self, case_sensitive: bool) -> list[str]:
        """The words as compared: as they are, or casefolded."""
        if case_sensitive:
            return self.words
        return self._once("casefolded", lambda: _folded(self.text, self.words, str.casefold))

    def word_set(self, case_sensitive: bool) -> frozenset[str]:
        return self._once(("set", case_sensitive),
                          lambda: frozenset(self.keys(case_sensitive)))

    def joined(self, case_sensitive: bool) -> str:
        """The words separated by single spaces, with a space at each end."""
        return self._once(("joined", case_sensitive),
                          lambda: " " + " ".join(self.keys(case_sensitive)) + " ")

    def windows(self, size: int) -> list[str]:
        """Every run of `size` folded words, joined by spaces (window i starts at word i)."""
        def make() -> list[str]:
            folded = self._once("fuzzy", lambda: _folded(self.text, self.words, fold))
            return [" ".join(folded[i:i + size]) for i in range(len(folded) - size + 1)]
        return self._once(("windows", size), make)

    def spelled(self, start: int, count: int) -> str:
        """Words `start` to `start + count` as the document has them, with what stands between
        them (`billing@stadtwerke.example`), runs of white space made one space."""
        spans = self._once("spans", lambda: [m.span() for m in WORD.finditer(self.text)])
        first, last = spans[start][0], spans[start + count - 1][1]
        return " ".join(self.text[first:last].split())


def _folded(text: str, words: list[str], how: Callable[[str], str]) -> list[str]:
    """`words` changed by `how`: the whole text at once (fast, in C) when that keeps the words
    apart as they were, else word by word."""
    changed = WORD.findall(how(text))
    if len(changed) == len(words):
        return changed
    return [how(word) for word in words]


def find(pattern: Pattern, fields: dict[str, Words]) -> Match | None:
    """The first match of the pattern in the document's `fields` (by name), or None."""
    names = ANY_ORDER if pattern.field == "any" else (pattern.field,)
    for name in names:
        words = fields.get(name)
        if words is None or not words.text:
            continue
        found = ALGORITHM[pattern.algorithm](pattern, words)
        if found is not None:
            return Match(name, found[:MAX_MATCH_LENGTH])
    return None


def _pattern_keys(pattern: Pattern) -> list[str]:
    words = WORD.findall(pattern.pattern)
    return words if pattern.case_sensitive else [w.casefold() for w in words]


def _any(pattern: Pattern, words: Words) -> str | None:
    present = words.word_set(pattern.case_sensitive)
    for key in _pattern_keys(pattern):
        if key in present:
            return words.words[words.keys(pattern.case_sensitive).index(key)]
    return None


def _all(pattern: Pattern, words: Words) -> str | None:
    keys = _pattern_keys(pattern)
    present = words.word_set(pattern.case_sensitive)
    if not all(key in present for key in keys):
        return None
    found = words.keys(pattern.case_sensitive)
    return " ".join(words.words[found.index(key)] for key in dict.fromkeys(keys))


def _exact(pattern: Pattern, words: Words) -> str | None:
    keys = _pattern_keys(pattern)
    joined = words.joined(pattern.case_sensitive)
    at = joined.find(" " + " ".join(keys) + " ")
    if at < 0:
        return None
    return words.spelled(joined.count(" ", 0, at), len(keys))


def _regex(pattern: Pattern, words: Words) -> str | None:
    found = compiled_regex(pattern.pattern, pattern.case_sensitive).search(words.text)
    if found is None:
        return None
    if found.re.groups and found.group(1) is not None:
        return cast(str, found.group(1))
    return cast(str, found.group(0))


def _fuzzy(pattern: Pattern, words: Words) -> str | None:
    from rapidfuzz import fuzz, process

    keys = WORD.findall(fold(pattern.pattern))
    wanted = " ".join(keys)
    best = None
    for size in sorted({max(1, len(keys) - 1), len(keys), len(keys) + 1}):
        # Each size's runs of a long text are some milliseconds of Python: requests first.
        yield_to_requests()
        hit = process.extractOne(wanted, words.windows(size), scorer=fuzz.ratio,
                                 processor=None, score_cutoff=FUZZY_THRESHOLD)
        if hit is not None and (best is None or hit[1] > best[0]):
            best = (hit[1], hit[2], size)
    if best is None:
        return None
    return words.spelled(best[1], best[2])


ALGORITHM: dict[str, Callable[[Pattern, Words], str | None]] = {
    "any": _any, "all": _all, "exact": _exact, "regex": _regex, "fuzzy": _fuzzy}
