"""A search of a user whose latest changes the index has not taken yet: the index's last commit
with those few nodes laid over it, matched in memory from their state now, so that the search
answers at once instead of waiting for the index to commit them ("done" means findable,
dms.search.freshness). A commit of the index syncs several files; on a disk busy with another
user's writes that took 70 ms at the median, and every search of a user who had just uploaded
waited for one.

- **Which nodes.** The outbox rows of the caller's nodes after what the index holds of theirs
  (dms.search.outbox.pending_of): at most OVERLAY_ROWS rows of at most OVERLAY_NODES nodes with
  at most OVERLAY_TEXT_CHARS characters of text, all found in one look through the outbox. More
  (a bulk import of theirs, another user's backlog longer than a look) and the search waits for
  the index as before (dms.search.indexer.Indexer.view).
- **Their state** is read from the database now, as the indexer would write it
  (dms.search.outbox.entries), and cut into terms by the index's own analyzer
  (dms.search.index.terms); a node gone or in the trash is in neither.
- **Matching** is the index's (dms.search.index.Snapshot.search): every word matches a term of
  the title, the tags or the text, itself or, from MIN_TITLE_PREFIX letters on in the title and
  the tags and MIN_TEXT_PREFIX in the text, as the beginning of one (here any term, not only the
  index's most frequent few); with `tag_ids`, all (or any) of them. A small tantivy index in
  memory would match the same but cost a commit with its own threads for every change: 15 to 50
  ms on a busy machine, measured, against microseconds for a sorted list of a few nodes' terms.
- **Ranking.** The caller's own latest changes first, each scored by the fields its words
  matched in (title TITLE_BOOST, tags TAGS_BOOST, text 1), then the index's other matches in its
  order — within each of the index's two tiers (dms.search.snapshot): whole words and
  beginnings, then words found inside others only (a term's inner parts, dms.search.terms). A
  node laid over is never taken from the index's commit, which holds an older state of it or
  none.
- **Cost.** Each node's terms are made once for each of its changes and kept per owner (at most
  KEPT_OWNERS) while the index lacks them; they are let go at the owner's first search after the
  index took them.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from dataclasses import dataclass
from typing import Any

from dms.db import database
from dms.domain.searchquery import All, Meta, Not, Words, leaves
from dms.domain.searchquery import Any as AnyOf
from dms.search import outbox
from dms.search.index import (
    MIN_TEXT_PREFIX,
    MIN_TITLE_PREFIX,
    TAGS_BOOST,
    TITLE_BOOST,
    Entry,
    Snapshot,
    terms,
)
from dms.search.terms import MIN_INNER, inside, looks_inside, positioned
from dms.search.treequery import looks_inside_tree

OVERLAY_ROWS = 200  # an upload writes a handful: the node, its statuses, its text
OVERLAY_NODES = 32
OVERLAY_TEXT_CHARS = 1024 * 1024  # its terms are a list in memory for a moment
KEPT_OWNERS = 16
FIELDS = ((TITLE_BOOST, MIN_TITLE_PREFIX), (TAGS_BOOST, MIN_TITLE_PREFIX), (1.0, MIN_TEXT_PREFIX))
# A words leaf's field (dms.search.treequery.WORD_FIELDS) as positions in Pending.fields, and a
# phrase's (PHRASE_FIELDS) in Pending.texts.
WORDS_IN = {None: (0, 1, 2), "title": (0,), "text": (2,), "notes": (3,)}
PHRASE_IN = {None: (0, 2), "title": (0,), "text": (2,), "notes": (3,)}
BOOSTS = (TITLE_BOOST, TAGS_BOOST, 1.0, 1.0)
SHORTEST = (MIN_TITLE_PREFIX, MIN_TITLE_PREFIX, MIN_TEXT_PREFIX, MIN_TEXT_PREFIX)


@dataclass(frozen=True)
class Pending:
    """One node's state now, as the index would hold it: its terms per field, sorted."""
    node_id: str
    fields: tuple[tuple[str, ...], ...]  # title, tags, text, notes
    tag_ids: frozenset[str]
    chars: int  # of its text: the nodes laid over at once have at most OVERLAY_TEXT_CHARS
    texts: tuple[str, str, str, str] = ("", "", "", "")  # for phrases, cut into terms if asked
    inner: tuple[str, ...] = ()  # its words' inner parts, sorted (dms.search.terms)

    @classmethod
    def of(cls, entry: Entry) -> Pending:
        texts = (entry.title, " ".join(entry.tag_names), entry.body, entry.notes)
        return cls(entry.node_id, tuple(_sorted_terms(text) for text in texts),
                   frozenset(entry.tag_ids), len(entry.body), texts,
                   tuple(sorted(set(entry.inner().split()))))

    def score_tree(self, tree: Any, kept: dict[Any, frozenset[str]],
                   broad: bool = False) -> float | None:
        """How well it matches a resolved tree of the query language, as the index would
        (dms.search.treequery); None: not at all. `kept`: each Meta leaf's nodes among those
        laid over, as the database found them; `broad`: a words leaf without a field also
        inside words."""
        if isinstance(tree, Meta):
            return 0.0 if self.node_id in kept[tree] else None
        if isinstance(tree, Not):
            return 0.0 if self.score_tree(tree.part, kept) is None else None
        if isinstance(tree, (All, AnyOf)):
            scores = [self.score_tree(part, kept, broad) for part in tree.parts]
            found = [score for score in scores if score is not None]
            if (len(found) < len(scores)) if isinstance(tree, All) else not found:
                return None
            return sum(found)
        assert isinstance(tree, Words)
        words = terms(tree.text)
        if tree.phrase:
            return max((BOOSTS[at] for at in PHRASE_IN[tree.field]
                        if _follow(positioned(self.texts[at]), words)), default=None)
        total = 0.0
        for word in words:
            best = max((BOOSTS[at] for at in WORDS_IN[tree.field]
                        if _holds(self.fields[at], word, SHORTEST[at])), default=0.0)
            if not best and broad and tree.field is None:
                best = self.inside(word)
            if not best:
                return None
            total += best
        return total

    def score(self, words: list[str], tag_ids: tuple[str, ...], tags_op: str,
              broad: bool = False) -> float:
        """How well it matches (0: not at all), as Snapshot.search matches; `broad`: also
        inside words."""
        if tag_ids:
            carried = [tag_id in self.tag_ids for tag_id in tag_ids]
            if not (all(carried) if tags_op == "all" else any(carried)):
                return 0.0
        total = 0.0
        for word in words:
            best = max((boost for (boost, shortest), field
                        in zip(FIELDS, self.fields[:3], strict=True)
                        if _holds(field, word, shortest)), default=0.0)
            if not best and broad:
                best = self.inside(word)
            if not best:
                return 0.0
            total += best
        return total

    def inside(self, word: str) -> float:
        """1 if `word` begins one of its inner parts (lies inside one of its words), else 0."""
        return 1.0 if looks_inside(word) and _holds(self.inner, word, MIN_INNER) else 0.0


