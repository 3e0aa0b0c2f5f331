"""Sharing and page operations in the dialect (api.md §17, §21) on both engines: `permissions`
with full_perms and on PATCH, set_permissions by PATCH and bulk_edit making dms grants (seen in
dms's own access route), owner__id and shared_by__id; a viewer refused without a change; users
and groups added by an administrator; bulk_edit's rotate, delete_pages, split and merge making
dms versions and documents, and their refusals changing nothing."""

from __future__ import annotations

import pytest

from tests.harness import samples
from tests.harness.database import snapshot
from tests.harness.paperless import API, JSON, dialect, make
from tests.harness.pdfops import bytes_layout, page_texts
from tests.harness.waiting import wait_processed
from tests.paperless.test_bulk import edit, field_of
from tests.paperless.test_documents import uploaded

EMPTY = {"view": {"users": [], "groups": []}, "change": {"users": [], "groups": []}}


def upload(client, owner, name, data):
    number = uploaded(client, name, data, [("title", name)])["related_document_ids"][0]
    dms_id = client.get(f"{API}/documents/{number}/").json()["dms_id"]
    assert wait_processed(owner, dms_id)[-1] == "succeeded"
    return number, dms_id


def number_of(client, path, username_or_name):
    return next(item["id"] for item in client.get(f"{API}/{path}/").json()["results"]
                if username_or_name in (item.get("username"), item.get("name")))


def test_permissions_are_dms_grants(alice, bob, admin, config):
    client, bobs = dialect(alice, 10), dialect(bob, 10)
    staff = dialect(admin, 10)
    invoice, invoice_id = upload(client, alice, "invoice.txt", samples.text("Invoice\n"))
    memo, _ = upload(client, alice, "memo.txt", samples.text("Memo\n"))
    group = make(staff, "groups", name="Accounting", permissions=["view_document"])
    assert group == {"id": group["id"], "name": "Accounting", "permissions": []}
    bob_number = number_of(staff, "users", "bob")
    alice_number = number_of(staff, "users", "alice")
    assert client.get(f"{API}/documents/{invoice}/?full_perms=true").json()["permissions"] == \
        EMPTY
    changed = client.patch(f"{API}/documents/{invoice}/", {"set_permissions": {
        "view": {"users": [bob_number], "groups": []},
        "change": {"users": [], "groups": [group["id"]]}}}, media=JSON)
    assert changed.status_code == 200, changed.text
    shown = changed.json()
    assert (shown["permissions"], "user_can_change" in shown) == ({
        "view": {"users": [bob_number], "groups": [group["id"]]},
        "change": {"users": [], "groups": [group["id"]]}}, False)
    # One system: dms's own sharing shows the same grants.
    access = alice.get(f"/api/nodes/{invoice_id}/access/").json()["data"]["attributes"]
    assert sorted(((grant["user"] or {}).get("username") or grant["group"]["name"],
                   grant["role"]) for grant in access["grants"]) == [
        ("Accounting", "editor"), ("bob", "viewer")]
    mine = client.get(f"{API}/documents/{invoice}/").json()
    assert (mine["is_shared_by_requester"], mine["user_can_change"], "permissions" in mine) == (
        True, True, False)
    theirs = bobs.get(f"{API}/documents/?fields=id,owner,user_can_change,"
                      "is_shared_by_requester").json()
    assert theirs["results"] == [{"id": invoice, "owner": alice_number,
                                  "user_can_change": False, "is_shared_by_requester": False}]
    # Only the owner sees and sets who has it; a viewer's attempt changes nothing.
    assert bobs.get(f"{API}/documents/{invoice}/?full_perms=true").json()["permissions"] == EMPTY
    before = snapshot(config)
    refused = bobs.patch(f"{API}/documents/{invoice}/", {"title": "mine now", "set_permissions": {
        "view": {"users": [bob_number]}}}, media=JSON)
    assert (refused.status_code, list(refused.json())) == (403, ["detail"])
    for body, field in (({"set_permissions": {"view": {"users": [99999]}}}, "set_permissions"),
                        ({"set_permissions": "everyone"}, "set_permissions"),
                        ({"owner": bob_number}, "owner")):
        response = client.patch(f"{API}/documents/{invoice}/", body, media=JSON)
        assert (response.status_code, list(response.json())) == (400, [field]), body
    assert snapshot(config) == before
    # Filters by owner and by who shares.
    for query, expected in ((f"owner__id={alice_number}", [invoice, memo]),
                            (f"owner__id__none={alice_number}", []),
                            ("owner__isnull=true", []),
                            (f"shared_by__id={alice_number}", [invoice])):
        found = client.get(f"{API}/documents/?{query}&fields=id").json()["results"]
        assert sorted(d["id"] for d in found) == sorted(expected), query
    assert [d["id"] for d in bobs.get(f"{API}/documents/?owner__id={alice_number}&fields=id")
            .json()["results"]] == [invoice]
    # bulk_edit: merge adds, without merge the documents' own grants become those named.
    assert edit(client, [memo], "set_permissions", merge=True, set_permissions={
        "change": {"users": [bob_number]}}).json() == {"result": "OK"}
    assert field_of(bobs, memo, "user_can_change") is True
    assert edit(client, [invoice, memo], "set_permissions", set_permissions={
        "view": {"users": [], "groups": []}}, owner=alice_number).status_code == 200
    assert bobs.get(f"{API}/documents/").json()["count"] == 0
    assert client.get(f"{API}/documents/{invoice}/?full_perms=true").json()["permissions"] == \
        EMPTY


