"""Queries of one commit of the search index (dms.search.index): the plain search's words, the
query language's trees (dms.search.treequery), their totals.

A query word matches in two tiers (api.md §22, "Search"): first the nodes where every word is
found whole or as a beginning (dms.search.index explains the prefixes); then, only while those
are fewer than asked for, the nodes where some word is found only inside another word (its
`inner` parts, dms.search.terms), scored below all of the first (terms.inside). A query whose
words are all too short to be looked for inside others has the first tier only. A total counts
both tiers at once (one query with every word's alternatives).
"""

from __future__ import annotations

from dms.search.terms import (
    ANYWHERE,
    EXPANSIONS_LAST,
    EXPANSIONS_OTHER,
    inside,
    looks_inside,
)
from dms.search.treequery import compile_tree, looks_inside_tree

INNER_FIELD = "inner"


class Snapshot:
    """A searcher of one commit of the index."""

    def __init__(self, searcher, schema):
        self.searcher, self.schema = searcher, schema

    def count(self) -> int:
        return self.searcher.num_docs

    def holds(self, node_id: str) -> bool:
        import tantivy

        query = tantivy.Query.term_query(self.schema, "id", node_id)
        return bool(self.searcher.search(query, 1, count=False).hits)

    def holds_only(self, owner_id: str) -> bool:
        """Whether every document in the index is `owner_id`'s: the owner field's terms (one
        per owner whose documents it holds, deleted ones included until merged away) are theirs
        alone. Walks one term per owner."""
        owners = self.searcher.terms_with_prefix("owner", "", limit=2)
        return [owner for owner, _ in owners] == [owner_id]

    def search(self, owner_id: str, words: list[str], limit: int,
               tag_ids: tuple[str, ...] = (), tags_op: str = "all") -> list[tuple[str, float]]:
        """The owner's best matches for `words` (already index terms), as (node id, score);
        with `tag_ids`, only nodes carrying all (or any) of those tags. Matches inside words
        after the others (see above)."""
        return self.tiered(
            lambda broad: self.words_clauses(owner_id, words, tag_ids, tags_op, broad),
            any(looks_inside(word) for word in words), limit)

    def total(self, owner_id: str, words: list[str], tag_ids: tuple[str, ...] = (),
              tags_op: str = "all", excluding: frozenset[str] = frozenset()) -> int:
        """How many nodes `search` finds in all (but those in `excluding`)."""
        broad = any(looks_inside(word) for word in words)
        return self.counted(self.words_clauses(owner_id, words, tag_ids, tags_op, broad),
                            excluding)

    def find(self, owner_id: str, tree, limit: int, tag_ids: tuple[str, ...] = (),
             tags_op: str = "all") -> list[tuple[str, float]]:
        """As `search`, for a resolved tree of the query language (dms.search.treequery)."""
        return self.tiered(
            lambda broad: self.tree_clauses(owner_id, tree, tag_ids, tags_op, broad),
            looks_inside_tree(tree), limit)

    def total_tree(self, owner_id: str, tree, tag_ids: tuple[str, ...] = (),
                   tags_op: str = "all", excluding: frozenset[str] = frozenset()) -> int:
        """How many nodes `find` finds in all (but those in `excluding`)."""
        return self.counted(self.tree_clauses(owner_id, tree, tag_ids, tags_op,
                                              looks_inside_tree(tree)), excluding)

    def tiered(self, clauses_of, broadens: bool, limit: int) -> list[tuple[str, float]]:
        """The best `limit` of the first tier (clauses_of(False)), then as many more as are
        wanted of the second: matching clauses_of(True) but not the first. Fewer than `limit`,
        the first tier's hits are all of its matches: they are left out by their ids, cheaper
        than matching the first tier's query again."""
        import tantivy

        hits = self.best(clauses_of(False), limit)
        if not broadens or len(hits) >= limit:
            return hits
        broad = clauses_of(True)
        if hits:
            broad.append((tantivy.Occur.MustNot, tantivy.Query.term_set_query(
                self.schema, "id", [node_id for node_id, _ in hits])))
        second = self.best(broad, limit - len(hits))
        return hits + [(node_id, inside(score)) for node_id, score in second]

    def words_clauses(self, owner_id: str, words: list[str], tag_ids: tuple[str, ...],
                      tags_op: str, broad: bool = False) -> list:
        import tantivy

        clauses, only_theirs = self.filters(owner_id, tag_ids, tags_op)
        for position, word in enumerate(words):
            expansions = EXPANSIONS_LAST if position == len(words) - 1 else EXPANSIONS_OTHER
            clauses.append((tantivy.Occur.Must, self.word(word, expansions, ANYWHERE,
                                                          only_theirs, broad)))
        return clauses

    def tree_clauses(self, owner_id: str, tree, tag_ids: tuple[str, ...], tags_op: str,
                     broad: bool = False) -> list:
        import tantivy

        clauses, only_theirs = self.filters(owner_id, tag_ids, tags_op)
        clauses.append((tantivy.Occur.Must, compile_tree(self, tree, only_theirs, broad)))
        return clauses

    def filters(self, owner_id: str, tag_ids: tuple[str, ...],
                tags_op: str) -> tuple[list, object]:
        """The clauses every query of the owner's has (their nodes, the tags asked for), and
        the query a prefix's expansions are counted in (None: the whole index)."""
        import tantivy

        schema = self.schema
        owner = tantivy.Query.term_query(schema, "owner", owner_id)
        # In an index of one person's documents (the usual appliance) the owner clause would
        # only cost time: intersecting with it is most of a common word's or a prefix's work.
        alone = self.holds_only(owner_id)
        clauses = [] if alone else [(tantivy.Occur.Must, owner)]
        if tag_ids:
            terms_ = [tantivy.Query.term_query(schema, "tag_ids", tag_id) for tag_id in tag_ids]
            if tags_op == "all":
                clauses += [(tantivy.Occur.Must, term) for term in terms_]
            else:
                clauses.append((tantivy.Occur.Must, tantivy.Query.boolean_query(
                    [(tantivy.Occur.Should, term) for term in terms_])))
        # A prefix expands to the words most frequent in the caller's own documents; counting
        # only those costs more, so it is done only when the index holds other users' too.
        return clauses, (None if alone else owner)

    def word(self, word: str, expansions: int, fields: tuple[tuple[str, float, int], ...],
             only_theirs, broad: bool = False):
        """One query word: the term itself in each of `fields` (name, boost, shortest prefix),
        and from that prefix length on the `expansions` most frequent terms beginning with it;
        `broad`: also the most frequent inner parts beginning with it (dms.search.terms)."""
        import tantivy

        alternatives = []
        for field, boost, shortest in fields:
            candidates = [word]
            if len(word) >= shortest:
                candidates += [t for t, _ in self.searcher.terms_with_prefix(
                    field, word, filter_query=only_theirs, limit=expansions)]
            for term in dict.fromkeys(candidates):
                query = tantivy.Query.term_query(self.schema, field, term, index_option="freq")
                if boost != 1.0:
                    query = tantivy.Query.boost_query(query, boost)
                alternatives.append((tantivy.Occur.Should, query))
        if broad and looks_inside(word):
            alternatives += [(tantivy.Occur.Should, tantivy.Query.term_query(
                self.schema, INNER_FIELD, term, index_option="basic"))
                for term, _ in self.searcher.terms_with_prefix(
                    INNER_FIELD, word, filter_query=only_theirs, limit=expansions)]
        return tantivy.Query.boolean_query(alternatives)

    def best(self, clauses: list, limit: int) -> list[tuple[str, float]]:
        """The best `limit` nodes matching all `clauses`, as (node id, score)."""
        import tantivy

        # One clause alone is run as it is: a single word's union of terms then lets tantivy
        # skip the blocks of postings that cannot reach the top `limit` (block-max WAND), which
        # it cannot do inside an intersection. Same matches, same order.
        query = clauses[0][1] if len(clauses) == 1 else tantivy.Query.boolean_query(clauses)
        result = self.searcher.search(query, limit, count=False)
        return list(zip(self.ids_of([address for _, address in result.hits]),
                        [score for score, _ in result.hits], strict=True))

    def ids_of(self, addresses: list) -> list[str]:
        """The node ids of hits, from the fast fields (dms.search.index.id_halves): 100 ids in
        0.3 ms at a million documents, where reading the stored documents took 0.8 (p95 2 ms)."""
        high = self.searcher.fast_field_values("id_hi", addresses)
        low = self.searcher.fast_field_values("id_lo", addresses)
        return [uuid_text(hi, lo) if hi or lo else self.searcher.doc(address)["id"][0]
                for address, hi, lo in zip(addresses, high, low, strict=True)]

    def counted(self, clauses: list, excluding: frozenset[str] = frozenset()) -> int:
        """How many nodes match all `clauses` (tantivy's Count collector: no node is read)."""
        import tantivy

        if excluding:
            clauses = [*clauses, (tantivy.Occur.MustNot, tantivy.Query.term_set_query(
                self.schema, "id", sorted(excluding)))]
        query = clauses[0][1] if len(clauses) == 1 else tantivy.Query.boolean_query(clauses)
        return self.searcher.search(query, 1, count=True).count


def uuid_text(high: int, low: int) -> str:
    """The text of the UUID whose halves these are, as str(uuid.UUID(...)) writes it, in a
    quarter of its time (a hundred ids a search)."""
    digits = f"{high:016x}{low:016x}"
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"