def _follow(text: list[str | None], words: list[str]) -> bool:
    """`words` appear in `text` next to each other, in this order (None: an empty position)."""
    if not words:
        return True
    size = len(words)
    return any(text[at:at + size] == words for at, term in enumerate(text) if term == words[0])


def _sorted_terms(text: str) -> tuple[str, ...]:
    return tuple(sorted(set(terms(text)))) if text else ()


def _holds(field: tuple[str, ...], word: str, shortest: int) -> bool:
    """`word` is a term of `field`, or (from `shortest` letters on) the beginning of one: the
    first term not below it in sorted order is the word itself or begins with it, if any does."""
    at = bisect_left(field, word)
    return at < len(field) and (field[at] == word or
                                (len(word) >= shortest and field[at].startswith(word)))


@dataclass(frozen=True)
class Overlaid:
    """The index's last commit (`base`) with the `changed` nodes' state now (`pending`)."""
    base: Snapshot
    pending: tuple[Pending, ...]
    changed: frozenset[str]

    def search(self, owner_id: str, words: list[str], limit: int,
               tag_ids: tuple[str, ...] = (), tags_op: str = "all") -> list[tuple[str, float]]:
        """As Snapshot.search: in each tier, the changed nodes' matches first, then the base's
        others."""
        broad = any(looks_inside(word) for word in words)
        scored = []
        for node in self.pending:
            score = node.score(words, tag_ids, tags_op)
            if not score and broad:
                score = node.score(words, tag_ids, tags_op, broad=True)
                score = inside(score) if score else 0.0
            scored.append((score, node.node_id))
        rest = self.base.search(owner_id, words, limit + len(self.changed), tag_ids, tags_op)
        return self.tiers(scored, rest, limit)

    def total(self, owner_id: str, words: list[str], tag_ids: tuple[str, ...] = (),
              tags_op: str = "all") -> int:
        """As Snapshot.total: the changed nodes that match now, and the base's others."""
        broad = any(looks_inside(word) for word in words)
        return (sum(1 for node in self.pending if node.score(words, tag_ids, tags_op, broad))
                + self.base.total(owner_id, words, tag_ids, tags_op, self.changed))

    def find(self, owner_id: str, tree: Any, limit: int, tag_ids: tuple[str, ...] = (),
             tags_op: str = "all") -> list[tuple[str, float]]:
        """As Snapshot.find: in each tier, the changed nodes' matches first, then the base's
        others."""
        kept = _kept(tree, [node.node_id for node in self.pending])
        broad = looks_inside_tree(tree)
        scored = []
        for node in self.pending:
            if not _tagged(node, tag_ids, tags_op):
                continue
            score = node.score_tree(tree, kept)
            if score is None and broad:
                score = node.score_tree(tree, kept, broad=True)
                score = None if score is None else inside(score)
            if score is not None:
                scored.append((score, node.node_id))
        rest = self.base.find(owner_id, tree, limit + len(self.changed), tag_ids, tags_op)
        return self.tiers(scored, rest, limit, found_at_zero=True)

    def total_tree(self, owner_id: str, tree: Any, tag_ids: tuple[str, ...] = (),
                   tags_op: str = "all") -> int:
        """As Snapshot.total_tree: the changed nodes that match now, and the base's others."""
        kept = _kept(tree, [node.node_id for node in self.pending])
        broad = looks_inside_tree(tree)
        return (sum(1 for node in self.pending if node.score_tree(tree, kept, broad) is not None
                    and _tagged(node, tag_ids, tags_op))
                + self.base.total_tree(owner_id, tree, tag_ids, tags_op, self.changed))

    def tiers(self, scored: list[tuple[float, str]], rest: list[tuple[str, float]], limit: int,
              found_at_zero: bool = False) -> list[tuple[str, float]]:
        """The changed nodes' (score, id) and the base's hits (matches inside words scored
        below 0): the changed nodes' first in each tier. A changed node with score 0 matched
        nothing, unless `found_at_zero` (a tree of names only scores 0)."""
        ranked = sorted(((score, node_id) for score, node_id in scored
                         if score or found_at_zero), reverse=True)
        rest = [hit for hit in rest if hit[0] not in self.changed]
        whole = [(node_id, score) for score, node_id in ranked if score >= 0]
        parts = [(node_id, score) for score, node_id in ranked if score < 0]
        return (whole + [hit for hit in rest if hit[1] >= 0]
                + parts + [hit for hit in rest if hit[1] < 0])[:limit]


