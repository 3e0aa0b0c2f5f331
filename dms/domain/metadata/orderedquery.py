"""A custom field query answered from the values alone, in the listing's order (migration 0022).

Each value row carries its document's listing keys (parent_id, title_sort, trash_id), and the
indexes (field_id, parent_id, trash_id, title_sort, document_id, <value column>) and (field_id,
trash_id, title_sort, document_id, <value column>) hold a field's live values of a folder, or of
all its owner's documents, in title order with the value beside them. So the documents matching
one condition are one index range read in order, the condition checked on each entry; the AND
of several conditions merges such ranges (INTERSECT, ORDER BY the keys: SQLite merges the sorted
inputs). The count touches only the field's values in the scope, and a page skips entries of one
index instead of probing every child of the folder (docs/performance.md).

Only what those indexes answer takes this way: one condition, or the AND of several, each
comparing a boolean, integer, float, date or amount with exact, in, gt, gte, lt, lte or range
(a date's year, month or day too). Text, selects, documentlinks, `exists`, `isnull`, OR and NOT
keep the general condition of dms.domain.metadata.fieldquery, which gives the same documents.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dms.domain.metadata.fieldquery import COLUMNS, Atom, Combined, Expr, value_condition

ORDERED_TYPES = ("boolean", "integer", "float", "date", "monetary")
ORDERED_OPS = ("exact", "in", "gt", "gte", "lt", "lte", "range")
ARM = ("SELECT title_sort, document_id FROM custom_field_value WHERE field_id = ? AND {scope}"
       "trash_id IS NULL AND {column} IS NOT NULL AND {condition}")


@dataclass(frozen=True)
class OrderedMatches:
    """The documents a query keeps, as rows (title_sort, document_id) in that order."""
    arms: tuple[tuple[str, tuple[Any, ...]], ...]  # (ARM with {scope} left, its parameters)

    def sql(self, scope: str, scope_params: tuple[Any, ...]) -> tuple[str, tuple[Any, ...]]:
        """The rows among the values whose document satisfies `scope`, a condition on the
        listing keys (`parent_id = ?`; "" for all the field owner's documents)."""
        parts, params = [], list[Any]()
        for arm, arm_params in self.arms:
            parts.append(arm.replace("{scope}", f"{scope} AND " if scope else ""))
            params += [arm_params[0], *scope_params, *arm_params[1:]]
        return " INTERSECT ".join(parts) + " ORDER BY 1, 2", tuple(params)


def ordered_matches(expr: Expr) -> OrderedMatches | None:
    """The ordered form of a parsed query, or None when it takes the general way."""
    atoms = expr.parts if isinstance(expr, Combined) and expr.op == "AND" else (expr,)
    arms = []
    for atom in atoms:
        if not isinstance(atom, Atom) or atom.field.data_type not in ORDERED_TYPES \
                or atom.op not in ORDERED_OPS:
            return None
        found = value_condition(atom)
        if found is None:  # no document matches: the general condition says so cheaply
            return None
        condition, params, _ = found
        column = COLUMNS[atom.field.data_type]
        arms.append((ARM.format(scope="{scope}", column=column, condition=condition),
                     (atom.field.id, *params)))
    return OrderedMatches(tuple(arms))
