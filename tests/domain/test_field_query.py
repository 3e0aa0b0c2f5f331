"""Custom field queries (dms.domain.metadata.fieldquery): the refusals of malformed queries, each
with its sentence, and every operator of every field type run against a real database (both
engines) over a fixed corpus, with Paperless-ngx's semantics: `exists`, `isnull`, NOT over an atom,
monetary amounts ignoring their currency, documentlink targets in the trash not counting."""

from __future__ import annotations

import json

import pytest

from dms.db import database, owner_scope, write_transaction
from dms.db.models import User
from dms.domain import trash
from dms.domain.metadata.fieldquery import (
    MAX_ATOMS,
    MAX_DEPTH,
    MAX_QUERY_BYTES,
    QueryField,
    compile_field_query,
)
from dms.errors import Invalid
from tests.harness.domaintier import new_document, new_user

COLOURS = (("r1", "Red"), ("g1", "Green"), ("b1", "Blue"))
FIELDS = [
    QueryField("f-note", "Note", "string"),
    QueryField("f-memo", "Memo", "longtext"),
    QueryField("f-site", "Site", "url"),
    QueryField("f-due", "Due", "date"),
    QueryField("f-paid", "Paid", "boolean"),
    QueryField("f-count", "Count", "integer"),
    QueryField("42", "Ratio", "float"),  # a numeric id: Paperless-ngx clients send it as 42
    QueryField("f-amount", "Amount", "monetary"),
    QueryField("f-related", "Related", "documentlink"),
    QueryField("f-colour", "Colour", "select", COLOURS),
]
EVERY = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"]
SHAPES = ('write [field, operator, value], ["AND", [expression, ...]], '
          '["OR", [expression, ...]] or ["NOT", expression].')
OPERATORS = ("exact, in, isnull, exists, icontains, istartswith, iendswith, gt, gte, lt, lte, "
             "range, contains, and year__, month__ or day__ before one of exact, in, gt, gte, "
             "lt, lte, range on a date.")
ATOM = ["Count", "exists", True]


def nested(depth: int) -> list:
    query: list = ATOM
    for _ in range(depth - 1):
        query = ["NOT", query]
    return query


# -- refusals -------------------------------------------------------------------------------------