def _tagged(node: Pending, tag_ids: tuple[str, ...], tags_op: str) -> bool:
    carried = [tag_id in node.tag_ids for tag_id in tag_ids]
    return not tag_ids or (all(carried) if tags_op == "all" else any(carried))


def _kept(tree: Any, node_ids: list[str]) -> dict[Any, frozenset[str]]:
    """{Meta leaf: the nodes among `node_ids` its condition keeps}, one query per leaf."""
    kept: dict[Any, frozenset[str]] = {}
    marks = ",".join("?" * len(node_ids))
    for leaf in leaves(tree):
        if not isinstance(leaf, Meta) or leaf in kept:
            continue
        kept[leaf] = frozenset(node_id for (node_id,) in database.execute_sql(
            f"SELECT id FROM node WHERE id IN ({marks}) AND ({leaf.condition.where})",
            (*node_ids, *leaf.condition.params))) if node_ids else frozenset()
    return kept


class Overlays:
    """Each owner's pending nodes by the newest outbox row each was made from."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[str, dict[str, tuple[int, Pending | None]]] = {}

    def laid(self, owner_id: str, after: int,
             up_to: int) -> tuple[tuple[Pending, ...], frozenset[str]] | None:
        """The owner's nodes changed from `after` (the seq up to which the index holds theirs)
        to `up_to` at least, as they are now, and their ids; None if they are too many or
        cannot be seen in one look (the search waits instead)."""
        rows, seen_to = outbox.pending_of(owner_id, after, OVERLAY_ROWS + 1)
        newest = {node_id: seq for seq, node_id in rows}
        if len(rows) > OVERLAY_ROWS or len(newest) > OVERLAY_NODES or seen_to < up_to:
            return None
        with self._lock:
            kept = self._kept.get(owner_id, {})
        nodes = {node_id: kept[node_id] for node_id, seq in newest.items()
                 if node_id in kept and kept[node_id][0] == seq}
        stale = [node_id for node_id in newest if node_id not in nodes]
        size = sum(node.chars for _, node in nodes.values() if node is not None)
        for node_id, entry in outbox.entries(stale) if stale else ():
            size += len(entry.body) if entry is not None else 0
            if size > OVERLAY_TEXT_CHARS:
                return None
            nodes[node_id] = (newest[node_id], Pending.of(entry) if entry is not None else None)
        with self._lock:
            if owner_id not in self._kept and len(self._kept) >= KEPT_OWNERS:
                self._kept.clear()
            self._kept[owner_id] = nodes
        return (tuple(node for _, node in nodes.values() if node is not None),
                frozenset(newest))

    def forget(self, owner_id: str) -> None:
        """The index holds the owner's changes: what was kept of them can go."""
        if owner_id in self._kept:
            with self._lock:
                self._kept.pop(owner_id, None)
