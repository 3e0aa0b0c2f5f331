"""The query language's grammar (api.md, "The query language"), without a database: a table of
queries and the exact tree each must read as (words, phrases, each field, each date form,
comparisons, ranges, NOT/-, AND/OR precedence, parentheses), the day "today" fixed; plain words
still read as words ANDed (as every query did before the language); and a table of malformed
queries with the position and the sentence each must give."""

from __future__ import annotations

import datetime as dt

import pytest

from dms.domain.searchquery import (
    MAX_LEAVES,
    All,
    Any,
    Custom,
    Named,
    Not,
    Number,
    QueryError,
    Span,
    Words,
    is_plain,
    parse,
)

TODAY = dt.date(2026, 11, 25)  # a Wednesday
D = dt.date
TERM = "a word, a phrase in quotes, a field such as tag:paid, or “(”"


def w(text: str, at: int, field: str | None = None, phrase: bool = False) -> Words:
    return Words(text, field, phrase, at)


READS = [
    ("invoice", w("invoice", 1)),
    ("invoice unpaid", All((w("invoice", 1), w("unpaid", 9)))),
    ("Käse  straße", All((w("Käse", 1), w("straße", 7)))),
    ('"unpaid invoice"', w("unpaid invoice", 1, phrase=True)),
    ("a AND b", All((w("a", 1), w("b", 7)))),
    ("a OR b", Any((w("a", 1), w("b", 6)))),
    ("a b OR c", Any((All((w("a", 1), w("b", 3))), w("c", 8)))),
    ("a OR b c", Any((w("a", 1), All((w("b", 6), w("c", 8)))))),
    ("a (b OR c)", All((w("a", 1), Any((w("b", 4), w("c", 9)))))),
    ("NOT a", Not(w("a", 5))),
    ("-a b", All((Not(w("a", 2)), w("b", 4)))),
    ("-(a OR b)", Not(Any((w("a", 3), w("b", 8))))),
    ('-"a b"', Not(w("a b", 2, phrase=True))),
    ("a and b or c", All((w("a", 1), w("and", 3), w("b", 7), w("or", 9), w("c", 12)))),
    ("title:invoice", w("invoice", 1, "title")),
    ('TITLE:"unpaid invoice"', w("unpaid invoice", 1, "title", phrase=True)),
    ("text:heating", w("heating", 1, "text")),
    ("notes:paid", w("paid", 1, "notes")),
    ("tag:paid", Named("tag", "paid", 1)),
    ('tag:"to do"', Named("tag", "to do", 1)),
    ("correspondent:ACME", Named("correspondent", "ACME", 1)),
    ("type:Invoice", Named("type", "Invoice", 1)),
    ('folder:"Taxes/2024"', Named("folder", "Taxes/2024", 1)),
    ("mime:pdf", Named("mime", "pdf", 1)),
    ("asn:42", Number("asn", "=", 42, 1)),
    ("asn:>=42", Number("asn", ">=", 42, 1)),
    ("asn:[10 to 20]", All((Number("asn", ">=", 10, 1), Number("asn", "<=", 20, 1)))),
    ("created:2024", Span("created", D(2024, 1, 1), D(2024, 12, 31), 1)),
    ("created:2024-02", Span("created", D(2024, 2, 1), D(2024, 2, 29), 1)),
    ("created:2024-03-15", Span("created", D(2024, 3, 15), D(2024, 3, 15), 1)),
    ("created:[2024-01-01 to 2024-06-30]", Span("created", D(2024, 1, 1), D(2024, 6, 30), 1)),
    ("created:[2024 TO 2025-02]", Span("created", D(2024, 1, 1), D(2025, 2, 28), 1)),
    ("created:>2024-03", Span("created", D(2024, 4, 1), None, 1)),
    ("created:>=2024-03", Span("created", D(2024, 3, 1), None, 1)),
    ("created:<2024-03", Span("created", None, D(2024, 2, 29), 1)),
    ("created:<=2024-03", Span("created", None, D(2024, 3, 31), 1)),
    ("added:today", Span("added", D(2026, 11, 25), D(2026, 11, 25), 1)),
    ("added:yesterday", Span("added", D(2026, 11, 24), D(2026, 11, 24), 1)),
    ('added:"this week"', Span("added", D(2026, 11, 23), D(2026, 11, 29), 1)),
    ('added:"previous week"', Span("added", D(2026, 11, 16), D(2026, 11, 22), 1)),
    ('created:"this month"', Span("created", D(2026, 11, 1), D(2026, 11, 30), 1)),
    ('created:"previous month"', Span("created", D(2026, 10, 1), D(2026, 10, 31), 1)),
    ('created:"previous quarter"', Span("created", D(2026, 7, 1), D(2026, 9, 30), 1)),
    ('created:"this year"', Span("created", D(2026, 1, 1), D(2026, 12, 31), 1)),
    ('created:"previous year"', Span("created", D(2025, 1, 1), D(2025, 12, 31), 1)),
    ("cf.Amount:>100", Custom("Amount", ">", "100", 1)),
    ('cf."Total due":<=12.50', Custom("Total due", "<=", "12.50", 1)),
    ("cf.Paid:true", Custom("Paid", "=", "true", 1)),
    ("cf.Due:[2024-01 to 2024-03]", Custom("Due", "=", "2024-01", 1, "2024-03")),
    ("invoice tag:paid -correspondent:ACME created:2024",
     All((w("invoice", 1), Named("tag", "paid", 9), Not(Named("correspondent", "ACME", 19)),
          Span("created", D(2024, 1, 1), D(2024, 12, 31), 38)))),
    # Colons that are no field: as words, as before the language.
    ("Re: invoice", All((w("Re:", 1), w("invoice", 5)))),
    ("10:30", w("10:30", 1)),
    ('"http://example.org"', w("http://example.org", 1, phrase=True)),
    ("see https://example.org/a", All((w("see", 1), w("https://example.org/a", 5)))),
]