REFUSED = [
    ("not json", "The custom field query is not valid JSON."),
    ("[1, 2", "The custom field query is not valid JSON."),
    ('"Count"', f"The custom field query is not an expression: {SHAPES}"),
    ('{"Count": 5}', f"The custom field query is not an expression: {SHAPES}"),
    ("[]", f"The custom field query is not an expression: {SHAPES}"),
    ('["Count", "exact", 5, 6]', f"The custom field query is not an expression: {SHAPES}"),
    (["AND", [ATOM, "Count"]],
     f"The part [1][1] of the custom field query is not an expression: {SHAPES}"),
    (["OR", [ATOM, ["NOT", "Count"]]],
     f"The part [1][1][1] of the custom field query is not an expression: {SHAPES}"),
    (["XOR", [ATOM]], 'The custom field query starts with "XOR", not "AND", "OR" or "NOT" '
                      "(a condition is [field, operator, value])."),
    (["Count", "exists"], 'The custom field query starts with "Count", not "AND", "OR" or '
                          '"NOT" (a condition is [field, operator, value]).'),
    (["AND", []], "The part [1] of the custom field query must be a nonempty list of "
                  "expressions."),
    (["OR", ATOM[0]], "The part [1] of the custom field query must be a nonempty list of "
                      "expressions."),
    (["Count", "like", 5], f'"like" is not an operator of custom field queries; they are '
                           f"{OPERATORS}"),
    (["Count", 5, 5], f"5 is not an operator of custom field queries; they are {OPERATORS}"),
    (["Due", "week__exact", 5], f'"week__exact" is not an operator of custom field queries; '
                                f"they are {OPERATORS}"),
    (["Nope", "exists", True], 'There is no custom field "Nope".'),
    ([7, "exists", True], "There is no custom field 7."),
    ([True, "exists", True], "There is no custom field true."),
    ([["Count"], "exists", True], 'There is no custom field ["Count"].'),
    (["Note", "gt", "a"], 'The custom field "Note" (string) does not support "gt".'),
    (["Due", "icontains", "2024"], 'The custom field "Due" (date) does not support "icontains".'),
    (["Count", "contains", [1]], 'The custom field "Count" (integer) does not support '
                                 '"contains".'),
    (["Paid", "range", [0, 1]], 'The custom field "Paid" (boolean) does not support "range".'),
    (["Colour", "icontains", "r"], 'The custom field "Colour" (select) does not support '
                                   '"icontains".'),
    (["Related", "gt", 1], 'The custom field "Related" (documentlink) does not support "gt".'),
    (["Count", "year__exact", 5], 'The custom field "Count" (integer) does not support '
                                  '"year__exact".'),
    (["Due", "year__isnull", True], 'The custom field "Due" (date) does not support '
                                    '"year__isnull".'),
    (["Due", "gt", "2024-02-30"], '"gt" on the date field "Due" needs a date written YYYY-MM-DD, '
                                  'not "2024-02-30".'),
    (["Due", "exact", "2024-02-29T10:00"], '"exact" on the date field "Due" needs a date '
                                           'written YYYY-MM-DD, not "2024-02-29T10:00".'),
    (["Due", "range", ["2024-01-01"]], '"range" on the date field "Due" needs a list of two '
                                       "values, each a date written YYYY-MM-DD."),
    (["Count", "range", "1,5"], '"range" on the integer field "Count" needs a list of two '
                                "values, each a whole number."),
    (["Count", "in", 5], '"in" on the integer field "Count" needs a list of 1 to 100 values, '
                         "each a whole number."),
    (["Count", "in", []], '"in" on the integer field "Count" needs a list of 1 to 100 values, '
                          "each a whole number."),
    (["Count", "in", list(range(101))], '"in" on the integer field "Count" needs a list of 1 '
                                        "to 100 values, each a whole number."),
    (["Count", "in", [1, "two"]], '"in" on the integer field "Count" needs a whole number, '
                                  'not "two".'),
    (["Count", "exact", True], '"exact" on the integer field "Count" needs a whole number, '
                               "not true."),
    (["Count", "gt", 2.5], '"gt" on the integer field "Count" needs a whole number, not 2.5.'),
    (["Count", "lt", 2 ** 63], '"lt" on the integer field "Count" needs a whole number, not '
                               "9223372036854775808."),
    (["Due", "year__gt", "twenty"], '"year__gt" on the date field "Due" needs a whole number, '
                                    'not "twenty".'),
    (["Ratio", "gt", False], '"gt" on the float field "Ratio" needs a number, not false.'),
    (["Ratio", "lt", "Infinity"], '"lt" on the float field "Ratio" needs a number, not '
                                  '"Infinity".'),
    (["Count", "exists", "maybe"], '"exists" on the integer field "Count" needs true or false, '
                                   'not "maybe".'),
    (["Note", "isnull", None], '"isnull" on the string field "Note" needs true or false, not '
                               "null."),
    (["Paid", "exact", "yes"], '"exact" on the boolean field "Paid" needs true or false, not '
                               '"yes".'),
    (["Note", "icontains", ["a"]], '"icontains" on the string field "Note" needs text, not '
                                   '["a"].'),
    (["Colour", "exact", None], '"exact" on the select field "Colour" needs the id or label of '
                                "one of its options, not null."),
    (["Amount", "gt", "EURabc"], '"gt" on the monetary field "Amount" needs an amount, such as '
                                 '12.30 or EUR12.30, not "EURabc".'),
    (["Amount", "exact", "NaN"], '"exact" on the monetary field "Amount" needs an amount, such '
                                 'as 12.30 or EUR12.30, not "NaN".'),
    (["Amount", "lt", True], '"lt" on the monetary field "Amount" needs an amount, such as '
                             "12.30 or EUR12.30, not true."),
    (["Amount", "gte", "1e20"], '"gte" on the monetary field "Amount" needs an amount, such as '
                                '12.30 or EUR12.30, not "1e20".'),
    (["Related", "contains", "abc"], '"contains" on the documentlink field "Related" needs a '
                                     "list of document ids, at most 100."),
    (["Related", "contains", [str(n) for n in range(101)]],
     '"contains" on the documentlink field "Related" needs a list of document ids, at most 100.'),
    (["Related", "contains", [1.5]], '"contains" on the documentlink field "Related" needs a '
                                     "list of document ids, not 1.5."),
    (["Related", "in", [["a"] * 60, ["b"] * 41]], '"in" on the documentlink field "Related" '
                                                  "needs at most 100 document ids in all."),
    (nested(MAX_DEPTH + 1), "The custom field query is nested more than 10 levels deep."),
    ("[" * 3000 + "]" * 3000, "The custom field query is nested more than 10 levels deep."),
    (["AND", [ATOM] * (MAX_ATOMS + 1)], "The custom field query has more than 20 conditions."),
    (["OR", [["AND", [ATOM] * 10], ["AND", [ATOM] * 11]]],
     "The custom field query has more than 20 conditions."),
    (["Note", "exact", "x" * MAX_QUERY_BYTES], "The custom field query is longer than 10,000 "
                                               "bytes."),
    (["Note", "exact", "é" * 6000], "The custom field query is longer than 10,000 bytes."),
]


