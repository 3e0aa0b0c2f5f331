"""The dialect's document list filters, ordering, `fields=`, `truncate_content` and full-text
`query=` (api.md §17) on both engines, over a small library filed through post_document: each
filter keeps exactly the documents Paperless-ngx would, unknown numbers match nothing, bad values
are DRF's 400 naming the parameter, and another user's documents never show."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.harness import samples
from tests.harness.paperless import API, dialect, make
from tests.harness.waiting import wait_for, wait_processed
from tests.paperless.test_documents import uploaded


@pytest.fixture
def library(alice, bob):
    """alice's invoice (ACME, Bills+Paid, 2024-03-15, ASN 7, an Amount), statement (Bank, Bills,
    2024-04-02) and memo (no labels, 2023-11-20); bob's own letter."""
    client = dialect(alice, 10)
    bills, paid = make(client, "tags", name="Bills"), make(client, "tags", name="Paid")
    acme, bank = (make(client, "correspondents", name=name) for name in ("ACME", "Bank"))
    amount = make(client, "custom_fields", name="Amount", data_type="monetary")
    numbers = {}
    for name, text, fields in (
            ("invoice", "Invoice from ACME for chairs", [
                ("title", "ACME invoice"), ("correspondent", str(acme["id"])),
                ("tags", str(bills["id"])), ("tags", str(paid["id"])),
                ("created", "2024-03-15"), ("archive_serial_number", "7"),
                ("custom_fields", f'{{"{amount["id"]}": "EUR505.00"}}')]),
            ("statement", "Bank statement for March", [
                ("title", "Bank statement"), ("correspondent", str(bank["id"])),
                ("tags", str(bills["id"])), ("created", "2024-04-02")]),
            ("memo", "Team memo about planning", [("title", "Team memo"),
                                                  ("created", "2023-11-20")])):
        task = uploaded(client, f"{name}.txt", samples.text(text + "\n"), fields)
        numbers[name] = task["related_document_ids"][0]
    theirs = uploaded(dialect(bob, 10), "letter.txt", samples.text("Invoice to bob\n"))
    for document in client.get(f"{API}/documents/?fields=dms_id").json()["results"]:
        assert wait_processed(alice, document["dms_id"])[-1] == "succeeded"
    return {"client": client, "bills": bills["id"], "paid": paid["id"], "acme": acme["id"],
            "bank": bank["id"], "amount": amount["id"], "bob": theirs, **numbers}


def titles(client, query: str) -> list[str]:
    response = client.get(f"{API}/documents/?fields=title&{query}")
    assert response.status_code == 200, response.text
    return [document["title"] for document in response.json()["results"]]


def test_filters_keep_what_paperless_would(library):
    c, n = library["client"], library
    assert titles(c, "") == ["Bank statement", "ACME invoice", "Team memo"]  # newest paper first
    cases = {
        "title__icontains=MEMO": ["Team memo"],
        "title__istartswith=acme": ["ACME invoice"],
        "title__iendswith=STATEMENT": ["Bank statement"],
        "title__iexact=team%20memo": ["Team memo"],
        f"tags__id__all={n['bills']},{n['paid']}": ["ACME invoice"],
        f"tags__id__in={n['paid']},99999": ["ACME invoice"],
        f"tags__id__all={n['bills']},99999": [],
        f"tags__id__none={n['paid']}": ["Bank statement", "Team memo"],
        f"tags__id={n['bills']}": ["Bank statement", "ACME invoice"],
        "is_tagged=false": ["Team memo"],
        f"correspondent__id={n['acme']}": ["ACME invoice"],
        f"correspondent__id__in={n['acme']},{n['bank']}": ["Bank statement", "ACME invoice"],
        f"correspondent__id__none={n['acme']}": ["Bank statement", "Team memo"],
        "correspondent__isnull=true": ["Team memo"],
        "created__date__gte=2024-01-01&created__date__lte=2024-03-31": ["ACME invoice"],
        "created__gt=2024-03-15": ["Bank statement"],
        "created__year=2023": ["Team memo"],
        "archive_serial_number=7": ["ACME invoice"],
        "mime_type=text/plain": ["Bank statement", "ACME invoice", "Team memo"],
        "original_filename__iexact=MEMO.TXT": ["Team memo"],
        f"custom_fields__id__all={n['amount']}": ["ACME invoice"],
        "has_custom_fields=false": ["Bank statement", "Team memo"],
        f"id__in={n['memo']},{n['invoice']}": ["ACME invoice", "Team memo"],
        "is_in_inbox=true": ["Bank statement", "ACME invoice", "Team memo"],
        f"id__in={n['bob']['related_document_ids'][0]}": [],
        f"more_like_id={n['invoice']}": [],  # dms finds no similar documents: none, not all
        "correspondent__id__none=99999": ["Bank statement", "ACME invoice", "Team memo"],
        "custom_field_query=%5B%22Amount%22%2C%22gt%22%2C%22EUR100%22%5D": ["ACME invoice"],
        f"custom_field_query=%5B{n['amount']}%2C%22exists%22%2Ctrue%5D": ["ACME invoice"],
        "ordering=title": ["ACME invoice", "Bank statement", "Team memo"],
        "ordering=correspondent__name": ["ACME invoice", "Bank statement", "Team memo"],
        "ordering=nonsense": ["Bank statement", "ACME invoice", "Team memo"],
    }
    assert {query: titles(c, query) for query in cases} == cases
    # The one with a serial number first; the two without are alike (in no particular order).
    assert titles(c, "ordering=-archive_serial_number")[0] == "ACME invoice"


