"""Another user's papers behave as if they did not exist (api.md, "Permissions"): for every tree
route — the trash, the history and version restores (api.md, "The trash", "History", "Versions") too
— the owner succeeds, another user and an admin get exactly the answer for an unknown id, an
anonymous caller gets 401, and nothing changes after a refused request. No list ever shows a foreign
node, nor another user's trash."""

from __future__ import annotations

import pytest

from tests.harness import samples
from tests.harness.client import JSON, NOT_FOUND, assert_error
from tests.harness.database import snapshot
from tests.harness.documents import upload
from tests.harness.waiting import wait_processed

UNKNOWN_ID = "00000000-0000-4000-8000-000000000000"
NO_CREDENTIALS = ("not_authenticated", "Authentication credentials were not provided.")


def create(client, resource_type, title, parent_id):
    body = {"data": {"type": resource_type, "attributes": {"title": title},
                     "relationships": {"parent": {"data": {"type": "folders", "id": parent_id}}}}}
    response = client.post("/api/nodes/", body)
    assert response.status_code == 201, response.text
    return response.json()["data"]["id"]


@pytest.fixture
def papers(alice):
    """Alice's folder with a document in it (its file read, so that nothing changes meanwhile),
    the document's version, and a folder of hers in the trash."""
    folder = create(alice, "folders", "Private", alice.home_id)
    document = create(alice, "documents", "secret.pdf", folder)
    assert upload(alice, document, "secret.txt", samples.text("secret\n")).status_code == 201
    assert wait_processed(alice, document)[-1] == "succeeded"
    [version] = alice.get(f"/api/documents/{document}/").json()["data"]["attributes"]["versions"]
    trashed = create(alice, "folders", "Old", alice.home_id)
    assert alice.delete(f"/api/folders/{trashed}/").status_code == 204
    about = {kind: alice.post(f"/api/{kind}/", {"data": {"type": kind, "attributes": attributes}})
             .json()["data"]["id"] for kind, attributes in (
                 ("correspondents", {"name": "Bank"}), ("document-types", {"name": "Bill"}),
                 ("custom-fields", {"name": "Amount", "data_type": "monetary"}))}
    note = alice.post(f"/api/documents/{document}/notes/",
                      {"data": {"attributes": {"note": "private"}}}).json()["data"]["id"]
    tag, other_tag = (alice.post("/api/tags/", {"data": {"type": "tags", "attributes": {
        "name": name}}}).json()["data"]["id"] for name in ("paid", "done"))
    return {"folder": folder, "document": document, "version": version["id"],
            "page": version["pages"][0]["id"], "trashed": trashed,
            "correspondent": about["correspondents"], "document_type": about["document-types"],
            "field": about["custom-fields"], "note": note, "tag": tag, "other_tag": other_tag}


# Each route as (name, method, path template, body maker, status for the owner).
ROUTES = [
    ("list children", "GET", "/api/nodes/{folder}/", None, 200),
    ("folder detail", "GET", "/api/folders/{folder}/", None, 200),
    ("document detail", "GET", "/api/documents/{document}/", None, 200),
    ("rename node", "PATCH", "/api/nodes/{document}/",
     lambda ids: {"data": {"type": "documents", "attributes": {"title": "renamed"}}}, 200),
    ("rename document", "PATCH", "/api/documents/{document}/",
     lambda ids: {"data": {"type": "documents", "attributes": {"title": "renamed"}}}, 200),
    ("delete document", "DELETE", "/api/documents/{document}/", None, 204),
    ("delete node", "DELETE", "/api/nodes/{folder}/", None, 204),
    ("history", "GET", "/api/nodes/{document}/history/", None, 200),
    ("restore a version", "POST", "/api/documents/{document}/versions/{version}/restore/", None,
     201),
    ("restore from the trash", "POST", "/api/trash/{trashed}/restore/", None, 200),
    ("delete from the trash for good", "DELETE", "/api/trash/{trashed}/", None, 204),
    ("correspondent detail", "GET", "/api/correspondents/{correspondent}/", None, 200),
    ("change a correspondent", "PATCH", "/api/correspondents/{correspondent}/",
     lambda ids: {"data": {"type": "correspondents", "attributes": {"name": "Bank 2"}}}, 200),
    ("delete a correspondent", "DELETE", "/api/correspondents/{correspondent}/", None, 204),
    ("document type detail", "GET", "/api/document-types/{document_type}/", None, 200),
    ("change a document type", "PATCH", "/api/document-types/{document_type}/",
     lambda ids: {"data": {"type": "document-types", "attributes": {"name": "Bill 2"}}}, 200),
    ("delete a document type", "DELETE", "/api/document-types/{document_type}/", None, 204),
    ("custom field detail", "GET", "/api/custom-fields/{field}/", None, 200),
    ("change a custom field", "PATCH", "/api/custom-fields/{field}/",
     lambda ids: {"data": {"type": "custom-fields", "attributes": {"name": "Sum"}}}, 200),
    ("delete a custom field", "DELETE", "/api/custom-fields/{field}/", None, 204),
    ("a document's notes", "GET", "/api/documents/{document}/notes/", None, 200),
    ("add a note", "POST", "/api/documents/{document}/notes/",
     lambda ids: {"data": {"attributes": {"note": "mine"}}}, 201),
    ("delete a note", "DELETE", "/api/notes/{note}/", None, 204),
    ("a document's thumbnail (api.md §22)", "GET", "/api/documents/{document}/thumbnail/", None,
     200),
    ("a page's preview in a width", "GET", "/api/pages/{page}/preview/?width=480", None, 200),
    ("download a selection", "POST", "/api/nodes/download/",
     lambda ids: {"node_ids": [ids["folder"]]}, 200),
    ("merge a tag", "POST", "/api/tags/{tag}/merge/", lambda ids: {"into": ids["other_tag"]}, 200),
    ("set a document's metadata", "PATCH", "/api/documents/{document}/",
     lambda ids: {"data": {"type": "documents", "attributes": {
         "correspondent": ids["correspondent"],
         "custom_fields": [{"field": ids["field"], "value": "EUR1.00"}]}}}, 200),
]