@pytest.mark.parametrize(("query", "sentence"), REFUSED,
                         ids=[f"refused-{index}" for index in range(len(REFUSED))])
def test_refused(query, sentence):
    raw = query if isinstance(query, str) else json.dumps(query, ensure_ascii=False)
    with pytest.raises(Invalid) as refused:
        compile_field_query(raw, FIELDS)
    assert (refused.value.message, refused.value.field, refused.value.code) == \
        (sentence, "custom_field_query", "invalid")


@pytest.mark.parametrize("query", [
    nested(MAX_DEPTH),
    ["AND", [ATOM] * MAX_ATOMS],
    ["or", [["and", [ATOM]], ["Not", ATOM]]],  # any case, as Paperless-ngx reads them
    ["Note", "exact", "é" * 4000],
    ["Related", "contains", [str(n) for n in range(100)]],
])
def test_accepted(query):
    sql, params = compile_field_query(json.dumps(query, ensure_ascii=False), FIELDS)
    assert sql.count("?") == len(params)


def test_a_field_is_named_by_id_or_by_name_in_any_case():
    by_name = compile_field_query('["count", "exact", 5]', FIELDS)
    assert compile_field_query('["COUNT", "exact", 5]', FIELDS) == by_name
    assert compile_field_query('["f-count", "exact", 5]', FIELDS) == by_name
    ratio = compile_field_query('["Ratio", "exact", 1]', FIELDS)
    assert compile_field_query('[42, "exact", 1]', FIELDS) == ratio
    assert compile_field_query('["42", "exact", 1]', FIELDS) == ratio


# -- against the database -------------------------------------------------------------------------

def text(value: str | None) -> dict:
    return {} if value is None else {"value_text": value, "value_key": value.casefold()}


def money(cents: int | None, currency: str = "", key: str = "") -> dict:
    return {} if cents is None else {"value_cents": cents, "value_currency": currency,
                                     "value_key": key}


