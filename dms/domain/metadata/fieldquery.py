"""Custom field queries (api.md §16): the `custom_field_query=` parameter of document listings,
Paperless-ngx's JSON grammar, parsed into a small tree, checked against the caller's own fields
and compiled into one SQL condition on `node.id` that the listings AND into their WHERE.

The SQL: each atom is `id IN (SELECT document_id FROM custom_field_value WHERE field_id = ? AND
<value condition>)`, which the value indexes of migration 0022 answer without touching node (and
dms.domain.metadata.orderedquery answers the common queries in title order); a negation is
`NOT (...)` over such conditions, never NULL (document_id never is). Text is compared through
`value_key` with casefolded parameters and LIKE ... ESCAPE, and booleans are parameters, so the
same SQL runs on SQLite and PostgreSQL.

Paperless-ngx (src/documents/filters.py, CustomFieldQueryParser), whose semantics these are:
`exists` true/false: the document carries the field, or not. `isnull` true/false: it carries the
field with no value / with a value (a document without the field matches neither); a
documentlink's value is null when none of its targets is alive. `NOT` negates the whole atom, so
["NOT", atom] also matches documents lacking the field. Monetary `exact`, `in` and comparisons
read the amount alone (currency ignored; "EUR12.30", "12.3" and 12.3 all mean 12.30), while
`icontains` and friends read its text ("eur12.30"). A select matches option ids, a label standing
for its option's id. Documentlink `contains`: the document links to all the ids given (its
`exact` compares the set of live targets, where Paperless-ngx compares its stored list). Dates
compare as YYYY-MM-DD, and `year__`, `month__` and `day__` compare their parts as numbers. The
values are read by _queryvalues.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any, NamedTuple, NoReturn

from dms.db import is_postgresql
from dms.domain.metadata import _queryvalues as readers
from dms.domain.tagfilter import name_key
from dms.errors import Invalid

PARAMETER = "custom_field_query"
MAX_QUERY_BYTES = 10_000
MAX_DEPTH = 10
MAX_ATOMS = 20
MAX_LIST = 100  # values of `in`
MAX_LINK_IDS = 100  # document ids of one documentlink atom, all lists together
SHOWN = 60  # characters of a client's value quoted back

BASIC = ("exact", "in", "isnull", "exists")
TEXT_OPS = ("icontains", "istartswith", "iendswith")
ORDER_OPS = ("gt", "gte", "lt", "lte", "range")
OPS = (*BASIC, *TEXT_OPS, *ORDER_OPS, "contains")
TEXT_TYPES = ("string", "longtext", "url")
TYPE_OPS = {
    "string": BASIC + TEXT_OPS, "longtext": BASIC + TEXT_OPS, "url": BASIC + TEXT_OPS,
    "select": BASIC, "boolean": BASIC,
    "date": BASIC + ORDER_OPS, "integer": BASIC + ORDER_OPS, "float": BASIC + ORDER_OPS,
    "monetary": BASIC + TEXT_OPS + ORDER_OPS, "documentlink": (*BASIC, "contains"),
}
COLUMNS = {"string": "value_text", "longtext": "value_text", "url": "value_text",
           "select": "value_text", "boolean": "value_bool", "date": "value_date",
           "integer": "value_int", "float": "value_float", "monetary": "value_cents"}
DATE_PARTS = {"year": (1, 4), "month": (6, 2), "day": (9, 2)}  # substr() of YYYY-MM-DD
PART_OPS = ("exact", "in", *ORDER_OPS)
COMPARE = {"exact": "=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
LIKE = {"icontains": "%{}%", "istartswith": "{}%", "iendswith": "%{}"}
FALSE = "1 = 0"
# `trash_id IS NULL`: a listed node is live, and so are its values (their copy of its keys,
# migration 0022); the value indexes hold only live values on PostgreSQL.
VALUES = ("id {}IN (SELECT document_id FROM custom_field_value WHERE field_id = ? AND "
          "trash_id IS NULL{})")
LINKED = ("id {}IN (SELECT l.document_id FROM custom_field_link AS l JOIN node AS t "
          "ON t.id = l.target_id WHERE l.field_id = ? AND t.trash_id IS NULL{})")
# On SQLite the atoms test the node's id as `+id`: the unary plus keeps the planner from driving
# the listing by the matching ids (a lookup and a sort of every match: 37 ms for a page of a
# filter keeping 18,000 of 100,000 documents) instead of walking the listing's own index in its
# order and stopping at the page's end (3.4 ms). PostgreSQL has no unary plus on text.
SQLITE_NODE_ID = r"+id \1IN (SELECT "
ATOM_START = re.compile(r"(?<![\w.])id (NOT )?IN \(SELECT ")  # our own SQL: VALUES, LINKED
IDS = "a list of document ids"
TOO_DEEP = f"The custom field query is nested more than {MAX_DEPTH} levels deep."
TOO_MANY = f"The custom field query has more than {MAX_ATOMS} conditions."
SHAPES = ('[field, operator, value], ["AND", [expression, ...]], ["OR", [expression, ...]] '
          'or ["NOT", expression]')


class QueryField(NamedTuple):
    """One of the caller's custom fields; `options` a select's (id, label) pairs."""
    id: str
    name: str
    data_type: str
    options: tuple[tuple[str, str], ...] = ()


class Atom(NamedTuple):
    field: QueryField
    op: str  # one of OPS; `part` names a date's part
    value: Any  # checked: a bool, a scalar, a tuple of them, cents as a Decimal, link ids
    part: str | None = None


class Combined(NamedTuple):
    op: str  # "AND" or "OR"
    parts: tuple[Expr, ...]


class Negated(NamedTuple):
    part: Expr


Expr = Atom | Combined | Negated


def compile_field_query(raw: str, fields: Iterable[QueryField]) -> tuple[str, tuple[Any, ...]]:
    """(SQL condition on `id`, parameters); Invalid for a query that is not one, or that names
    a field not among `fields`."""
    return compile_expr(parse_field_query(raw, fields))


def compile_expr(expr: Expr) -> tuple[str, tuple[Any, ...]]:
    """A parsed query's (SQL condition on `id`, parameters)."""
    sql, params = _compile(expr)
    if not is_postgresql():
        sql = ATOM_START.sub(SQLITE_NODE_ID, sql)
    return f"({sql})", tuple(params)


