"""The dialect's work on many documents and its searches (api.md §17) on both engines: bulk_edit's
methods change what they name through dms's domain (and an unknown document or method changes
nothing); selection_data counts; the trash restores and empties; next_asn, a file's metadata,
suggestions from dms's matching, the history; the global search and word completion."""

from __future__ import annotations

import pytest

from tests.harness import samples
from tests.harness.database import snapshot
from tests.harness.paperless import API, dialect, make
from tests.harness.waiting import wait_for, wait_processed
from tests.paperless.test_documents import uploaded

JSON = "application/json"


@pytest.fixture
def two(alice):
    client = dialect(alice, 10)
    numbers = []
    for name, text in (("invoice", "Invoice from ACME for chairs"), ("memo", "Team memo")):
        task = uploaded(client, f"{name}.txt", samples.text(text + "\n"), [("title", name)])
        numbers.append(task["related_document_ids"][0])
    for number in numbers:
        dms_id = client.get(f"{API}/documents/{number}/").json()["dms_id"]
        assert wait_processed(alice, dms_id)[-1] == "succeeded"
    return client, numbers


def edit(client, documents, method, **parameters):
    return client.post(f"{API}/documents/bulk_edit/", {
        "documents": documents, "method": method, "parameters": parameters}, media=JSON)


def field_of(client, number, name):
    return client.get(f"{API}/documents/{number}/").json()[name]


def test_bulk_edit_methods(two, alice, config):
    client, (invoice, memo) = two
    bills, paid = make(client, "tags", name="Bills"), make(client, "tags", name="Paid")
    acme = make(client, "correspondents", name="ACME")
    kind = make(client, "document_types", name="Invoice")
    amount = make(client, "custom_fields", name="Amount", data_type="monetary")
    assert edit(client, [invoice, memo], "add_tag", tag=bills["id"]).json() == {"result": "OK"}
    assert edit(client, [invoice], "modify_tags", add_tags=[paid["id"]],
                remove_tags=[bills["id"]]).status_code == 200
    assert (field_of(client, invoice, "tags"), field_of(client, memo, "tags")) == (
        [paid["id"]], [bills["id"]])
    assert edit(client, [memo], "remove_tag", tag=bills["id"]).status_code == 200
    assert field_of(client, memo, "tags") == []
    edit(client, [invoice, memo], "set_correspondent", correspondent=acme["id"])
    edit(client, [invoice], "set_document_type", document_type=kind["id"])
    edit(client, [memo], "set_correspondent", correspondent=None)
    assert [(field_of(client, n, "correspondent"), field_of(client, n, "document_type"))
            for n in (invoice, memo)] == [(acme["id"], kind["id"]), (None, None)]
    edit(client, [invoice], "modify_custom_fields", add_custom_fields={amount["id"]: "EUR5.00"},
         remove_custom_fields=[])
    assert field_of(client, invoice, "custom_fields") == [
        {"value": "EUR5.00", "field": amount["id"]}]
    edit(client, [invoice], "modify_custom_fields", add_custom_fields=[],
         remove_custom_fields=[amount["id"]])
    assert field_of(client, invoice, "custom_fields") == []
    selection = client.post(f"{API}/documents/selection_data/", {"documents": [invoice, memo]},
                            media=JSON).json()
    assert (selection["selected_tags"], selection["selected_correspondents"]) == (
        [{"id": paid["id"], "document_count": 1}], [{"id": acme["id"], "document_count": 1}])
    # Refused as a whole: nothing changes.
    before = snapshot(config)
    for documents, method, parameters, expected in (
            ([invoice, 99999], "add_tag", {"tag": bills["id"]}, "documents"),
            ([invoice], "nonsense", {}, "method"),
            ([invoice], "add_tag", {"tag": 99999}, "tags"),
            ([invoice], "set_correspondent", {}, "non_field_errors")):
        response = edit(client, documents, method, **parameters)
        assert (response.status_code, list(response.json())) == (400, [expected]), method
    assert snapshot(config) == before
    assert edit(client, [memo], "delete").status_code == 200
    assert client.get(f"{API}/documents/{memo}/").status_code == 404


def test_the_trash(two, alice):
    client, (invoice, memo) = two
    for number in (invoice, memo):
        assert client.delete(f"{API}/documents/{number}/").status_code == 204
    listed = client.get(f"{API}/trash/").json()
    assert (listed["count"], sorted(d["id"] for d in listed["results"]),
            all(d["deleted_at"] for d in listed["results"])) == (2, sorted([invoice, memo]), True)
    assert client.post(f"{API}/trash/", {"action": "restore", "documents": [invoice]},
                       media=JSON).json() == {"result": "OK", "doc_ids": [invoice]}
    assert field_of(client, invoice, "title") == "invoice"
    refused = client.post(f"{API}/trash/", {"action": "restore", "documents": [invoice]},
                          media=JSON)
    assert (refused.status_code, list(refused.json())) == (400, ["documents"])
    assert client.post(f"{API}/trash/", {"action": "empty"}, media=JSON).json() == {
        "result": "OK", "doc_ids": [memo]}
    assert client.get(f"{API}/trash/").json()["count"] == 0
    assert alice.get("/api/trash/").json()["data"] == []


def test_about_one_document(two, alice):
    client, (invoice, memo) = two
    acme = make(client, "correspondents", name="ACME", matching_algorithm=1, match="acme")
    assert client.get(f"{API}/documents/next_asn/").json() == 1
    client.patch(f"{API}/documents/{memo}/", {"archive_serial_number": 41}, media=JSON)
    assert client.get(f"{API}/documents/next_asn/").json() == 42
    metadata = client.get(f"{API}/documents/{invoice}/metadata/").json()
    assert {key: metadata[key] for key in ("original_size", "original_mime_type",
                                           "original_filename", "has_archive_version",
                                           "archive_checksum")} == {
        "original_size": len("Invoice from ACME for chairs\n"), "original_mime_type": "text/plain",
        "original_filename": "invoice.txt", "has_archive_version": False,
        "archive_checksum": None}
    assert client.get(f"{API}/documents/{invoice}/suggestions/").json() == {
        "correspondents": [acme["id"]], "tags": [], "document_types": [], "storage_paths": [],
        "dates": []}
    history = client.get(f"{API}/documents/{memo}/history/").json()
    assert [(entry["action"], entry["changes"]["action"]) for entry in history][-1] == (
        "create", "imported")
    assert history[0]["actor"]["username"] == "alice"


def test_global_search_and_completion(two, alice):
    client, (invoice, _) = two
    make(client, "tags", name="Invoices")

    def found():
        body = client.get(f"{API}/search/?query=invoice").json()
        return body if body["documents"] else None
    body = wait_for(found, timeout=60, interval=0.2)
    assert ([d["id"] for d in body["documents"]], [t["name"] for t in body["tags"]],
            body["total"]) == ([invoice], ["Invoices"], 2)
    assert client.get(f"{API}/search/?query=in").json() == {
        "detail": "Query must be at least 3 characters"}
    assert client.get(f"{API}/search/autocomplete/?term=inv").json() == ["invoice"]
    assert client.get(f"{API}/search/autocomplete/").json() == {"detail": "Term required"}