# title -> {field id: columns of its custom_field_value row ({}: attached without a value)};
# the documentlink's targets are LINKS. "tango" goes to the trash.
CORPUS: dict[str, dict[str, dict]] = {
    "alpha": {"f-note": text("Invoice 50% off_now"), "f-memo": text("Long\ntext here"),
              "f-site": text("https://example.org/a"), "f-due": {"value_date": "2024-01-15"},
              "f-paid": {"value_bool": True}, "f-count": {"value_int": 5},
              "42": {"value_float": 0.5}, "f-amount": money(1230, "EUR", "eur12.30"),
              "f-related": {}, "f-colour": {"value_text": "r1"}},
    "bravo": {"f-note": text("invoice 50 percent"), "f-site": text("HTTP://Example.ORG/B"),
              "f-due": {"value_date": "2024-02-29"}, "f-paid": {"value_bool": False},
              "f-count": {"value_int": -3}, "42": {"value_float": 2.25},
              "f-amount": money(-550, "", "-5.50"), "f-related": {},
              "f-colour": {"value_text": "g1"}},
    "charlie": {"f-note": {}, "f-due": {}, "f-paid": {}, "f-count": {"value_int": 0}, "42": {},
                "f-amount": money(1230, "USD", "usd12.30"), "f-related": {}, "f-colour": {}},
    "delta": {},
    "echo": {"f-note": text("Über_Straße"), "f-memo": text("100%"),
             "f-due": {"value_date": "2025-12-31"}, "f-count": {"value_int": 100},
             "42": {"value_float": -1.5}, "f-amount": money(99, "EUR", "eur0.99"),
             "f-related": {}},
    "foxtrot": {"f-note": text(""), "f-due": {"value_date": "2023-06-01"},
                "f-count": {"value_int": 2 ** 31 - 1}, "f-amount": {}, "f-related": {}},
    "golf": {"f-paid": {"value_bool": True}, "f-colour": {"value_text": "b1"}},
    "tango": {"f-note": text("Invoice in the trash"), "f-count": {"value_int": 5}},
}
LINKS = {"alpha": ["bravo", "charlie"], "bravo": ["charlie"], "echo": ["tango"],
         "foxtrot": ["bravo", "tango"]}