def parse_field_query(raw: str, fields: Iterable[QueryField]) -> Expr:
    """The query's tree, its values checked for their fields and operators."""
    if len(raw) > MAX_QUERY_BYTES or len(raw.encode("utf-8", "surrogatepass")) > MAX_QUERY_BYTES:
        _refuse(f"The custom field query is longer than {MAX_QUERY_BYTES:,} bytes.")
    try:
        tree = json.loads(raw)
    except RecursionError:
        _refuse(TOO_DEEP)
    except ValueError:
        _refuse("The custom field query is not valid JSON.")
    return _Parser(fields).expr(tree, "", 1)


def _refuse(sentence: str) -> NoReturn:
    raise Invalid(sentence, PARAMETER)


def _shown(value: object) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except RecursionError:  # parsed near the recursion limit, written back from deeper
        text = "[[[…"
    return text if len(text) <= SHOWN else text[:SHOWN] + "…"


def _where(path: str) -> str:
    return f"The part {path} of the custom field query" if path else "The custom field query"


class _Parser:
    def __init__(self, fields: Iterable[QueryField]):
        self.by_id: dict[str, QueryField] = {}
        self.by_name: dict[str, QueryField] = {}
        for field in fields:
            self.by_id[field.id] = field
            self.by_name[name_key(field.name)] = field
        self.atoms = 0

    def expr(self, value: object, path: str, depth: int) -> Expr:
        if depth > MAX_DEPTH:
            _refuse(TOO_DEEP)
        if isinstance(value, list) and len(value) == 3:
            return self.atom(*value)
        if not isinstance(value, list) or len(value) != 2:
            _refuse(f"{_where(path)} is not an expression: write {SHAPES}.")
        op, operand = value
        logical = op.upper() if isinstance(op, str) else None
        if logical == "NOT":
            return Negated(self.expr(operand, f"{path}[1]", depth + 1))
        if logical not in ("AND", "OR"):
            _refuse(f'{_where(path)} starts with {_shown(op)}, not "AND", "OR" or "NOT" '
                    "(a condition is [field, operator, value]).")
        if not isinstance(operand, list) or not operand:
            _refuse(f"{_where(f'{path}[1]')} must be a nonempty list of expressions.")
        if len(operand) > MAX_ATOMS:
            _refuse(TOO_MANY)
        return Combined(logical, tuple(self.expr(item, f"{path}[1][{index}]", depth + 1)
                                       for index, item in enumerate(operand)))

    def atom(self, name: object, raw_op: object, value: object) -> Atom:
        self.atoms += 1
        if self.atoms > MAX_ATOMS:
            _refuse(TOO_MANY)
        field = self.field(name)
        full_op = raw_op if isinstance(raw_op, str) else ""
        part, _, op = full_op.rpartition("__")
        if op not in OPS or (part and part not in DATE_PARTS):
            _refuse(f"{_shown(raw_op)} is not an operator of custom field queries; they are "
                    f"{', '.join(OPS)}, and year__, month__ or day__ before one of "
                    f"{', '.join(PART_OPS)} on a date.")
        if op not in TYPE_OPS.get(field.data_type, ()) or (part and (
                field.data_type != "date" or op not in PART_OPS)):
            _refuse(f"The custom field {_shown(field.name)} ({field.data_type}) does not "
                    f"support {_shown(full_op)}.")
        return Atom(field, op, _Value(field, full_op).check(op, part, value), part or None)

    def field(self, name: object) -> QueryField:
        field = None
        if isinstance(name, int) and not isinstance(name, bool):
            field = self.by_id.get(str(name))
        elif isinstance(name, str):
            field = self.by_id.get(name) or self.by_name.get(name_key(name))
        if field is None:
            _refuse(f"There is no custom field {_shown(name)}.")
        return field


