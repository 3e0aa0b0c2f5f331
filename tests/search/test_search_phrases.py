"""Phrases of common words (dms.search.pairs): the index also holds each field's neighbouring
terms with a stop word in them as one term, made a piece of a long text at a time; a phrase of
two words with a common one is its pair, a longer one must hold its pairs too. The pairs of a
text cut into pieces are those of the whole text, whatever the pieces' size and the text's
signs; a pair is exactly two terms at neighbouring positions in tantivy's index (not across a
word the analyzer drops, nor across fields); a phrase far into a long text is found, and a
phrase finds exactly what its positions say, on both engines (PostgreSQL has no pairs: the same
answers; the table of phrases is in test_query_language.py)."""

from __future__ import annotations

import random

import pytest

from dms import search
from dms.search import pairs
from dms.search.index import Entry, SearchIndex, schema
from dms.search.pairs import is_common, pairs_of, text_pairs
from dms.search.terms import ANALYZER, analyzer, positioned, terms
from tests.harness import samples
from tests.harness.domaintier import new_user, read_document
from tests.harness.waiting import wait_indexed

WORDS = ["with", "for", "the", "of", "und", "Straße", "über", "Zeug", "a", "x" * 30, "y" * 45,
         "4711", "-", ".", "_", " ", "  ", "\n", "é", "é" * 19, "é" * 20, "ǅ" * 13, "x" * 39,
         "x" * 40, "न" + "\u093f" * 3, "ﬁ" * 15]


def random_text(chance: random.Random, words: int = 300) -> str:
    return "".join(chance.choice(WORDS) + chance.choice([" ", "", "-", ",", "\t"])
                   for _ in range(words))


def test_a_long_texts_pairs_are_those_of_its_beginning_and_it_is_marked(monkeypatch):
    monkeypatch.setattr(pairs, "PAIRED_CHARS", 20)
    assert text_pairs("with the invoice") == ["with the", "the invoice"]
    assert text_pairs("with the invoice and the delivery") == [
        "with the", "the invoice", "invoice and", " "]
    assert text_pairs("x" * 30) == [" "]


def test_only_pairs_with_a_stop_word_are_made_as_often_as_they_come():
    assert [is_common(term) for term in ("with", "the", "und", "les", "invoice", "fur")] == [
        True, True, True, True, False, False]
    assert text_pairs("Invoice with the delivery") == ["invoice with", "with the", "the delivery"]
    assert text_pairs("Über die Rechnung, und die Rechnung") == [
        "uber die", "die rechnung", "rechnung und", "und die", "die rechnung"]
    # not across a word the analyzer drops (40 bytes or more): tantivy leaves its place empty
    assert text_pairs(f"with {'x' * 39} for with {'x' * 40} for with {'é' * 20} for") == [
        f"with {'x' * 39}", f"{'x' * 39} for", "for with", "for with"]


@pytest.mark.parametrize("seed", range(40))
def test_a_text_cut_into_pieces_gives_the_pairs_of_the_whole(monkeypatch, seed):
    chance = random.Random(seed)
    text = random_text(chance)
    monkeypatch.setattr(pairs, "PIECE_CHARS", chance.randint(1, 90))
    assert text_pairs(text) == list(pairs_of(positioned(text)))


@pytest.mark.parametrize("seed", range(20))
def test_positioned_terms_are_the_analyzers_with_its_gaps(seed):
    chance = random.Random(seed)
    text = random_text(chance) + "".join(chr(chance.randrange(32, 0x3000)) for _ in range(400))
    assert [term for term in positioned(text) if term is not None] == terms(text)


@pytest.mark.parametrize("paired_chars", [1_000_000, 300])
def test_a_pair_is_exactly_a_phrase_of_two_words_in_tantivys_index(monkeypatch, paired_chars):
    """The phrase of two words with a common one is answered by its pair alone
    (dms.search.treequery): over random texts with long words, signs and pieces, each field's
    pair finds exactly the documents tantivy's own phrase query (its positions) finds; so does
    the query of a phrase, of two words or three, when texts are longer than their pairs go
    (PAIRED_CHARS)."""
    import tantivy

    from dms.search.snapshot import Snapshot
    from dms.search.treequery import _Compiler

    monkeypatch.setattr(pairs, "PIECE_CHARS", 37)
    monkeypatch.setattr(pairs, "PAIRED_CHARS", paired_chars)
    chance = random.Random(7)
    index = tantivy.Index(schema())
    index.register_tokenizer(ANALYZER, analyzer())
    writer = index.writer(15_000_000, 1)
    for number in range(60):
        writer.add_document(SearchIndex.document(Entry(
            f"node{number}", "alice", random_text(chance, 6), random_text(chance, 80), [], [],
            notes=random_text(chance, 10))))
    writer.commit()
    index.reload()
    searcher = index.searcher()

    def found(query) -> set[str]:
        return {searcher.doc(address)["id"][0] for _, address in searcher.search(query, 100).hits}

    words = sorted({term for word in WORDS for term in terms(word)})
    compiler = _Compiler(Snapshot(searcher, schema()), None, None, False)
    checked = 0
    for field in ("title", "body", "notes"):
        for first in words:
            for second in words:
                pair = list(pairs_of([first, second]))
                if not pair:
                    continue
                by_positions = found(tantivy.Query.phrase_query(schema(), field, [first, second]))
                assert found(compiler.phrase_in(field, [first, second])) == by_positions, \
                    (field, pair)
                if paired_chars > 1_000:  # every text's pairs: the pair alone is the phrase
                    assert found(tantivy.Query.term_query(
                        schema(), pairs.FIELDS[field], pair[0])) == by_positions, (field, pair)
                checked += len(by_positions)
                third = words[(len(first) + len(second)) % len(words)]
                assert found(compiler.phrase_in(field, [first, second, third])) == found(
                    tantivy.Query.phrase_query(schema(), field, [first, second, third]))
    assert checked > 500


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
