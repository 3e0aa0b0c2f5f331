"""Text rules every layer shares: which characters a name shown to people may hold (titles, file
names, usernames, token names), the one check of a required name, what makes two usernames the
same, and text for logs (escaped controls, page ranges).

Control characters break listings and logs. Invisible formatting characters let a name look like
another: a right-to-left override makes `invoice\u202efdp.exe` display as `invoiceexe.pdf`, and a
zero-width space makes two equal-looking names differ. Zero-width (non-)joiners stay allowed:
Persian, Indic scripts and emoji sequences need them."""

from __future__ import annotations

import unicodedata

from dms.errors import Invalid

# Cc control, Cf format (bidi overrides, zero-width space, BOM, ...), Cs lone surrogates (only
# reachable through JSON \ud800 escapes), Co private use, Cn unassigned, Zl/Zp line breaks.
REFUSED_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
ALLOWED_FORMAT_CHARACTERS = {"\u200c", "\u200d"}  # zero-width non-joiner and joiner


def is_refused_character(character: str) -> bool:
    return (unicodedata.category(character) in REFUSED_CATEGORIES
            and character not in ALLOWED_FORMAT_CHARACTERS)


def has_refused_characters(text: str) -> bool:
    return any(is_refused_character(c) for c in text)


# C0 and C1 controls, DEL, line and paragraph separators and the bidi controls: what could end a
# line, start a terminal escape sequence or reorder what a log line shows.
_ESCAPED = {code: f"\\x{code:02x}" for code in (*range(32), *range(127, 160))}
_ESCAPED.update({code: f"\\u{code:04x}" for code in (0x2028, 0x2029, *range(0x202A, 0x202F),
                                                      *range(0x2066, 0x206A))})
_ESCAPED.update({ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"})


def escape_controls(text: str) -> str:
    """`text` on one line as it looks, for logs and terminals: a file name holding ESC and a
    newline cannot forge a log line or colour a terminal."""
    return text.translate(_ESCAPED)


def required_text(value: object, field: str, noun: str, max_length: int | None = None,
                  strip: bool = True) -> str:
    """The one check of a required name (a title, a tag name, a username, a login's fields):
    present, text, not blank, at most `max_length` characters; trimmed unless `strip` is False
    (a password is taken as typed). Callers add their own character rules."""
    if value is None:
        raise Invalid(f"A {noun} is required.", field, code="required")
    if not isinstance(value, str):
        raise Invalid(f"A {noun} must be text.", field)
    text = value.strip() if strip else value
    if not text:
        raise Invalid(f"A {noun} may not be blank.", field, code="blank")
    if max_length is not None and len(text) > max_length:
        raise Invalid(f"A {noun} has at most {max_length} characters.", field)
    return text


def is_whole_number(text: str, max_digits: int = 18) -> bool:
    """Whether int() reads `text` as a whole number of at most `max_digits` digits: ASCII digits
    only ("²" and "٣" are digits to str.isdigit, not to int(), which also refuses more than 4,300
    digits)."""
    return text.isascii() and text.isdigit() and len(text) <= max_digits


def username_key(username: str) -> str:
    """What makes two usernames the same: `ADMIN` and `admin`, `ｆｏｏ` and `foo` (the unique
    `user.username_key` column; restore and verify check it too)."""
    return unicodedata.normalize("NFKC", username).casefold()


def ranges(numbers: list[int]) -> str:
    """[1, 2, 3, 5] -> "1-3, 5": page numbers for logs and reports."""
    runs: list[tuple[int, int]] = []
    for number in sorted(numbers):
        if runs and number == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], number)
        else:
            runs.append((number, number))
    return runs_text(runs)


def runs_text(runs: list[tuple[int, int]]) -> str:
    return ", ".join(str(first) if first == last else f"{first}-{last}" for first, last in runs)