class _Value:
    """The value of one atom, checked and converted for its field and operator."""

    def __init__(self, field: QueryField, full_op: str):
        self.field, self.full_op = field, full_op

    def refuse(self, needs: str, value: object = None, shown: bool = False) -> NoReturn:
        _refuse(f"{_shown(self.full_op)} on the {self.field.data_type} field "
                f"{_shown(self.field.name)} needs {needs}"
                + (f", not {_shown(value)}." if shown else "."))

    def check(self, op: str, part: str, value: object) -> Any:
        kind = self.field.data_type
        if op in ("isnull", "exists"):
            return self.scalar(*readers.CONVERTERS["boolean"], value)
        if kind == "documentlink" and op != "in":
            return self.links(value)
        if kind == "documentlink":
            items = self.items(value, IDS)
            if sum(len(item) if isinstance(item, list) else 0 for item in items) > MAX_LINK_IDS:
                self.refuse(f"at most {MAX_LINK_IDS} document ids in all")
            return tuple(self.links(item) for item in items)
        needs, convert = self.converter(op, part)
        if op == "in":
            items = self.items(value, needs)
            return tuple(dict.fromkeys(self.scalar(needs, convert, item) for item in items))
        if op == "range":
            if not isinstance(value, list) or len(value) != 2:
                self.refuse(f"a list of two values, each {needs}")
            return tuple(self.scalar(needs, convert, item) for item in value)
        return self.scalar(needs, convert, value)

    def converter(self, op: str, part: str) -> tuple[str, Callable[[Any], Any]]:
        kind = "integer" if part else "string" if op in TEXT_OPS else self.field.data_type
        if kind == "select":
            labels = {label: option_id for option_id, label in self.field.options}
            return "the id or label of one of its options", \
                lambda value: labels.get(readers.text(value), readers.text(value))
        return readers.CONVERTERS[kind]

    def items(self, value: object, needs: str) -> list[Any]:
        if not isinstance(value, list) or not 1 <= len(value) <= MAX_LIST:
            self.refuse(f"a list of 1 to {MAX_LIST} values, each {needs}")
        return value

    def links(self, value: object) -> tuple[str, ...]:
        if not isinstance(value, list) or len(value) > MAX_LINK_IDS:
            self.refuse(f"{IDS}, at most {MAX_LINK_IDS}")
        return tuple(dict.fromkeys(self.scalar(IDS, readers.document_id, item) for item in value))

    def scalar(self, needs: str, convert: Callable[[Any], Any], value: object) -> Any:
        try:
            return convert(value)
        except (TypeError, ValueError, ArithmeticError):
            self.refuse(needs, value, shown=True)


# -- the compiler -------------------------------------------------------------------------------

Sql = tuple[str, list[Any]]


def _compile(expr: Expr) -> Sql:
    if isinstance(expr, Negated):
        sql, params = _compile(expr.part)
        return f"NOT ({sql})", params
    if isinstance(expr, Combined):
        return _joined(f" {expr.op} ", [_compile(part) for part in expr.parts])
    return _atom(expr)