def test_users_and_groups_added_by_an_administrator(admin, alice, anon):
    staff = dialect(admin, 10)
    group = make(staff, "groups", name="Family")
    created = staff.post(f"{API}/users/", {
        "username": "carol", "password": "carol-pass-123", "first_name": "Carol",
        "email": "carol@example.org", "is_superuser": False, "groups": [group["id"]],
        "user_permissions": ["view_document"]}, media=JSON)
    assert created.status_code == 201, created.text
    shown = created.json()
    assert {key: shown[key] for key in ("username", "first_name", "email", "groups",
                                        "is_superuser", "is_active")} == {
        "username": "carol", "first_name": "Carol", "email": "carol@example.org",
        "groups": [group["id"]], "is_superuser": False, "is_active": True}
    token = anon.post("/paperless/api/token/", {"username": "carol",
                                                "password": "carol-pass-123"}, media=JSON)
    assert token.status_code == 200 and set(token.json()) == {"token"}
    members = admin.get("/api/groups/").json()["data"]
    assert [len(g["attributes"]["members"]) for g in members
            if g["attributes"]["name"] == "Family"] == [1]
    client = dialect(alice, 10)
    for path, body in (("users", {"username": "mallory", "password": "x-pass-12345"}),
                       ("groups", {"name": "Mine"})):
        refused = client.post(f"{API}/{path}/", body, media=JSON)
        assert (refused.status_code, list(refused.json())) == (403, ["detail"]), path
    for body, field in (({"username": "dave", "groups": [99999]}, "groups"),
                        ({"username": "dave", "password": "x"}, "password"),
                        ({"username": ""}, "username")):
        refused = staff.post(f"{API}/users/", body, media=JSON)
        assert (refused.status_code, list(refused.json())) == (400, [field]), body
    assert [u["username"] for u in staff.get(f"{API}/users/").json()["results"]
            if u["username"] == "dave"] == []


@pytest.fixture
def letter(alice):
    client = dialect(alice, 10)
    number, dms_id = upload(client, alice, "letter.pdf",
                            samples.pdf(["Page one", "Page two", "Page three"]))
    return client, number, dms_id


def original(client, number) -> bytes:
    response = client.get(f"{API}/documents/{number}/download/?original=true")
    assert response.status_code == 200
    return response.content


def test_page_methods(letter, alice, config):
    client, number, dms_id = letter
    assert edit(client, [number], "rotate", degrees=90).json() == {"result": "OK"}
    assert [rotation for rotation, _ in bytes_layout(original(client, number))] == [90, 90, 90]
    assert edit(client, [number], "delete_pages", pages=[2]).status_code == 200
    assert page_texts(original(client, number)) == ["Page one", "Page three"]
    assert [v["number"] for v in
            alice.get(f"/api/documents/{dms_id}/").json()["data"]["attributes"]["versions"]] \
        == [1, 2, 3]
    other, _ = upload(client, alice, "other.pdf", samples.pdf(["Other page"]))
    kind = make(client, "document_types", name="Letter")
    client.patch(f"{API}/documents/{number}/", {"document_type": kind["id"]}, media=JSON)
    before = client.get(f"{API}/documents/").json()["count"]
    assert edit(client, [other, number], "merge", metadata_document_id=number).status_code == 200
    merged = client.get(f"{API}/documents/?title__icontains=merged").json()["results"]
    assert [(d["title"], d["page_count"], d["document_type"]) for d in merged] == [
        ("letter (merged).pdf", 3, kind["id"])]
    assert page_texts(original(client, merged[0]["id"])) == ["Other page", "Page one",
                                                             "Page three"]
    assert client.get(f"{API}/documents/").json()["count"] == before + 1  # originals kept
    assert edit(client, [merged[0]["id"]], "split", pages="1,2-3",
                delete_originals=True).status_code == 200
    parts = client.get(f"{API}/documents/?title__icontains=split&ordering=title").json()
    assert [(d["title"], d["page_count"], d["document_type"]) for d in parts["results"]] == [
        ("letter (merged) (split 1).pdf", 1, kind["id"]),
        ("letter (merged) (split 2).pdf", 2, kind["id"])]
    assert client.get(f"{API}/documents/{merged[0]['id']}/").status_code == 404  # in the trash
    # Refusals, each before any change.
    state = snapshot(config)
    for documents, method, parameters in (
            ([number, other], "split", {"pages": "1"}),
            ([number], "split", {"pages": "1,x"}),
            ([number], "split", {"pages": "1,7"}),
            ([number], "delete_pages", {"pages": [1, 2]}),
            ([number], "delete_pages", {"pages": "2"}),
            ([number], "rotate", {"degrees": "sideways"}),
            ([number], "rotate", {"degrees": 45}),
            ([number], "merge", {}),
            ([number, other], "merge", {"metadata_document_id": 99999})):
        response = edit(client, documents, method, **parameters)
        assert response.status_code == 400, (method, parameters, response.text)
        assert list(response.json()) in (["non_field_errors"], ["pages"], ["degrees"],
                                         ["documents"]), response.json()
    assert snapshot(config) == state