EXPECTED: dict[str, list[tuple[list, list[str]]]] = {
    "string": [
        (["Note", "exact", "Invoice 50% off_now"], ["alpha"]),
        (["Note", "exact", "invoice 50% off_now"], []),
        (["Note", "exact", ""], ["foxtrot"]),
        (["Note", "in", ["invoice 50 percent", "Über_Straße", "nope"]], ["bravo", "echo"]),
        (["Note", "isnull", True], ["charlie"]),
        (["Note", "isnull", False], ["alpha", "bravo", "echo", "foxtrot"]),
        (["Note", "exists", True], ["alpha", "bravo", "charlie", "echo", "foxtrot"]),
        (["Note", "exists", False], ["delta", "golf"]),
        (["Note", "icontains", "INVOICE"], ["alpha", "bravo"]),
        (["Note", "icontains", "50%"], ["alpha"]),
        (["Note", "icontains", "_"], ["alpha", "echo"]),
        (["Note", "icontains", "\\"], []),
        (["Note", "icontains", "STRASSE"], ["echo"]),
        (["Note", "icontains", "straße"], ["echo"]),
        (["Note", "icontains", ""], ["alpha", "bravo", "echo", "foxtrot"]),
        (["Note", "istartswith", "invoice 5"], ["alpha", "bravo"]),
        (["Note", "istartswith", "%"], []),
        (["Note", "iendswith", "PERCENT"], ["bravo"]),
        (["Note", "iendswith", "_now"], ["alpha"]),
        (["OR", [["Note", "exact", ""], ["Note", "isnull", True]]], ["charlie", "foxtrot"]),
        (["NOT", ["Note", "icontains", "invoice"]],
         ["charlie", "delta", "echo", "foxtrot", "golf"]),
    ],
    "longtext and url": [
        (["Memo", "icontains", "TEXT"], ["alpha"]),
        (["Memo", "iendswith", "%"], ["echo"]),
        (["Memo", "exact", "100%"], ["echo"]),
        (["Memo", "exists", False], ["bravo", "charlie", "delta", "foxtrot", "golf"]),
        (["Site", "istartswith", "https://"], ["alpha"]),
        (["Site", "istartswith", "http"], ["alpha", "bravo"]),
        (["Site", "icontains", "example.org/"], ["alpha", "bravo"]),
        (["Site", "exact", "HTTP://Example.ORG/B"], ["bravo"]),
        (["Site", "exact", "http://example.org/b"], []),
        (["Site", "in", ["https://example.org/a", "HTTP://Example.ORG/B"]], ["alpha", "bravo"]),
        (["Site", "isnull", False], ["alpha", "bravo"]),
    ],
    "date": [
        (["Due", "exact", "2024-02-29"], ["bravo"]),
        (["Due", "in", ["2024-01-15", "2023-06-01"]], ["alpha", "foxtrot"]),
        (["Due", "gt", "2024-01-15"], ["bravo", "echo"]),
        (["Due", "gte", "2024-01-15"], ["alpha", "bravo", "echo"]),
        (["Due", "lt", "2024-01-15"], ["foxtrot"]),
        (["Due", "lte", "2024-02-29"], ["alpha", "bravo", "foxtrot"]),
        (["Due", "range", ["2024-01-01", "2024-12-31"]], ["alpha", "bravo"]),
        (["Due", "isnull", True], ["charlie"]),
        (["Due", "exists", False], ["delta", "golf"]),
        (["Due", "year__exact", 2024], ["alpha", "bravo"]),
        (["Due", "month__lt", 3], ["alpha", "bravo"]),
        (["Due", "day__in", [15, 31]], ["alpha", "echo"]),
        (["Due", "year__range", [2024, 2025]], ["alpha", "bravo", "echo"]),
        (["AND", [["Due", "year__exact", 2024], ["Due", "month__gte", "2"]]], ["bravo"]),
    ],
    "boolean": [
        (["Paid", "exact", True], ["alpha", "golf"]),
        (["Paid", "exact", False], ["bravo"]),
        (["Paid", "exact", "false"], ["bravo"]),
        (["Paid", "in", [True, False]], ["alpha", "bravo", "golf"]),
        (["Paid", "isnull", True], ["charlie"]),
        (["Paid", "isnull", False], ["alpha", "bravo", "golf"]),
        (["Paid", "exists", True], ["alpha", "bravo", "charlie", "golf"]),
        (["NOT", ["Paid", "exact", True]], ["bravo", "charlie", "delta", "echo", "foxtrot"]),
    ],
    "integer": [
        (["Count", "exact", 0], ["charlie"]),
        (["Count", "exact", "5"], ["alpha"]),
        (["Count", "exact", 5.0], ["alpha"]),
        (["Count", "in", [5, 100, 7]], ["alpha", "echo"]),
        (["Count", "gt", 0], ["alpha", "echo", "foxtrot"]),
        (["Count", "gte", 0], ["alpha", "charlie", "echo", "foxtrot"]),
        (["Count", "lt", 0], ["bravo"]),
        (["Count", "lte", 5], ["alpha", "bravo", "charlie"]),
        (["Count", "range", [-3, 5]], ["alpha", "bravo", "charlie"]),
        (["Count", "gt", 2 ** 62], []),
        (["Count", "isnull", True], []),
        (["Count", "isnull", False], ["alpha", "bravo", "charlie", "echo", "foxtrot"]),
        (["Count", "exists", False], ["delta", "golf"]),
    ],
    "float": [
        (["Ratio", "exact", 2.25], ["bravo"]),
        (["Ratio", "in", [0.5, -1.5]], ["alpha", "echo"]),
        (["Ratio", "gt", 0], ["alpha", "bravo"]),
        (["Ratio", "gt", "1"], ["bravo"]),
        (["Ratio", "gte", 0.5], ["alpha", "bravo"]),
        (["Ratio", "lt", 0.5], ["echo"]),
        (["Ratio", "lte", 0.5], ["alpha", "echo"]),
        (["Ratio", "range", [-2, 1]], ["alpha", "echo"]),
        (["Ratio", "isnull", True], ["charlie"]),
        ([42, "exists", False], ["delta", "foxtrot", "golf"]),
    ],
    "monetary": [
        (["Amount", "exact", "12.30"], ["alpha", "charlie"]),
        (["Amount", "exact", "EUR12.3"], ["alpha", "charlie"]),
        (["Amount", "exact", 12.3], ["alpha", "charlie"]),
        (["Amount", "exact", "12.305"], []),
        (["Amount", "in", ["-5.5", "USD0.99", "12.301"]], ["bravo", "echo"]),
        (["Amount", "gt", 12.29], ["alpha", "charlie"]),
        (["Amount", "gt", "12.295"], ["alpha", "charlie"]),
        (["Amount", "gt", "12.3"], []),
        (["Amount", "gte", "USD12.30"], ["alpha", "charlie"]),
        (["Amount", "lt", 0], ["bravo"]),
        (["Amount", "lt", "0.995"], ["bravo", "echo"]),
        (["Amount", "lt", "-5.505"], []),
        (["Amount", "lte", "0.99"], ["bravo", "echo"]),
        (["Amount", "lte", "-5.495"], ["bravo"]),
        (["Amount", "range", ["0", "EUR12.30"]], ["alpha", "charlie", "echo"]),
        (["Amount", "range", [-10, 1]], ["bravo", "echo"]),
        (["Amount", "range", ["0.985", "0.995"]], ["echo"]),
        (["Amount", "isnull", True], ["foxtrot"]),
        (["Amount", "isnull", False], ["alpha", "bravo", "charlie", "echo"]),
        (["Amount", "icontains", "EUR"], ["alpha", "echo"]),
        (["Amount", "icontains", "12.3"], ["alpha", "charlie"]),
        (["Amount", "istartswith", "-"], ["bravo"]),
        (["Amount", "iendswith", ".99"], ["echo"]),
        (["NOT", ["Amount", "gt", 0]], ["bravo", "delta", "foxtrot", "golf"]),
    ],
    "documentlink": [
        (["Related", "contains", ["charlie"]], ["alpha", "bravo"]),
        (["Related", "contains", ["charlie", "bravo"]], ["alpha"]),
        (["Related", "contains", ["bravo"]], ["alpha", "foxtrot"]),
        (["Related", "contains", ["tango"]], []),
        (["Related", "contains", ["bravo", "tango"]], []),
        (["Related", "contains", []], ["alpha", "bravo", "foxtrot"]),
        (["Related", "isnull", True], ["charlie", "echo"]),
        (["Related", "isnull", False], ["alpha", "bravo", "foxtrot"]),
        (["Related", "exists", True], ["alpha", "bravo", "charlie", "echo", "foxtrot"]),
        (["Related", "exists", False], ["delta", "golf"]),
        (["Related", "exact", ["charlie"]], ["bravo"]),
        (["Related", "exact", ["charlie", "bravo"]], ["alpha"]),
        (["Related", "exact", ["bravo"]], ["foxtrot"]),
        (["Related", "exact", []], ["charlie", "echo"]),
        (["Related", "in", [["charlie"], ["bravo"]]], ["bravo", "foxtrot"]),
        (["NOT", ["Related", "contains", ["charlie"]]],
         ["charlie", "delta", "echo", "foxtrot", "golf"]),
    ],
    "select": [
        (["Colour", "exact", "r1"], ["alpha"]),
        (["Colour", "exact", "Green"], ["bravo"]),
        (["Colour", "exact", "red"], []),
        (["Colour", "in", ["Red", "b1"]], ["alpha", "golf"]),
        (["Colour", "isnull", True], ["charlie"]),
        (["Colour", "exists", False], ["delta", "echo", "foxtrot"]),
    ],
    "nesting and names": [
        (["AND", [["Paid", "exact", True], ["Count", "gt", 0]]], ["alpha"]),
        (["OR", [["Due", "lt", "2024-01-01"], ["Colour", "exact", "Blue"]]],
         ["foxtrot", "golf"]),
        (["NOT", ["AND", [["Note", "icontains", "invoice"], ["Amount", "gt", 0]]]],
         ["bravo", "charlie", "delta", "echo", "foxtrot", "golf"]),
        (["AND", [["NOT", ["Count", "exists", True]],
                  ["OR", [["Paid", "exact", True], ["Colour", "exists", True]]]]], ["golf"]),
        (["not", ["Count", "gt", 0]], ["bravo", "charlie", "delta", "golf"]),
        (["Or", [["count", "exact", 5], ["COUNT", "exact", 100]]], ["alpha", "echo"]),
        (["f-count", "exact", 5], ["alpha"]),
        (["NOT", ["NOT", ["Note", "exists", True]]],
         ["alpha", "bravo", "charlie", "echo", "foxtrot"]),
    ],
}