def _joined(joint: str, parts: list[Sql]) -> Sql:
    return "(" + joint.join(sql for sql, _ in parts) + ")", [p for _, ps in parts for p in ps]


def _values(field: QueryField, condition: str = "", params: Iterable[Any] = (),
            negated: bool = False) -> Sql:
    return (VALUES.format("NOT " if negated else "", f" AND {condition}" if condition else ""),
            [field.id, *params])


def _in(column: str, values: tuple[Any, ...] | list[Any]) -> str:
    return f"{column} = ?" if len(values) == 1 else \
        f"{column} IN ({', '.join('?' * len(values))})"


def _atom(atom: Atom) -> Sql:
    if atom.field.data_type == "documentlink" and atom.op != "exists":
        return _links(atom.field, atom.op, atom.value)
    found = value_condition(atom)
    if found is None:
        return FALSE, []
    condition, params, negated = found
    return _values(atom.field, condition, params, negated)


def value_condition(atom: Atom) -> tuple[str, list[Any], bool] | None:
    """An atom (not a documentlink's, but `exists`) as (condition on one custom_field_value row
    of its field, "" for any; parameters; negated: the document has no such row), or None when
    no document can match."""
    field, op, value = atom.field, atom.op, atom.value
    if op == "exists":
        return "", [], not value
    column = COLUMNS[field.data_type]
    if op == "isnull":
        return f"{column} IS {'' if value else 'NOT '}NULL", [], False
    if op in TEXT_OPS:
        needle = value.casefold().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return "value_key LIKE ? ESCAPE '\\'", [LIKE[op].format(needle)], False
    values = value if op in ("in", "range") else (value,)
    if field.data_type in TEXT_TYPES:  # exact text (value_text), compared casefolded first
        keys = tuple(dict.fromkeys(text.casefold() for text in values))
        return f"{_in('value_key', keys)} AND {_in('value_text', values)}", [*keys, *values], False
    if field.data_type == "monetary":
        return _monetary(op, values)
    if atom.part:
        start, length = DATE_PARTS[atom.part]
        column = f"CAST(substr(value_date, {start}, {length}) AS INTEGER)"
    if op == "range":
        return f"{column} >= ? AND {column} <= ?", list(values), False
    if op == "in":
        return _in(column, values), list(values), False
    return f"{column} {COMPARE[op]} ?", list(values), False


def _monetary(op: str, cents: tuple[Decimal, ...]) -> tuple[str, list[Any], bool] | None:
    """Whole cents against amounts that may hold a fraction of one: 1230.5 matches no `exact`,
    and `gt` 1230.5 is `> 1230`."""
    def floor(amount: Decimal, rounding: str = ROUND_FLOOR) -> int:
        return int(amount.to_integral_value(rounding=rounding))

    if op in ("exact", "in"):
        whole = list(dict.fromkeys(int(c) for c in cents if c == c.to_integral_value()))
        return (_in("value_cents", whole), whole, False) if whole else None
    if op == "range":
        return ("value_cents >= ? AND value_cents <= ?",
                [floor(cents[0], ROUND_CEILING), floor(cents[1])], False)
    bound = floor(cents[0], ROUND_FLOOR if op in ("gt", "lte") else ROUND_CEILING)
    return f"value_cents {COMPARE[op]} ?", [bound], False


def _links(field: QueryField, op: str, value: Any) -> Sql:
    """A documentlink's live targets (a target in the trash does not count)."""
    def linked(target: str | None = None, negated: bool = False, others: tuple[str, ...] = ()
               ) -> Sql:
        condition, params = "", []
        if target is not None:
            condition, params = " AND l.target_id = ?", [target]
        elif others:
            condition, params = f" AND NOT ({_in('l.target_id', others)})", list(others)
        return LINKED.format("NOT " if negated else "", condition), [field.id, *params]

    def exactly(targets: tuple[str, ...]) -> Sql:
        return _joined(" AND ", [_values(field), *(linked(t) for t in targets),
                                 linked(negated=True, others=targets)])

    if op == "isnull":
        return exactly(()) if value else _joined(" AND ", [_values(field), linked()])
    if op == "contains":
        return _joined(" AND ", [linked(t) for t in value]) if value \
            else _joined(" AND ", [_values(field), linked()])
    if op == "in":
        return _joined(" OR ", [exactly(targets) for targets in value])
    return exactly(value)
