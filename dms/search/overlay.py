"""A search of a user whose latest changes the index has not taken yet: the index's last commit
with those few nodes laid over it, from a small index in memory of their state now, so that the
search answers at once instead of waiting for the index to commit them ("done" means findable,
dms.search.freshness). A commit of the index syncs several files; on a disk busy with another
user's writes that took 70 ms at the median, and every search of a user who had just uploaded
waited for one.

- **Which nodes.** The outbox rows of the caller's nodes after what the index holds of theirs
  (dms.search.outbox.pending_of): at most OVERLAY_ROWS rows of at most OVERLAY_NODES nodes with
  at most OVERLAY_TEXT_CHARS characters of text, all found in one look through the outbox. More
  (a bulk import of theirs, another user's backlog longer than a look) and the search waits for
  the index as before (dms.search.indexer.Indexer.view).
- **Their state** is read from the database now, as the indexer would write it
  (dms.search.outbox.entries); a node gone or in the trash is in neither index.
- **Ranking.** The caller's own latest changes first, in the order of their scores among
  themselves (scores of two indexes of different sizes do not compare), then the index's other
  matches in its order. A node laid over is never taken from the index's commit, which holds an
  older state of it or none.
- **Cost.** The index in memory is built once for each set of rows and kept per owner (at most
  KEPT_OWNERS) while the index lacks their changes: a few milliseconds for a few documents; it
  is let go at the owner's first search after the index took them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from dms.search import outbox
from dms.search.index import Snapshot, in_memory

OVERLAY_ROWS = 200  # an upload writes a handful: the node, its statuses, its text
OVERLAY_NODES = 32
OVERLAY_TEXT_CHARS = 4 * 1024 * 1024
KEPT_OWNERS = 16


@dataclass(frozen=True)
class Overlaid:
    """The index's last commit (`base`) with `fresh`, an index of the `changed` nodes now."""
    base: Snapshot
    fresh: Snapshot
    changed: frozenset[str]

    def search(self, owner_id: str, words: list[str], limit: int,
               tag_ids: tuple[str, ...] = (), tags_op: str = "all") -> list[tuple[str, float]]:
        """As Snapshot.search: the changed nodes' matches first, then the base's others."""
        first = self.fresh.search(owner_id, words, limit, tag_ids, tags_op)
        rest = self.base.search(owner_id, words, limit + len(self.changed), tag_ids, tags_op)
        return (first + [hit for hit in rest if hit[0] not in self.changed])[:limit]


class Overlays:
    """The last index in memory of each owner's pending nodes, by the rows it was made of."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[str, tuple[tuple[int, ...], Snapshot, frozenset[str]]] = {}

    def laid(self, owner_id: str, after: int,
             up_to: int) -> tuple[Snapshot, frozenset[str]] | None:
        """An index now of the owner's nodes changed from `after` (the seq up to which the index
        holds theirs) to `up_to` at least, and their ids; None if they are too many or cannot be
        seen in one look (the search waits instead)."""
        rows, seen_to = outbox.pending_of(owner_id, after, OVERLAY_ROWS + 1)
        node_ids = list(dict.fromkeys(node_id for _, node_id in rows))
        if len(rows) > OVERLAY_ROWS or len(node_ids) > OVERLAY_NODES or seen_to < up_to:
            return None
        key = tuple(seq for seq, _ in rows)
        with self._lock:
            kept = self._kept.get(owner_id)
        if kept is not None and kept[0] == key:
            return kept[1], kept[2]
        entries, size = [], 0
        for _, entry in outbox.entries(node_ids):
            if entry is not None:
                size += len(entry.body)
                if size > OVERLAY_TEXT_CHARS:
                    return None
                entries.append(entry)
        laid = in_memory(entries), frozenset(node_ids)
        with self._lock:
            if len(self._kept) >= KEPT_OWNERS:
                self._kept.clear()
            self._kept[owner_id] = (key, *laid)
        return laid

    def forget(self, owner_id: str) -> None:
        """The index holds the owner's changes: their index in memory can go."""
        if owner_id in self._kept:
            with self._lock:
                self._kept.pop(owner_id, None)
