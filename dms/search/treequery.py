"""A resolved query of the query language (dms.domain.searchquery) as one tantivy query, run in
the index like any search (dms.search.index.Snapshot.find) — nothing is filtered afterwards.

- Words: each of a leaf's terms is a word of the plain search (itself, or the beginning of the
  most frequent terms), in the title, tag names and text — or only in the leaf's field (`title:`,
  `text:`, `notes:`). All of a leaf's terms must match.
- A phrase: its terms next to each other in this order (no prefixes), in the title or the text,
  or in the leaf's field; two words with a common one: their pair's term, longer phrases also
  hold their pairs with a common word, to narrow where tantivy looks (dms.search.pairs).
- Names, numbers, dates: terms and ranges of the index's own fields (Keys, Between), scoring
  nothing — a closed range of days as the terms of its years, months and days
  (dms.search.days); a custom field: the documents the database found for it (`id` terms, see
  dms.domain.searchquery.resolve.document_ids).
- NOT, AND, OR: tantivy's MustNot, Must and Should.
- Words inside compound words (dms.search.snapshot's second tier, `broad`): a words leaf without
  a field, not under a NOT, also matches inside words as the plain search does. A leaf with a
  field (`title:`, `text:`, `notes:`) and a phrase match whole words and beginnings only: the
  inner parts are kept for the title, tag names and text together, not per field.
"""

from __future__ import annotations

from typing import Any

from dms.domain.searchquery import All, Meta, Not, Words
from dms.domain.searchquery import Any as AnyOf
from dms.domain.searchquery.resolve import Between, Keys
from dms.search import days
from dms.search.pairs import FIELDS as PAIRS_FIELDS
from dms.search.pairs import PAST, pairs_of
from dms.search.terms import (
    ANYWHERE,
    EXPANSIONS_LAST,
    EXPANSIONS_OTHER,
    MIN_TEXT_PREFIX,
    MIN_TITLE_PREFIX,
    TITLE_BOOST,
    looks_inside,
    terms,
)

# The fields a word leaf looks in, by the leaf's field (None: anywhere).
WORD_FIELDS: dict[str | None, tuple[tuple[str, float, int], ...]] = {
    None: ANYWHERE,
    "title": (("title", TITLE_BOOST, MIN_TITLE_PREFIX),),
    "text": (("body", 1.0, MIN_TEXT_PREFIX),),
    "notes": (("notes", 1.0, MIN_TEXT_PREFIX),),
}
# Up to this many values are a union of terms, more a term set: a term set makes a bit set of
# all the documents it matches before anything is intersected with it (a correspondent of 50,000
# documents beside a word: 1.70× the word alone at a million, 0.94× as a term; bench/RESULTS.md).
MAX_TERMS = 100
# A phrase anywhere: in the title or the text.
PHRASE_FIELDS: dict[str | None, tuple[tuple[str, float], ...]] = {
    None: (("title", TITLE_BOOST), ("body", 1.0)),
    "title": (("title", TITLE_BOOST),),
    "text": (("body", 1.0),),
    "notes": (("notes", 1.0),),
}


def compile_tree(snapshot: Any, tree: Any, only_theirs: Any, broad: bool = False) -> Any:
    return _Compiler(snapshot, tree, only_theirs, broad).query(tree)


def looks_inside_tree(tree: Any) -> bool:
    """Whether `broad` changes the tree's query: a words leaf without a field, not under a NOT,
    has a word long enough to be looked for inside others."""
    if isinstance(tree, Words):
        return (tree.field is None and not tree.phrase
                and any(looks_inside(word) for word in terms(tree.text)))
    if isinstance(tree, (All, AnyOf)):
        return any(looks_inside_tree(part) for part in tree.parts)
    return False


def last_words(tree: Any) -> Words | None:
    """The last words leaf (the one being typed: its last word gets the most expansions)."""
    if isinstance(tree, Words):
        return tree
    if isinstance(tree, Not):
        return last_words(tree.part)
    if isinstance(tree, (All, AnyOf)):
        for part in reversed(tree.parts):
            found = last_words(part)
            if found is not None:
                return found
    return None


