"""Nested tags (api.md §8a, §17) in both APIs on both engines: a tag under another (`parent`),
made and moved in dms's API or the dialect and shown in both (`parent`, `children` nested);
putting a tag on brings the tags above it, taking one off takes the tags below it; refused moves
(itself, below itself, too deep, another user's tag, unknown) change nothing; deleting a tag makes
its children top-level tags and the documents keep them."""

from __future__ import annotations

from tests.domain.test_tags import create_tag, set_tags, tag_body
from tests.harness import samples
from tests.harness.database import snapshot
from tests.harness.documents import make_folder, new_document
from tests.harness.paperless import API, JSON, dialect, make
from tests.harness.waiting import wait_processed
from tests.paperless.test_bulk import edit, field_of
from tests.paperless.test_documents import uploaded


def test_nested_tags_in_both_apis(alice, bob, config):
    client = dialect(alice, 10)
    finance = make(client, "tags", name="Finance")
    invoices = make(client, "tags", name="Invoices", parent=finance["id"])
    assert (invoices["parent"], invoices["children"]) == (finance["id"], [])
    shown = client.get(f"{API}/tags/{finance['id']}/").json()
    assert [(child["id"], child["name"], child["parent"], child["children"])
            for child in shown["children"]] == [(invoices["id"], "Invoices", finance["id"], [])]
    listed = client.get(f"{API}/tags/").json()
    assert ([tag["name"] for tag in listed["results"]], listed["display_count"]) == (
        ["Finance", "Invoices"], 2)
    # dms's own API: the same tree, by ids.
    ours = {tag["attributes"]["name"]: tag for tag in alice.get("/api/tags/").json()["data"]}
    assert (ours["Invoices"]["attributes"]["parent"], ours["Finance"]["attributes"]["parent"]) \
        == (ours["Finance"]["id"], None)
    paid = create_tag(alice, "Paid", parent=ours["Invoices"]["id"])
    assert client.get(f"{API}/tags/{invoices['id']}/").json()["children"][0]["name"] == "Paid"

    # Putting a tag on brings the tags above it; taking one off takes the tags below it.
    number = uploaded(client, "bill.txt", samples.text("A bill\n"))["related_document_ids"][0]
    document_id = client.get(f"{API}/documents/{number}/").json()["dms_id"]
    assert set_tags(alice, document_id, ["Paid"], "PATCH").status_code == 200
    assert sorted(t["name"] for t in alice.get(f"/api/documents/{document_id}/").json()[
        "data"]["attributes"]["tags"]) == ["Finance", "Invoices", "Paid"]
    assert edit(client, [number], "remove_tag", tag=invoices["id"]).status_code == 200
    assert field_of(client, number, "tags") == [finance["id"]]
    client.patch(f"{API}/documents/{number}/", {"tags": [invoices["id"]]}, media=JSON)
    assert sorted(field_of(client, number, "tags")) == sorted([finance["id"], invoices["id"]])
    client.patch(f"{API}/documents/{number}/", {"tags": [invoices["id"], finance["id"]]},
                 media=JSON)
    client.patch(f"{API}/documents/{number}/", {"tags": [invoices["id"]]}, media=JSON)
    assert sorted(field_of(client, number, "tags")) == sorted([finance["id"], invoices["id"]])
    folder = make_folder(alice, "Bills", alice.home_id)
    letter = new_document(alice, "letter", folder)
    assert set_tags(alice, letter, ["Paid"]).status_code == 201  # replace: the same rule
    assert len(alice.get(f"/api/documents/{letter}/").json()["data"]["attributes"]["tags"]) == 3

    # Refused moves change nothing (the upload's reading ended first: it changes rows).
    bobs = make(dialect(bob, 10), "tags", name="Bob's")
    wait_processed(alice, document_id)
    before = snapshot(config)
    for tag, parent in ((finance, invoices["id"]), (finance, finance["id"]),
                        (invoices, bobs["id"]), (invoices, 99999), (invoices, "x")):
        refused = client.patch(f"{API}/tags/{tag['id']}/", {"parent": parent}, media=JSON)
        assert (refused.status_code, list(refused.json())) == (400, ["parent"]), parent
    refused = alice.patch(f"/api/tags/{ours['Finance']['id']}/", tag_body(parent=paid["id"]))
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["source"]["pointer"] == "/data/attributes/parent"
    assert snapshot(config) == before
    # Five levels at most: Finance > Invoices > Paid > 4 > 5, and no sixth.
    fourth = make(client, "tags", name="Level 4", parent=number_of_tag(client, "Paid"))
    fifth = make(client, "tags", name="Level 5", parent=fourth["id"])
    too_deep = client.post(f"{API}/tags/", {"name": "Level 6", "parent": fifth["id"]},
                           media=JSON)
    assert (too_deep.status_code, too_deep.json()) == (400, {
        "parent": ["Tags nest at most 5 levels deep."]})

    # Deleting a tag: its children become top-level, the documents keep them.
    assert client.delete(f"{API}/tags/{invoices['id']}/").status_code == 204
    paid_now = client.get(f"{API}/tags/{number_of_tag(client, 'Paid')}/").json()
    assert paid_now["parent"] is None
    assert sorted(t["name"] for t in alice.get(f"/api/documents/{letter}/").json()["data"][
        "attributes"]["tags"]) == ["Finance", "Paid"]


def number_of_tag(client, name) -> int:
    return next(tag["id"] for tag in client.get(f"{API}/tags/").json()["results"]
                if tag["name"] == name)
