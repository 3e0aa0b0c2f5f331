"""Phrases of common words (dms.search.pairs): the index also holds each node's neighbouring
terms with a stop word in them as one term, made a piece of a long text at a time; a phrase must
hold its pairs too. The pairs of a text cut into pieces are those of the whole text, whatever
the pieces' size and the text's signs; a phrase far into a long text is found, and a phrase
finds exactly what its positions say, on both engines (PostgreSQL has no pairs: the same
answers; the table of phrases is in test_query_language.py)."""

from __future__ import annotations

import random

import pytest

from dms import search
from dms.search import pairs
from dms.search.pairs import is_common, node_pairs, pairs_of
from dms.search.terms import terms
from tests.harness import samples
from tests.harness.domaintier import new_user, read_document
from tests.harness.waiting import wait_indexed

WORDS = ["with", "for", "the", "of", "und", "Straße", "über", "Zeug", "a", "x" * 30, "y" * 45,
         "4711", "-", ".", "_", " ", "  ", "\n", "é"]


def test_only_pairs_with_a_stop_word_are_made_each_once():
    assert [is_common(term) for term in ("with", "the", "und", "les", "invoice", "fur")] == [
        True, True, True, True, False, False]
    assert node_pairs("Invoice with the delivery", "Über die Rechnung, und die Rechnung",
                      "") == ["invoice with", "with the", "the delivery", "uber die",
                              "die rechnung", "rechnung und", "und die"]


@pytest.mark.parametrize("seed", range(40))
def test_a_text_cut_into_pieces_gives_the_pairs_of_the_whole(monkeypatch, seed):
    chance = random.Random(seed)
    text = "".join(chance.choice(WORDS) + chance.choice([" ", "", "-", ",", "\t"])
                   for _ in range(300))
    monkeypatch.setattr(pairs, "PIECE_CHARS", chance.randint(1, 90))
    assert node_pairs(text) == list(dict.fromkeys(pairs_of(terms(text))))


def test_a_phrase_far_into_a_long_text_is_found_and_nothing_else(reading):
    services = reading
    alice = new_user("alice")
    # 70,400 characters, more than a piece, in few words: PostgreSQL, which has no pairs,
    # counts positions up to a page's 16,383rd word (api.md, "Where it runs").
    filler = " ".join(f"paragraph{n:05d}" for n in range(4_400))
    read_document(services, alice, "long", "long.txt", samples.text(
        f"{filler} they came out of the garden at last"))
    read_document(services, alice, "short", "short.txt", samples.text(
        "out of garden, the garden of the house"))
    wait_indexed(services.config)

    def titles(text: str) -> list[str]:
        return sorted(hit["title"] for hit in search.query(services.search, alice, text))

    assert titles('"out of the garden"') == ["long"]
    assert titles('"of the"') == ["long", "short"]
    assert titles('"out of garden"') == ["short"]
    assert titles('"garden of the house"') == ["short"]
    assert titles('"the garden at last"') == ["long"]
    assert titles('"paragraph04399 they came"') == ["long"]