def call(client, method, path, body):
    media = JSON if path.endswith("/move/") else None
    return client.request(method, path, json_body=body, media=media)


@pytest.mark.parametrize("name, method, template, make_body, owner_status", ROUTES,
                         ids=[r[0] for r in ROUTES])
def test_route_for_owner_other_user_admin_and_anonymous(alice, bob, admin, anon, papers, config,
                                                        name, method, template, make_body,
                                                        owner_status):
    path = template.format(**papers)
    body = make_body(papers) if make_body else None
    before = snapshot(config)
    for stranger in (bob, admin):
        response = call(stranger, method, path, body)
        assert (response.status_code, response.json()) == (404, NOT_FOUND), stranger.username
        unknown_path = path
        for known in papers.values():
            unknown_path = unknown_path.replace(known, UNKNOWN_ID)
        unknown = call(stranger, method, unknown_path, body)
        assert (unknown.status_code, unknown.json()) == (404, NOT_FOUND)
    assert_error(call(anon, method, path, body), 401, *NO_CREDENTIALS)
    assert snapshot(config) == before
    assert call(alice, method, path, body).status_code == owner_status


def test_create_under_a_foreign_folder_reads_like_an_unknown_one(alice, bob, admin, papers, config):
    before = snapshot(config)
    for stranger in (bob, admin):
        answers = []
        for parent in (papers["folder"], UNKNOWN_ID):
            body = {"data": {"type": "folders", "attributes": {"title": "intruder"},
                             "relationships": {"parent": {"data": {
                                 "type": "folders", "id": parent}}}}}
            response = stranger.post("/api/nodes/", body)
            answers.append((response.status_code,
                            response.json()["errors"][0]["detail"].replace(parent, "<id>")))
        assert answers[0] == answers[1] == \
            (400, "Invalid parent '<id>': the folder does not exist.")
    assert snapshot(config) == before


def test_move_from_or_into_a_foreign_folder_is_not_found(alice, bob, admin, papers, config):
    bobs_folder = create(bob, "folders", "Bob's", bob.home_id)
    before = snapshot(config)
    for stranger, own_folder in ((bob, bobs_folder), (admin, admin.home_id)):
        # Move alice's document into the stranger's own folder: alice's node is unknown to them.
        move_from = stranger.post("/api/nodes/move/", {"nodes": [{"id": papers["document"]}],
                                                       "target_parent": {"id": own_folder}},
                                  media=JSON)
        assert (move_from.status_code, move_from.json()) == (404, NOT_FOUND)
    # Alice moves her document into bob's folder: the target is unknown to her.
    move_into = alice.post("/api/nodes/move/", {"nodes": [{"id": papers["document"]}],
                                                "target_parent": {"id": bobs_folder}}, media=JSON)
    assert (move_into.status_code, move_into.json()) == (404, NOT_FOUND)
    assert snapshot(config) == before
    anonymous = alice.as_anonymous().post("/api/nodes/move/",
                                          {"nodes": [{"id": papers["document"]}],
                                           "target_parent": {"id": alice.inbox_id}},
                                          media=JSON)
    assert_error(anonymous, 401, *NO_CREDENTIALS, media=JSON)


def test_no_list_contains_another_users_nodes(alice, bob, admin, papers, anon):
    create(bob, "documents", "bob.pdf", bob.home_id)
    alice_ids = {alice.home_id, alice.inbox_id, *papers.values()}
    for stranger in (bob, admin):
        seen = set()
        for path in ("/api/nodes/", "/api/folders/", "/api/documents/",
                     f"/api/nodes/{stranger.home_id}/", f"/api/nodes/{stranger.inbox_id}/",
                     "/api/correspondents/", "/api/document-types/", "/api/custom-fields/"):
            response = stranger.get(path + "?page[size]=100")
            assert response.status_code == 200
            seen |= {item["id"] for item in response.json()["data"]}
        assert seen and not seen & alice_ids
    for path in ("/api/nodes/", "/api/folders/", "/api/documents/", "/api/correspondents/",
                 "/api/document-types/", "/api/custom-fields/"):
        assert_error(anon.get(path), 401, *NO_CREDENTIALS)
    for kind in ("correspondents", "document-types", "custom-fields"):
        body = {"data": {"type": kind, "attributes": {"name": "x", "data_type": "string"}}}
        assert_error(anon.post(f"/api/{kind}/", body), 401, *NO_CREDENTIALS)


def test_the_trash_of_one_user_is_not_anothers(alice, bob, admin, anon, papers, config):
    """GET /trash/ lists only the caller's own deletions; DELETE /trash/ empties only the
    caller's own trash."""
    before = snapshot(config)
    for stranger in (bob, admin):
        response = stranger.get("/api/trash/")
        assert (response.status_code, response.json()["data"]) == (200, [])
        assert stranger.delete("/api/trash/").status_code == 204
    assert snapshot(config) == before
    for method in ("GET", "DELETE"):
        assert_error(anon.request(method, "/api/trash/"), 401, *NO_CREDENTIALS)
    assert snapshot(config) == before
    assert [node["id"] for node in alice.get("/api/trash/").json()["data"]] == \
        [papers["trashed"]]
    assert alice.delete("/api/trash/").status_code == 204
    assert alice.get("/api/trash/").json()["data"] == []