@pytest.mark.parametrize(("text", "tree"), READS, ids=[text for text, _ in READS])
def test_each_query_reads_as_its_tree(text, tree):
    assert parse(text, TODAY) == tree


def test_blank_is_no_query_and_plain_words_stay_plain():
    assert parse("", TODAY) is None and parse("   ", TODAY) is None
    for text in ("invoice", "invoice unpaid 2024", "a and b or c", "Re: invoice", "e-mail"):
        assert is_plain(parse(text, TODAY)), text
    for text in ('"a b"', "a OR b", "-a", "NOT a", "tag:x", "title:x", "created:2024"):
        assert not is_plain(parse(text, TODAY)), text


MALFORMED = [
    ("(invoice", 9, "“)” to close the “(” at position 1"),
    ("invoice)", 8, "“)” closes no “(”"),
    ("(a OR b", 8, "“)” to close the “(” at position 1"),
    ("()", 2, f"{TERM} between “(” and “)”"),
    ('"unpaid', 8, "a closing quote for the one at position 1"),
    ('title:"unpaid', 14, "a closing quote for the one at position 7"),
    ("AND invoice", 1, f"{TERM} before the AND"),
    ("a (OR b)", 4, f"{TERM} before the OR"),
    ("invoice OR", 11, f"{TERM} after the OR at position 9"),
    ("a AND OR b", 7, f"{TERM} after the AND at position 3"),
    ("NOT", 4, f"{TERM} after the NOT at position 1"),
    ("tilte:invoice", 1, "a field name, not “tilte”: fields are title, text, notes, tag, "
                         "correspondent, type, folder, mime, created, added, asn and "
                         "cf.<custom field>; put words with a colon in quotes"),
    ("title:", 7, "a value after title:"),
    ("tag: paid", 5, "a value after tag:"),
    ("title:>5", 6, "“:” after title: only dates, serial numbers and custom fields take >, >=, "
                    "< and <="),
    ("tag:[a to b]", 5, "a name after tag:, not a range"),
    ("asn:abc", 5, "a whole number after asn:"),
    ("asn:[1 to x]", 11, "a whole number after asn:"),
    ("created:[2024-01 to 2024-99]", 21, "a date such as 2024, 2024-03 or 2024-03-15, or today, "
                                         "yesterday, this week, this month, this year, previous "
                                         "week, previous month, previous quarter or previous "
                                         "year"),
    ("asn:>[1 to 2]", 1, "either a comparison or a range after asn"),
    ("created:2024-13", 9, "a date such as 2024, 2024-03 or 2024-03-15, or today, yesterday, "
                           "this week, this month, this year, previous week, previous month, "
                           "previous quarter or previous year"),
    ("created:lastweek", 9, "a date such as 2024, 2024-03 or 2024-03-15, or today, yesterday, "
                            "this week, this month, this year, previous week, previous month, "
                            "previous quarter or previous year"),
    ("created:[2024-01-01 2024-06-30]", 10, "a range such as [2024-01-01 to 2024-06-30]"),
    ("created:[2024-01-01 to 2024-06-30", 34, "“]” to close the range at position 9"),
    ("created:[2024-06 to 2024-01]", 21, "a range whose end is not before its start"),
    ("cf.:x", 4, "a custom field’s name after “cf.”"),
    ("cf.Amount:>[1 to 2]", 1, "either a comparison or a range after cf.Amount"),
    ("((((((((((a))))))))))", 9, "no more than 8 levels of parentheses and negations"),
]


@pytest.mark.parametrize(("text", "at", "expected"), MALFORMED, ids=[t for t, _, _ in MALFORMED])
def test_a_malformed_query_names_its_position(text, at, expected):
    with pytest.raises(QueryError) as refused:
        parse(text, TODAY, field="query")
    assert refused.value.message == f"The query cannot be read at position {at}: {expected}."
    assert (refused.value.at, refused.value.field, refused.value.code) == (at, "query", "invalid")


def test_the_terms_of_a_query_are_bounded():
    assert parse(" ".join(["w"] * MAX_LEAVES), TODAY) is not None
    with pytest.raises(QueryError) as refused:
        parse(" ".join(["w"] * (MAX_LEAVES + 1)), TODAY)
    assert refused.value.message == (f"The query cannot be read at position {2 * MAX_LEAVES + 1}"
                                     f": no more than {MAX_LEAVES} words and fields in one query.")
