"""Saved searches (api.md, "Saved searches"), on both engines: made, listed, read, changed and
deleted with whole resources; names unique per user regardless of case; refusals name the field
and change nothing; another user's are unknown; GET .../documents/ runs one now, in its sort, with
its count."""

from __future__ import annotations

import pytest

from tests.harness.client import NOT_FOUND, assert_error
from tests.harness.documents import new_document, upload_accepted
from tests.harness.waiting import wait_for, wait_indexed

POINTER = "/data/attributes/"


def body(**attributes) -> dict:
    return {"data": {"type": "saved-searches", "attributes": attributes}}


def saved(client, **attributes) -> dict:
    response = client.post("/api/saved-searches/", body(**attributes))
    assert response.status_code == 201, response.text
    return response.json()["data"]


def test_saved_searches_are_kept_changed_and_deleted(alice, bob):
    made = saved(alice, name="Unpaid invoices", query="invoice unpaid", sort="-created_at")
    assert made["type"] == "saved-searches"
    assert made["attributes"] == {"name": "Unpaid invoices", "query": "invoice unpaid",
                                  "sort": "-created_at", "show_in_sidebar": True,
                                  "created_at": made["attributes"]["created_at"]}
    other = saved(alice, name="all", show_in_sidebar=False)
    assert other["attributes"]["query"] == "" and other["attributes"]["sort"] == ""
    listed = alice.get("/api/saved-searches/").json()
    assert [item["id"] for item in listed["data"]] == [other["id"], made["id"]]  # by name
    assert listed["meta"]["pagination"]["count"] == 2
    assert alice.get(f"/api/saved-searches/{made['id']}/").json()["data"] == made
    changed = alice.patch(f"/api/saved-searches/{made['id']}/", body(name="Open invoices"))
    assert changed.status_code == 200, changed.text
    assert changed.json()["data"]["attributes"] == {**made["attributes"], "name": "Open invoices"}
    # Another user's are unknown to bob, whatever he tries.
    for method in ("GET", "DELETE"):
        assert bob.request(method, f"/api/saved-searches/{made['id']}/").json() == NOT_FOUND
    assert bob.patch(f"/api/saved-searches/{made['id']}/", body(name="x")).json() == NOT_FOUND
    assert bob.get(f"/api/saved-searches/{made['id']}/documents/").json() == NOT_FOUND
    assert bob.get("/api/saved-searches/").json()["data"] == []
    anonymous = alice.as_anonymous()
    for method, path in (("GET", "/api/saved-searches/"), ("POST", "/api/saved-searches/"),
                         ("GET", f"/api/saved-searches/{made['id']}/"),
                         ("PATCH", f"/api/saved-searches/{made['id']}/"),
                         ("DELETE", f"/api/saved-searches/{made['id']}/"),
                         ("GET", f"/api/saved-searches/{made['id']}/documents/")):
        assert_error(anonymous.request(method, path, json_body=body(name="x")
                                       if method in ("POST", "PATCH") else None), 401,
                     "not_authenticated", "Authentication credentials were not provided.")
    assert alice.get(f"/api/saved-searches/{made['id']}/").json()["data"]["attributes"][
        "name"] == "Open invoices"
    assert alice.delete(f"/api/saved-searches/{made['id']}/").status_code == 204
    assert alice.get(f"/api/saved-searches/{made['id']}/").json() == NOT_FOUND
    assert [item["id"] for item in alice.get("/api/saved-searches/").json()["data"]] == \
        [other["id"]]


