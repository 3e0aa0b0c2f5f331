"""Finding documents by what they are about (api.md §16) through the API: the filters of folder
listings, `GET /documents/` and search, the sorts, and search over correspondent and type names,
custom field texts and notes. The custom field query's every op per type is
tests/domain/test_field_query.py's; here one query per route, the route's refusals, and that a
filter changes nothing."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

from tests.harness.client import assert_error
from tests.harness.documents import make_folder, new_document
from tests.harness.waiting import wait_indexed


def body(kind, **attributes):
    return {"data": {"type": kind, "attributes": attributes}}


def created(client, kind, **attributes):
    response = client.post(f"/api/{kind}/", body(kind, **attributes))
    assert response.status_code == 201, response.text
    return response.json()["data"]["id"]


def patched(client, document_id, **attributes):
    response = client.patch(f"/api/documents/{document_id}/", body("documents", **attributes))
    assert response.status_code == 200, response.text


def titles(response):
    assert response.status_code == 200, response.text
    return [item["attributes"]["title"] for item in response.json()["data"]]


@pytest.fixture
def corpus(alice):
    """Five invoices and letters in one folder, with a folder beside them."""
    folder = make_folder(alice, "Post", alice.home_id)
    make_folder(alice, "Archiv", folder)
    ids = {
        "power": created(alice, "correspondents", name="Stadtwerke"),
        "tax": created(alice, "correspondents", name="Finanzamt"),
        "invoice": created(alice, "document-types", name="Rechnung"),
        "amount": created(alice, "custom-fields", name="Betrag", data_type="monetary"),
        "paid": created(alice, "custom-fields", name="Bezahlt", data_type="boolean"),
        "contract": created(alice, "custom-fields", name="Vertrag", data_type="string"),
    }
    documents = {}
    for title, correspondent, kind, date, asn, amount, paid in (
            ("Strom Januar", "power", "invoice", "2024-01-15", 3, "EUR80.00", True),
            ("Strom Februar", "power", "invoice", "2024-02-15", 1, "EUR95.50", False),
            ("Steuer 2023", "tax", None, "2024-06-30", None, None, None),
            ("Strom Dezember", "power", "invoice", "2023-12-15", 2, "EUR70.00", False),
            ("Werbung", None, None, "2024-03-01", None, None, None)):
        document = new_document(alice, title, folder)
        values = [] if amount is None else [{"field": ids["amount"], "value": amount},
                                            {"field": ids["paid"], "value": paid}]
        patched(alice, document, correspondent=ids.get(correspondent),
                document_type=ids.get(kind), document_date=date, archive_serial_number=asn,
                custom_fields=values)
        documents[title] = document
    return folder, ids, documents


def test_a_folder_is_filtered_by_correspondent_type_number_and_dates(alice, corpus):
    folder, ids, _ = corpus
    url = f"/api/nodes/{folder}/"
    assert titles(alice.get(f"{url}?correspondent={ids['power']}")) == [
        "Strom Dezember", "Strom Februar", "Strom Januar"]
    assert titles(alice.get(f"{url}?correspondent=none")) == ["Werbung"]  # folders left out
    assert titles(alice.get(f"{url}?document_type=none")) == ["Steuer 2023", "Werbung"]
    assert titles(alice.get(f"{url}?asn=2")) == ["Strom Dezember"]
    assert titles(alice.get(f"{url}?document_date_after=2024-01-15"
                            "&document_date_before=2024-03-01")) == [
        "Strom Februar", "Strom Januar", "Werbung"]
    assert titles(alice.get(f"/api/documents/?document_type={ids['invoice']}"
                            "&document_date_after=2024-01-01")) == [
        "Strom Februar", "Strom Januar"]


def test_every_unpaid_invoice_of_2024_by_a_custom_field_query(alice, corpus):
    folder, ids, _ = corpus
    query = json.dumps(["AND", [["Bezahlt", "exact", False], ["Betrag", "gt", 50]]])
    url = f"?custom_field_query={quote(query)}&document_date_after=2024-01-01" \
          "&document_date_before=2024-12-31"
    assert titles(alice.get(f"/api/nodes/{folder}/{url}")) == ["Strom Februar"]
    assert titles(alice.get(f"/api/documents/{url}")) == ["Strom Februar"]


def test_listings_sort_by_date_number_correspondent_and_a_field(alice, corpus):
    folder, ids, _ = corpus
    url = f"/api/nodes/{folder}/?document_type={ids['invoice']}&sort="
    assert titles(alice.get(url + "document_date")) == [
        "Strom Dezember", "Strom Januar", "Strom Februar"]
    assert titles(alice.get(url + "-document_date")) == [
        "Strom Februar", "Strom Januar", "Strom Dezember"]
    assert titles(alice.get(url + "asn")) == ["Strom Februar", "Strom Dezember", "Strom Januar"]
    assert titles(alice.get(url + f"-cf_{ids['amount']}")) == [
        "Strom Februar", "Strom Januar", "Strom Dezember"]
    everything = f"/api/nodes/{folder}/?sort="
    # Empty values last, on both engines; then by title.
    assert titles(alice.get(everything + "correspondent"))[-2:] in (
        ["Archiv", "Werbung"], ["Werbung", "Archiv"])
    assert titles(alice.get(everything + "correspondent"))[:1] == ["Steuer 2023"]
    assert titles(alice.get(everything + "asn"))[:3] == [
        "Strom Februar", "Strom Dezember", "Strom Januar"]
    # Reversed, the values run the other way and the documents without one still come last.
    assert titles(alice.get(everything + "-asn"))[:3] == [
        "Strom Januar", "Strom Dezember", "Strom Februar"]
    assert titles(alice.get(everything + f"-cf_{ids['amount']}"))[:3] == [
        "Strom Februar", "Strom Januar", "Strom Dezember"]


def test_refused_filters_name_the_parameter(alice, bob, corpus):
    folder, ids, _ = corpus
    url = f"/api/nodes/{folder}/"
    bobs = created(bob, "correspondents", name="Stadtwerke")
    assert_error(alice.get(f"{url}?correspondent={bobs}"), 400, "invalid",
                 "correspondent is the id of one of your correspondents, or none; you have no "
                 f"correspondent with the id {bobs!r}.", "/correspondent")
    for asn in ("-1", "³", "١٢"):  # digits of other scripts are not a number here (a fuzz find)
        assert_error(alice.get(f"{url}?asn={asn}"), 400, "invalid",
                     "asn is a whole number from 0 to 4,294,967,295.", "/asn")
    assert_error(alice.get(f"{url}?document_date_after=2024-13-01"), 400, "invalid",
                 "document_date_after must be a real date written YYYY-MM-DD; '2024-13-01' is "
                 "not.", "/document_date_after")
    deep = ["Betrag", "exact", 1]
    for _ in range(11):
        deep = ["NOT", deep]
    response = alice.get(f"{url}?custom_field_query={quote(json.dumps(deep))}")
    assert response.status_code == 400
    assert response.json()["errors"][0]["source"] == {"pointer": "/custom_field_query"}
    assert_error(alice.get(f"{url}?sort=cf_{bobs}"), 400, "invalid",
                 f"Cannot sort by 'cf_{bobs}': cf_ is followed by the id of one of your custom "
                 "fields (not a documentlink field).", "/sort")


def test_search_finds_metadata_words_and_takes_the_filters(alice, corpus, config):
    folder, ids, documents = corpus
    patched(alice, documents["Werbung"], custom_fields=[
        {"field": ids["contract"], "value": "Glasfaser Tarif"}])
    note = alice.post(f"/api/documents/{documents['Steuer 2023']}/notes/",
                      {"data": {"attributes": {"note": "Einspruch eingelegt"}}})
    assert note.status_code == 201

    def found(query):
        # These documents have no file: search waits only for documents whose reading ended.
        wait_indexed(config)
        response = alice.get(f"/api/search/?{query}")
        assert response.status_code == 200, response.text
        return sorted(hit["title"] for hit in response.json())

    assert found("q=stadtwerke") == ["Strom Dezember", "Strom Februar", "Strom Januar"]
    assert found("q=rechnung") == ["Strom Dezember", "Strom Februar", "Strom Januar"]
    assert found("q=glasfaser") == ["Werbung"]
    assert found("q=einspruch") == ["Steuer 2023"]
    assert found("q=strom&asn=3") == ["Strom Januar"]
    assert found(f"correspondent={ids['tax']}") == ["Steuer 2023"]  # without q: recent ones
    # A renamed correspondent is found by its new name.
    assert alice.patch(f"/api/correspondents/{ids['power']}/",
                       body("correspondents", name="Energieversorger")).status_code == 200
    assert found("q=energieversorger") == ["Strom Dezember", "Strom Februar", "Strom Januar"]
    assert found("q=stadtwerke") == []
