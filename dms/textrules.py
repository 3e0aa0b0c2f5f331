"""Which characters a name shown to people may hold: titles, file names, usernames, token names.

Control characters break listings and logs. Invisible formatting characters let a name look like
another: a right-to-left override makes `invoice\u202efdp.exe` display as `invoiceexe.pdf`, and a
zero-width space makes two equal-looking names differ. Zero-width (non-)joiners stay allowed:
Persian, Indic scripts and emoji sequences need them."""

from __future__ import annotations

import unicodedata

# Cc control, Cf format (bidi overrides, zero-width space, BOM, ...), Cs lone surrogates (only
# reachable through JSON \ud800 escapes), Co private use, Cn unassigned, Zl/Zp line breaks.
REFUSED_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
ALLOWED_FORMAT_CHARACTERS = {"\u200c", "\u200d"}  # zero-width non-joiner and joiner


def is_refused_character(character: str) -> bool:
    return (unicodedata.category(character) in REFUSED_CATEGORIES
            and character not in ALLOWED_FORMAT_CHARACTERS)


def has_refused_characters(text: str) -> bool:
    return any(is_refused_character(c) for c in text)