class _Compiler:
    def __init__(self, snapshot: Any, tree: Any, only_theirs: Any, broad: bool):
        import tantivy

        self.tantivy = tantivy
        self.snapshot, self.schema, self.only_theirs = snapshot, snapshot.schema, only_theirs
        self.typed = last_words(tree)
        self.broad = broad

    def narrowly(self, node: Any) -> Any:
        """`node` (under a NOT) without matches inside words: what it excludes stays put."""
        broad, self.broad = self.broad, False
        try:
            return self.query(node)
        finally:
            self.broad = broad

    def query(self, node: Any) -> Any:
        tantivy = self.tantivy
        if isinstance(node, Words):
            return self.words(node)
        if isinstance(node, Meta):
            return tantivy.Query.const_score_query(self.meta(node), 0.0)
        if isinstance(node, Not):
            return tantivy.Query.boolean_query([(tantivy.Occur.Must, tantivy.Query.all_query()),
                                                (tantivy.Occur.MustNot, self.narrowly(node.part))])
        if isinstance(node, All):
            clauses = [(tantivy.Occur.MustNot, self.narrowly(part.part)) if isinstance(part, Not)
                       else (tantivy.Occur.Must, self.query(part)) for part in node.parts]
            if all(occur == tantivy.Occur.MustNot for occur, _ in clauses):
                clauses.append((tantivy.Occur.Must, tantivy.Query.all_query()))
            return tantivy.Query.boolean_query(clauses)
        assert isinstance(node, AnyOf)
        return tantivy.Query.boolean_query([(tantivy.Occur.Should, self.query(part))
                                            for part in node.parts])

    def words(self, leaf: Words) -> Any:
        tantivy = self.tantivy
        found = terms(leaf.text)
        if not found:  # only signs (`—`): no condition, as the plain search drops them
            return tantivy.Query.all_query()
        if leaf.phrase:
            return self.phrase(found, leaf.field)
        parts = []
        for position, term in enumerate(found):
            last = leaf is self.typed and position == len(found) - 1
            parts.append((tantivy.Occur.Must, self.snapshot.word(
                term, EXPANSIONS_LAST if last else EXPANSIONS_OTHER, WORD_FIELDS[leaf.field],
                self.only_theirs, self.broad and leaf.field is None)))
        return parts[0][1] if len(parts) == 1 else tantivy.Query.boolean_query(parts)

    def phrase(self, found: list[str], field: str | None) -> Any:
        tantivy = self.tantivy
        alternatives = []
        for name, boost in PHRASE_FIELDS[field]:
            query = self.phrase_in(name, found)
            if boost != 1.0:
                query = tantivy.Query.boost_query(query, boost)
            alternatives.append((tantivy.Occur.Should, query))
        return alternatives[0][1] if len(alternatives) == 1 else \
            tantivy.Query.boolean_query(alternatives)

    def phrase_in(self, name: str, found: list[str]) -> Any:
        """The phrase in one field. Two words with a common one are their pair (dms.search.pairs:
        the same documents, no positions read); a longer phrase must also hold its pairs with a
        common word, which lets tantivy check the positions of far fewer documents. A text too
        long to have all its pairs (marked PAST) is checked by its positions alone."""
        tantivy = self.tantivy
        if len(found) == 1:
            return tantivy.Query.term_query(self.schema, name, found[0], index_option="freq")
        phrase = tantivy.Query.phrase_query(self.schema, name, found)
        pairs = list(dict.fromkeys(pairs_of(found)))
        if not pairs:
            return phrase
        field = PAIRS_FIELDS[name]

        def term(pair: str) -> Any:
            return tantivy.Query.term_query(self.schema, field, pair, index_option="freq")

        past = tantivy.Query.boolean_query([(tantivy.Occur.Must, phrase), (
            tantivy.Occur.Must, tantivy.Query.const_score_query(term(PAST), 0.0))])
        if len(found) == 2:
            return tantivy.Query.boolean_query([(tantivy.Occur.Should, term(pairs[0])),
                                                (tantivy.Occur.Should, past)])
        paired = tantivy.Query.boolean_query([(tantivy.Occur.Must, tantivy.Query.const_score_query(
            term(pair), 0.0)) for pair in pairs])
        return tantivy.Query.boolean_query([(tantivy.Occur.Must, phrase), (
            tantivy.Occur.Must, tantivy.Query.boolean_query([(tantivy.Occur.Should, paired), (
                tantivy.Occur.Should, tantivy.Query.const_score_query(term(PAST), 0.0))]))])

    def meta(self, leaf: Meta) -> Any:
        tantivy, index = self.tantivy, leaf.index
        if isinstance(index, Keys):
            if len(index.values) > MAX_TERMS:  # a folder with many below it, many tags
                return tantivy.Query.term_set_query(self.schema, index.field, list(index.values))
            return self.any_term(index.field, list(index.values))
        if isinstance(index, Between):
            if index.low is None and index.high is None:
                return tantivy.Query.exists_query(index.field)
            if index.field in days.FIELDS and index.low is not None and index.high is not None:
                covered = days.covering(index.low, index.high)
                if covered is not None:  # a few terms: far faster beside words than a range
                    return self.any_term(days.FIELDS[index.field], covered)
            return tantivy.Query.range_query(self.schema, index.field, tantivy.FieldType.Integer,
                                             index.low, index.high)
        raise ValueError("a custom field's documents are looked up before (service.with_ids)")

    def any_term(self, field: str, values: list[str]) -> Any:
        tantivy = self.tantivy
        if not values:
            return tantivy.Query.empty_query()
        queries = [tantivy.Query.term_query(self.schema, field, value) for value in values]
        return queries[0] if len(queries) == 1 else tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, query) for query in queries])