def build_corpus(services, user: User) -> dict[str, str]:
    """FIELDS and CORPUS for `user`, "tango" in the trash, and another user's field "Secret":
    {title: document id}."""
    ids = {title: new_document(services, user, title) for title in CORPUS}
    bob = new_user("bob")
    bobs = new_document(services, bob, "bob's")
    with write_transaction(owner_scope(user.id), owner_scope(bob.id)):
        for field in FIELDS:
            extra = {"select_options": [{"id": option_id, "label": label}
                                        for option_id, label in field.options]}
            add_field(user, field.id, field.name, field.data_type, extra if field.options else {})
        add_field(bob, "f-bob", "Secret", "string", {})
        add_value(bobs, "f-bob", text("mine"))
        for title, values in CORPUS.items():
            for field_id, columns in values.items():
                add_value(ids[title], field_id, columns)
        for title, targets in LINKS.items():
            for position, target in enumerate(targets):
                database.execute_sql(
                    "INSERT INTO custom_field_link (field_id, document_id, target_id, position) "
                    "VALUES (?, ?, ?, ?)", ("f-related", ids[title], ids[target], position))
    trash.delete(services, user, ids["tango"])
    return ids


def add_field(user: User, field_id: str, name: str, data_type: str, extra: dict) -> None:
    database.execute_sql(
        "INSERT INTO custom_field (id, owner_id, name, name_key, data_type, extra_data, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (field_id, user.id, name, name.casefold(), data_type, json.dumps(extra),
         "2026-01-01 00:00:00"))