def test_bad_filter_values_are_refused_by_name(library):
    c = library["client"]
    for query, expected in (
            ("tags__id__all=a", {"tags__id__all": ["Enter a whole number."]}),
            ("created__date__gt=yesterday", {"created__date__gt": ["Enter a valid date."]}),
            ("is_tagged=maybe", {"is_tagged": ["Must be a valid boolean."]}),
            ("custom_field_query=%5B", {"custom_field_query": ["Value must be valid JSON."]})):
        response = c.get(f"{API}/documents/?{query}")
        assert (response.status_code, response.json()) == (400, expected), query
    response = c.get(f"{API}/documents/?custom_field_query=%5B%22Nope%22%2C%22exact%22%2C1%5D")
    assert (response.status_code, list(response.json())) == (400, ["custom_field_query"])


def test_fields_truncation_and_full_text(library):
    c = library["client"]
    first = c.get(f"{API}/documents/?fields=id,title&page_size=1").json()["results"]
    assert list(first[0]) == ["id", "title"]
    short = c.get(f"{API}/documents/?truncate_content=true&title__iexact=ACME%20invoice").json()
    assert short["results"][0]["content"] == "Invoice from ACME for chairs\n"

    def found():
        body = c.get(f"{API}/documents/?query=invoice").json()
        return body if body["count"] else None
    body = wait_for(found, timeout=60, interval=0.2, message="not indexed in time")
    assert ([d["title"] for d in body["results"]], body["results"][0]["__search_hit__"]["rank"]) \
        == (["ACME invoice"], 0)
    assert titles(c, "query=statement&correspondent__id__none=" + str(library["bank"])) == []
    # query= takes dms's query language (api.md §20), as Paperless-ngx's takes Whoosh's.
    assert titles(c, "query=" + quote('"bank statement" created:2024-04')) == ["Bank statement"]
    assert titles(c, "query=" + quote("for correspondent:acme")) == ["ACME invoice"]
    assert titles(c, "query=" + quote("for -correspondent:acme")) == ["Bank statement"]
    assert sorted(titles(c, "query=" + quote("planning OR chairs asn:7"))) == \
        ["ACME invoice", "Team memo"]  # OR binds loosest
    assert titles(c, "query=" + quote("(planning OR chairs) asn:7")) == ["ACME invoice"]
    response = c.get(f"{API}/documents/?query=" + quote("for created:2024-13"))
    assert (response.status_code, response.json()) == (400, {"query": [
        "The query cannot be read at position 13: a date such as 2024, 2024-03 or 2024-03-15, or "
        "today, yesterday, this week, this month, this year, previous week, previous month, "
        "previous quarter or previous year."]})
    # title_content= stays words: a colon there is no field.
    assert titles(c, "title_content=" + quote("created:2024-13")) == []
