"""A custom field query answered from the values alone, in the listing's order (migration 0022).

Each value row carries its document's listing keys (parent_id, title_sort, trash_id), and the
indexes (field_id, parent_id, trash_id, title_sort, document_id, <value column>) and (field_id,
trash_id, title_sort, document_id, <value column>) hold a field's live values of a folder, or of
all its owner's documents, in title order with the value beside them. So the documents matching
one condition are one index range read in order, the condition checked on each entry; the AND
of several conditions merges such ranges (INTERSECT, ORDER BY the keys: SQLite merges the sorted
inputs). The count touches only the field's values in the scope, and a page skips entries of one
index instead of probing every child of the folder (docs/performance.md). PostgreSQL hashes both
sides of an INTERSECT (50 ms of a 54 ms count at 100,000 documents, bench/RESULTS.md); there the
first condition's range is read and each of its documents is looked up in the others' values
(EXISTS on their key, document and field), which the planner may also turn into joins.

Only what those indexes answer takes this way: one condition, or the AND of several, each
comparing a boolean, integer, float, date or amount with exact, in, gt, gte, lt, lte or range
(a date's year, month or day too). Text, selects, documentlinks, `exists`, `isnull`, OR and NOT
keep the general condition of dms.domain.metadata.fieldquery, which gives the same documents.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dms.db import is_postgresql
from dms.domain.metadata.fieldquery import COLUMNS, Atom, Combined, Expr, value_condition

ORDERED_TYPES = ("boolean", "integer", "float", "date", "monetary")
ORDERED_OPS = ("exact", "in", "gt", "gte", "lt", "lte", "range")
ARM = ("SELECT title_sort, document_id FROM custom_field_value WHERE field_id = ? AND "
       "{scope}trash_id IS NULL AND {column} IS NOT NULL AND {condition}")
# PostgreSQL's form of each condition after the first: the document's value of that field.
ALSO = ("EXISTS (SELECT 1 FROM custom_field_value AS w WHERE "
        "w.document_id = custom_field_value.document_id AND w.field_id = ? "
        "AND w.{column} IS NOT NULL AND {condition})")


@dataclass(frozen=True)
class OrderedMatches:
    """The documents a query keeps, as rows (title_sort, document_id) in that order."""
    # Each condition: (its value column, its SQL on that row's columns, (field id, parameters)).
    arms: tuple[tuple[str, str, tuple[Any, ...]], ...]

    def sql(self, scope: str, scope_params: tuple[Any, ...]) -> tuple[str, tuple[Any, ...]]:
        """The rows among the values whose document satisfies `scope`, a condition on the
        listing keys (`parent_id = ?`; "" for all the field owner's documents)."""
        scoped = f"{scope} AND " if scope else ""
        if is_postgresql() and len(self.arms) > 1:
            (column, condition, (field_id, *params)), *others = self.arms
            sql = ARM.format(scope=scoped, column=column, condition=condition)
            for other_column, other_condition, _ in others:
                sql += " AND " + ALSO.format(column=other_column, condition=other_condition)
            return sql + " ORDER BY 1, 2", (field_id, *scope_params, *params, *(
                value for _, _, arm_params in others for value in arm_params))
        parts, all_params = [], list[Any]()
        for column, condition, (field_id, *params) in self.arms:
            parts.append(ARM.format(scope=scoped, column=column, condition=condition))
            all_params += [field_id, *scope_params, *params]
        return " INTERSECT ".join(parts) + " ORDER BY 1, 2", tuple(all_params)


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
        arms.append((COLUMNS[atom.field.data_type], condition, (atom.field.id, *params)))
    return OrderedMatches(tuple(arms))
