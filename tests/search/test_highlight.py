"""Snippets (dms.search.highlight) find their first match with one regular expression over the
text (ASCII words told in C, a word with a letter beyond ASCII folded and decided in Python): the
same snippet as a word-by-word walk would make, for folded words, words that begin before a
window, matches inside compounds and the scan's limit."""

from __future__ import annotations

import pytest

from dms.search import highlight
from dms.search.highlight import Highlighter, snippet

pytestmark = pytest.mark.sqlite_only  # no database: the same in both lanes


def test_an_ascii_match_after_words_that_fold():
    text = "Über den Käse schrieb Ärger an die Bank: Rechnung folgt im März."
    assert snippet(text, ["rechnung"]) == (
        "…Ärger an die Bank: <em>Rechnung</em> folgt im März.")
    # The folded word comes first; every match in the window is marked.
    assert snippet(text, ["kase", "bank"]) == (
        "Über den <em>Käse</em> schrieb Ärger an die <em>Bank</em>: Rechnung folgt im März.")


def test_letters_whose_lower_case_is_ascii_are_not_taken_for_ascii():
    # `İ` (U+0130) folds to `i̇`, its simple lower case is `i`: it is decided by folding.
    assert snippet("Der İstanbul Bericht", ["i̇s"], whole=True) == (
        "Der <em>İstanbul</em> Bericht")
    assert snippet("Der Istanbul Bericht", ["i̇s"], whole=True) is None


def test_words_before_are_whole_and_four_at_most():
    long_word = "a" * 300
    text = f"{long_word} eins zwei drei vier Vertrag Ende"
    assert snippet(text, ["vertrag"]) == "…eins zwei drei vier <em>Vertrag</em> Ende"
    assert snippet(f"{long_word} Vertrag", ["vertrag"]) == f"{long_word} <em>Vertrag</em>"


def test_inside_words_only_where_asked_and_past_the_first_letters():
    marks = Highlighter(["bescheid"])
    assert marks.snippet("Ihr Steuerbescheid 2024", inside=True) == (
        "Ihr <em>Steuerbescheid</em> 2024")
    assert marks.snippet("Ihr Steuerbescheid 2024") is None
    assert marks.snippet("Ihr Gebührenbescheid", inside=True) == "Ihr <em>Gebührenbescheid</em>"
    assert Highlighter(["steuer"]).snippet("xsteuer", inside=True) is None  # at 1: too early


def test_nothing_past_the_scan_limit_and_a_word_cut_by_it(monkeypatch):
    monkeypatch.setattr(highlight, "SCAN_CHARS", 20)
    text = "eins zwei drei vier Rechnung"  # `Rechnung` begins at 20: not scanned
    assert snippet(text, ["rechnung"]) is None
    assert snippet("eins zwei drei vier Rechnung", ["rec"]) is None
    assert snippet("eins zwei drei Rechnung", ["rechnung"]) is None  # cut to `Rechn`
    assert snippet("eins zwei drei Rechnung", ["rech"]) == "eins zwei drei <em>Rechn</em>ung"
