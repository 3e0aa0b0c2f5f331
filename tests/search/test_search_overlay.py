"""The overlay's matching (dms.search.overlay, a user's few changes the index lacks, matched in
memory) finds exactly what the tantivy index finds for the same nodes: the same words, prefixes
and short words, fields, accents and cases, and tag filters; and for the query language's trees
of words, phrases, fields, NOT, AND and OR; words inside compound words, in the second tier
alike; and both count as many as they find."""

from __future__ import annotations

import random

import pytest

from dms.domain.searchquery import All, Not, Words
from dms.domain.searchquery import Any as AnyOf
from dms.search.index import Entry, SearchIndex, Snapshot, terms
from dms.search.overlay import Overlaid, Pending

pytestmark = pytest.mark.sqlite_only  # the tantivy index; no database

OWNER = "owner-1"


def corpus(rnd: random.Random) -> tuple[list[Entry], list[str]]:
    special = ["Käse", "Straße", "FAÇADE", "2024", "x9z", "Ärger", "naïve"]
    vocabulary = special + ["".join(rnd.choice("bcdfgklmnprst") + rnd.choice("aeiou")
                                    for _ in range(rnd.randint(1, 4))) for _ in range(40)]
    tag_ids = [f"tag-{n}" for n in range(4)]
    entries = []
    for number in range(12):
        tags = rnd.sample(tag_ids, rnd.randint(0, 2))
        entries.append(Entry(
            f"node-{number}", OWNER,
            " ".join(rnd.sample(vocabulary, rnd.randint(1, 3))),
            " ".join(rnd.choice(vocabulary) + rnd.choice([" ", ", ", "-", "\n", "/"])
                     for _ in range(rnd.randint(0, 30))),
            [" ".join(rnd.sample(vocabulary, 1)) for _ in tags], tags))
    return entries, vocabulary


def both_ways(tmp_path, entries: list[Entry]) -> tuple[Snapshot, Overlaid]:
    """The entries in a tantivy index, and laid over an empty one."""
    index = SearchIndex(tmp_path / "index")
    index.create_empty()
    writer = index.writer()
    for entry in entries:
        index.put(writer, entry.node_id, entry)
    writer.commit()
    index.reload()
    empty = SearchIndex(tmp_path / "empty")
    empty.create_empty()
    return index.snapshot(), Overlaid(empty.snapshot(), tuple(Pending.of(e) for e in entries),
                                      frozenset(entry.node_id for entry in entries))


def with_compounds(entries: list[Entry], vocabulary: list[str]) -> None:
    """Compound words of the vocabulary's in the texts and titles: words of a query are found
    inside them (dms.search.terms), in the second tier."""
    rnd = random.Random(7)
    for number, entry in enumerate(entries):
        compounds = " ".join("".join(rnd.sample(vocabulary, 2)) for _ in range(3))
        if number % 3:
            entry.body += f" {compounds}"
        else:
            entry.title += f" {compounds}"


def tiers(hits: list[tuple[str, float]]) -> set[tuple[str, bool]]:
    """The hits, each with whether it was found inside a word only (scored below 0)."""
    return {(node_id, score < 0) for node_id, score in hits}


def test_the_overlay_matches_what_the_index_matches(tmp_path):
    rnd = random.Random(20261128)
    entries, vocabulary = corpus(rnd)
    with_compounds(entries, vocabulary)
    snapshot, overlay = both_ways(tmp_path, entries)
    compared = inside = 0
    for _ in range(400):
        words = [word[:rnd.randint(1, len(word))] if rnd.random() < 0.5 else word
                 for word in rnd.sample(vocabulary, rnd.randint(1, 3))]
        query = terms(" ".join(words))
        if not query:
            continue
        filters = rnd.choice([(), ("tag-1",), ("tag-0", "tag-2")])
        op = rnd.choice(["all", "any"])
        from_index = tiers(snapshot.search(OWNER, query, 100, filters, op))
        from_overlay = tiers(overlay.search(OWNER, query, 100, filters, op))
        assert from_overlay == from_index, (query, filters, op)
        # The totals of a paged search (api.md, "Search": `page`), each counted its own way.
        assert (overlay.total(OWNER, query, filters, op), snapshot.total(
            OWNER, query, filters, op)) == (len(from_index), len(from_index))
        compared += bool(from_index)
        inside += any(only_inside for _, only_inside in from_index)
    assert compared > 100  # most queries found something: the comparison means something
    assert inside > 15  # and many found some node inside a compound word only


def random_tree(rnd: random.Random, vocabulary: list[str], depth: int = 0):
    """A tree of the query language of words only: plain, in a field, phrases; NOT, AND, OR."""
    if depth < 2 and rnd.random() < 0.4:
        parts = tuple(random_tree(rnd, vocabulary, depth + 1) for _ in range(rnd.randint(2, 3)))
        return rnd.choice([All, AnyOf])(parts)
    if depth and rnd.random() < 0.2:
        return Not(random_tree(rnd, vocabulary, depth + 1))
    field = rnd.choice([None, None, "title", "text", "notes"])
    if rnd.random() < 0.3:
        return Words(" ".join(rnd.sample(vocabulary, 2)), field, True, 1)
    word = rnd.choice(vocabulary)
    return Words(word[:rnd.randint(1, len(word))], field, False, 1)


def test_the_overlay_matches_what_the_index_matches_for_the_query_language(tmp_path):
    """Phrases, fields (notes included), NOT, AND, OR: the overlay's find is the index's."""
    rnd = random.Random(20261129)
    entries, vocabulary = corpus(rnd)
    # Phrases that are there: each entry's text begins with two words of the vocabulary.
    for number, entry in enumerate(entries):
        first, second = vocabulary[number % 7], vocabulary[(number * 3) % 11]
        entry.body = f"{first} {second} {entry.body}"
        entry.notes = f"{second} {first}" if number % 2 else ""
    with_compounds(entries, vocabulary[:12])
    snapshot, overlay = both_ways(tmp_path, entries)
    compared = inside = 0
    for _ in range(300):
        tree = random_tree(rnd, vocabulary[:12])
        from_index = tiers(snapshot.find(OWNER, tree, 100))
        from_overlay = tiers(overlay.find(OWNER, tree, 100))
        assert from_overlay == from_index, tree
        inside += any(only_inside for _, only_inside in from_index)
        assert (overlay.total_tree(OWNER, tree), snapshot.total_tree(OWNER, tree)) == (
            len(from_index), len(from_index)), tree
        compared += 0 < len(from_index) < len(entries)
    assert compared > 60  # most trees found some but not all: the comparison means something
    assert inside > 15  # some found inside a compound word only