def test_refusals_name_the_field_and_change_nothing(alice):
    kept = saved(alice, name="Taxes 2024", query="tax")
    checks = [
        (body(query="x"), "required", "A saved search name is required.", "name"),
        (body(name="  "), "blank", "A saved search name may not be blank.", "name"),
        (body(name="TAXES 2024"), "invalid", "A saved search with this name already exists.",
         "name"),
        (body(name="x" * 129), "invalid", "A saved search name has at most 128 characters.",
         "name"),
        (body(name="x", query=5), "invalid",
         "query must be text of at most 1000 characters without control characters.", "query"),
        (body(name="x", sort="colour"), "invalid",
         None, "sort"),
        (body(name="x", show_in_sidebar="yes"), "invalid",
         "show_in_sidebar must be true or false.", "show_in_sidebar"),
        # The query language (api.md §20) reads the query when it is saved.
        (body(name="x", query='invoice "unpaid'), "invalid",
         "The query cannot be read at position 16: a closing quote for the one at position 9.",
         "query"),
        (body(name="x", query="cf.Colour:red"), "invalid",
         "The query cannot be read at position 1: a custom field of yours, not “Colour”.",
         "query"),
    ]
    for request, code, detail, field in checks:
        response = alice.post("/api/saved-searches/", request)
        if detail is None:
            assert response.status_code == 400
            assert response.json()["errors"][0]["detail"].startswith("Cannot sort by 'colour'")
            assert response.json()["errors"][0]["source"] == {"pointer": POINTER + field}
        else:
            assert_error(response, 400, code, detail, POINTER + field)
    assert_error(alice.patch(f"/api/saved-searches/{kept['id']}/", body(name="")), 400,
                 "blank", "A saved search name may not be blank.", POINTER + "name")
    assert alice.get("/api/saved-searches/").json()["data"] == [kept]


@pytest.fixture
def papers(alice) -> dict[str, str]:
    ids = {}
    for title, text in (("Invoice March", b"invoice unpaid electricity"),
                        ("Invoice April", b"invoice paid electricity"),
                        ("Letter", b"a letter about the garden")):
        ids[title] = new_document(alice, title)
        upload_accepted(alice, ids[title], "paper.txt", text)

    def read() -> bool:
        return all(alice.get(f"/api/documents/{document}/").json()["data"]["attributes"][
            "ocr_status"] == "succeeded" for document in ids.values())
    wait_for(read, timeout=60, message="not read in time")
    return ids


def titles(client, path: str) -> tuple[list[str], int]:
    answer = client.get(path).json()
    return ([item["attributes"]["title"] for item in answer["data"]],
            answer["meta"]["pagination"]["count"])


def test_running_a_saved_search(alice, papers, server):
    wait_indexed(server.config)
    invoices = saved(alice, name="Invoices", query="invoice")
    by_title = saved(alice, name="Invoices by title", query="invoice", sort="title")
    everything = saved(alice, name="Everything", sort="title")
    nothing = saved(alice, name="Nothing", query="zebra")
    found, count = titles(alice, f"/api/saved-searches/{invoices['id']}/documents/")
    assert sorted(found) == ["Invoice April", "Invoice March"] and count == 2
    assert titles(alice, f"/api/saved-searches/{by_title['id']}/documents/") == \
        (["Invoice April", "Invoice March"], 2)
    assert titles(alice, f"/api/saved-searches/{everything['id']}/documents/") == \
        (["Invoice April", "Invoice March", "Letter"], 3)
    assert titles(alice, f"/api/saved-searches/{nothing['id']}/documents/") == ([], 0)
    # The query language: a phrase and a NOT; names and dates alone list every such document.
    phrase = saved(alice, name="Unpaid", query='"invoice unpaid" -garden', sort="title")
    assert titles(alice, f"/api/saved-searches/{phrase['id']}/documents/") == \
        (["Invoice March"], 1)
    today = saved(alice, name="Today", query="added:today -title:letter", sort="title")
    assert titles(alice, f"/api/saved-searches/{today['id']}/documents/") == \
        (["Invoice April", "Invoice March"], 2)
    page = alice.get(f"/api/saved-searches/{everything['id']}/documents/"
                     "?page[size]=1&page[number]=2")
    assert [item["attributes"]["title"] for item in page.json()["data"]] == ["Invoice March"]