def add_value(document_id: str, field_id: str, columns: dict) -> None:
    names = ["document_id", "field_id", *columns]
    database.execute_sql(
        f"INSERT INTO custom_field_value ({', '.join(names)}) "
        f"VALUES ({', '.join('?' * len(names))})", (document_id, field_id, *columns.values()))


def fields_of(user: User) -> list[QueryField]:
    """The user's fields as a listing hands them over: its own, read from the database."""
    rows = database.execute_sql("SELECT id, name, data_type, extra_data FROM custom_field "
                                "WHERE owner_id = ?", (user.id,)).fetchall()
    return [QueryField(field_id, name, data_type, tuple(
                (option["id"], option["label"])
                for option in json.loads(extra).get("select_options", [])))
            for field_id, name, data_type, extra in rows]


def with_ids(query: object, ids: dict[str, str]) -> object:
    """The query with each title of CORPUS (a documentlink's target) replaced by its id."""
    if isinstance(query, list):
        return [with_ids(item, ids) for item in query]
    return ids.get(query, query) if isinstance(query, str) else query


def titles(corpus: tuple[User, dict[str, str]], query: list) -> list[str]:
    user, ids = corpus
    condition, params = compile_field_query(json.dumps(with_ids(query, ids)), fields_of(user))
    rows = database.execute_sql(
        "SELECT title FROM node WHERE owner_id = ? AND kind = 'document' AND trash_id IS NULL "
        f"AND {condition} ORDER BY title_sort", (user.id, *params))
    return [row[0] for row in rows]


@pytest.fixture
def corpus(services) -> tuple[User, dict[str, str]]:
    user = new_user("alice")
    return user, build_corpus(services, user)


@pytest.mark.parametrize("section", list(EXPECTED))
def test_operators(corpus, section):
    found = [(query, titles(corpus, query)) for query, _ in EXPECTED[section]]
    assert found == EXPECTED[section]


def test_negations_and_their_positives_split_the_corpus(corpus):
    for section in EXPECTED.values():
        for query, matched in section:
            assert titles(corpus, ["NOT", query]) == [t for t in EVERY if t not in matched]


def test_another_users_field_is_unknown(corpus):
    for name in ("f-bob", "Secret"):
        with pytest.raises(Invalid) as refused:
            titles(corpus, [name, "exists", True])
        assert refused.value.message == f'There is no custom field "{name}".'
