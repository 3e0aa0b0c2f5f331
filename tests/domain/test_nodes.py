"""The tree (api.md, "Folders and documents"): creating, listing, renaming, moving and deleting
folders and documents."""

from __future__ import annotations

import re

import pytest

from dms.db.models import Node
from dms.domain import tree
from tests.harness.client import JSON, NOT_FOUND, VND, assert_error
from tests.harness.database import snapshot
from tests.harness.domaintier import assert_refused, home_id, new_user

DATETIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z\Z")
UNKNOWN_ID = "00000000-0000-4000-8000-000000000000"
RESOURCE_KEYS = ["type", "id", "attributes", "relationships"]
BAD_TITLE = ("A title may not contain /, \\, control characters or invisible formatting characters "
             "such as right-to-left overrides.")


def node_body(resource_type, title, parent_id, **attributes):
    return {"data": {"type": resource_type, "attributes": {"title": title, **attributes},
                     "relationships": {"parent": {"data": {"type": "folders", "id": parent_id}}}}}


def make(client, resource_type, title, parent_id, **attributes):
    response = client.post("/api/nodes/", node_body(resource_type, title, parent_id, **attributes))
    assert response.status_code == 201, response.text
    return response.json()["data"]


def stable(resource: dict) -> dict:
    """The resource without its timestamps, which are checked for shape here."""
    attributes = dict(resource["attributes"])
    for name in ("created_at", "updated_at"):
        assert DATETIME.match(attributes.pop(name)), name
    return {**resource, "attributes": attributes}


def titles(listing: dict) -> list[str]:
    return [item["attributes"]["title"] for item in listing["data"]]


def test_create_folder_returns_201_and_the_whole_node(alice):
    response = alice.post("/api/nodes/", node_body("folders", "  Bills  ", alice.home_id))
    assert response.status_code == 201
    assert response.headers["Content-Type"] == VND
    folder = response.json()["data"]
    assert list(folder) == RESOURCE_KEYS
    assert stable(folder) == {
        "type": "folders", "id": folder["id"],
        "attributes": {"title": "Bills", "breadcrumb": [[".home", alice.home_id],
                                                        ["Bills", folder["id"]]], "tags": []},
        "relationships": {"parent": {"data": {"type": "folders", "id": alice.home_id}}},
    }


def test_create_document_in_both_parent_forms_with_defaults_before_upload(alice):
    folder = make(alice, "folders", "Bills", alice.home_id)
    # The spec's reference form: `parent` right under `data`.
    response = alice.post("/nodes/", {"data": {"type": "documents",
                                               "attributes": {"title": "scan.pdf"},
                                               "parent": {"type": "folders", "id": folder["id"]}}})
    assert response.status_code == 201
    document = response.json()["data"]
    assert stable(document) == {
        "type": "documents", "id": document["id"],
        "attributes": {"title": "scan.pdf", "lang": "eng", "ocr": True, "ocr_status": "received",
                       "ocr_error": None, "file_name": None, "size": 0, "page_count": 0,
                       "mail": None,
                       "breadcrumb": [[".home", alice.home_id], ["Bills", folder["id"]],
                                      ["scan.pdf", document["id"]]],
                       "tags": []},
        "relationships": {"parent": {"data": {"type": "folders", "id": folder["id"]}}},
    }
    with_lang = make(alice, "documents", "Brief", folder["id"], lang="deu+eng", ocr=False)
    assert (with_lang["attributes"]["lang"], with_lang["attributes"]["ocr"]) == ("deu+eng", False)


def test_folders_endpoint_creates_folders_only(alice, config):
    response = alice.post("/api/folders/", node_body("folders", "Taxes", alice.inbox_id))
    assert response.status_code == 201
    assert response.json()["data"]["attributes"]["title"] == "Taxes"
    before = snapshot(config)
    assert_error(alice.post("/api/folders/", node_body("documents", "x", alice.home_id)), 409,
                 "conflict", 'The resource type "documents" does not match `folders`.',
                 "/data/type")
    assert snapshot(config) == before


@pytest.mark.parametrize("title, code, detail", [
    (None, "required", "A title is required."),
    ("", "blank", "A title may not be blank."),
    ("   ", "blank", "A title may not be blank."),
    ("a/b", "invalid", BAD_TITLE),
    ("a\\b", "invalid", BAD_TITLE),
    ("tab\there", "invalid", BAD_TITLE),
    ("invoice\u202efdp.exe", "invalid", BAD_TITLE),
    ("zero\u200bwidth", "invalid", BAD_TITLE),
    ("line\u2028break", "invalid", BAD_TITLE),
    ("x" * 201, "invalid", "A title has at most 200 characters."),
    (42, "invalid", "A title must be text."),
])
def test_bad_titles_are_refused(services, config, title, code, detail):
    """The fast tier (no server): the domain's refusal, its field and code."""
    owner = new_user("alice")
    attributes = {} if title is None else {"title": title}
    assert_refused(config, lambda: tree.create_node(
        owner, Node.FOLDER, attributes, home_id(owner), parent_field="parent",
        default_lang="deu"), code, detail, "title")


def test_a_bad_title_is_answered_with_a_pointer(alice, config):
    """The same refusal through the API: the JSON:API envelope, the field as a pointer."""
    before = snapshot(config)
    assert_error(alice.post("/api/nodes/", node_body("folders", "a/b", alice.home_id)), 400,
                 "invalid", BAD_TITLE, "/data/attributes/title")
    assert snapshot(config) == before


def test_titles_need_not_be_unique_and_may_be_200_characters(alice):
    first = make(alice, "folders", "Same", alice.home_id)
    second = make(alice, "folders", "Same", alice.home_id)
    assert first["id"] != second["id"]
    assert make(alice, "documents", "é" * 200, alice.home_id)["attributes"]["title"] == "é" * 200


def test_bad_creation_requests_change_nothing(alice, bob, config):
    document = make(alice, "documents", "doc", alice.home_id)
    before = snapshot(config)
    cases = [
        (alice.post("/api/nodes/", node_body("folders", "x", alice.home_id), media=JSON), 400,
         "unsupported_media_type",
         "Unsupported media type 'application/json' in the request; use application/vnd.api+json.",
         None),
        (alice.post("/api/nodes/", node_body("tags", "x", alice.home_id)), 409, "conflict",
         'The resource type "tags" does not match `folders` or `documents`.', "/data/type"),
        (alice.post("/api/nodes/", {"data": {"type": "folders", "attributes": {"title": "x"}}}),
         400, "required", "A parent folder is required.", "/data/relationships/parent"),
        (alice.post("/api/nodes/", node_body("folders", "x", UNKNOWN_ID)), 400, "does_not_exist",
         f"Invalid parent '{UNKNOWN_ID}': the folder does not exist.",
         "/data/relationships/parent"),
        (alice.post("/api/nodes/", node_body("folders", "x", bob.home_id)), 400, "does_not_exist",
         f"Invalid parent '{bob.home_id}': the folder does not exist.",
         "/data/relationships/parent"),
        (alice.post("/api/nodes/", node_body("folders", "x", document["id"])), 400, "invalid",
         "A document cannot contain other nodes; choose a folder as parent.",
         "/data/relationships/parent"),
        (alice.post("/api/nodes/", node_body("documents", "x", alice.home_id, lang="xx")), 400,
         "invalid", "Unknown OCR language 'xx'; installed languages: deu, eng "
                    "(combine them with +, e.g. eng+deu).", "/data/attributes/lang"),
        (alice.post("/api/nodes/", node_body("documents", "x", alice.home_id, ocr="yes")), 400,
         "invalid", "ocr must be true or false.", "/data/attributes/ocr"),
    ]
    for response, status, code, detail, pointer in cases:
        assert_error(response, status, code, detail, pointer)
    assert snapshot(config) == before


def test_top_level_nodes_are_home_and_inbox(alice):
    response = alice.get("/api/nodes/")
    assert response.status_code == 200 and response.headers["Content-Type"] == VND
    body = response.json()
    assert [stable(item) for item in body["data"]] == [
        {"type": "folders", "id": alice.home_id,
         "attributes": {"title": ".home", "breadcrumb": [[".home", alice.home_id]], "tags": []},
         "relationships": {"parent": {"data": None}}},
        {"type": "folders", "id": alice.inbox_id,
         "attributes": {"title": ".inbox", "breadcrumb": [[".inbox", alice.inbox_id]], "tags": []},
         "relationships": {"parent": {"data": None}}},
    ]
    assert body["meta"] == {"pagination": {"page": 1, "pages": 1, "count": 2}}


def test_listing_puts_folders_first_then_documents_by_title_ignoring_case(alice):
    for resource_type, title in [("documents", "b doc"), ("folders", "Zeta"),
                                 ("documents", "A doc"), ("folders", "alpha"),
                                 ("folders", "Älter"), ("documents", "c doc")]:
        make(alice, resource_type, title, alice.home_id)
    listing = alice.get(f"/api/nodes/{alice.home_id}/").json()
    assert titles(listing) == ["alpha", "Zeta", "Älter", "A doc", "b doc", "c doc"]
    for item in listing["data"]:
        assert list(item) == RESOURCE_KEYS  # [client]: nothing else inside a resource
        assert item["relationships"]["parent"] == {"data": {"type": "folders", "id": alice.home_id}}
    assert titles(alice.get(f"/api/nodes/{alice.home_id}/?sort=-title").json()) == \
        ["Älter", "Zeta", "c doc", "b doc", "alpha", "A doc"]
    by_age = titles(alice.get(f"/api/nodes/{alice.home_id}/?sort=created_at").json())
    assert by_age == ["b doc", "Zeta", "A doc", "alpha", "Älter", "c doc"]
    assert titles(alice.get(f"/api/nodes/{alice.home_id}/?sort=-created_at").json()) == by_age[::-1]
    assert_error(alice.get(f"/api/nodes/{alice.home_id}/?sort=size"), 400, "invalid",
                 "Cannot sort by 'size'; use one of title, created_at, updated_at, optionally "
                 "with a leading -.")


def test_listing_is_paginated(alice):
    for index in range(25):
        make(alice, "documents", f"doc {index:02d}", alice.inbox_id)
    page = alice.get(f"/api/nodes/{alice.inbox_id}/?page[number]=3").json()
    assert titles(page) == [f"doc {index:02d}" for index in range(20, 25)]
    assert page["meta"] == {"pagination": {"page": 3, "pages": 3, "count": 25}}
    big = alice.get(f"/api/nodes/{alice.inbox_id}/?page[size]=100").json()
    assert len(big["data"]) == 25


def test_a_document_has_no_children_listing(alice):
    document = make(alice, "documents", "doc", alice.home_id)
    assert alice.get(f"/api/nodes/{document['id']}/").json() == NOT_FOUND


def test_folder_detail_and_flat_folder_list(alice, bob):
    outer = make(alice, "folders", "Outer", alice.home_id)
    inner = make(alice, "folders", "inner", outer["id"])
    make(alice, "documents", "not a folder", inner["id"])
    make(bob, "folders", "Bob's", bob.home_id)
    detail = alice.get(f"/api/folders/{inner['id']}/")
    assert detail.status_code == 200
    assert stable(detail.json()["data"]) == {
        "type": "folders", "id": inner["id"],
        "attributes": {"title": "inner", "tags": [], "breadcrumb": [
            [".home", alice.home_id], ["Outer", outer["id"]], ["inner", inner["id"]]]},
        "relationships": {"parent": {"data": {"type": "folders", "id": outer["id"]}}},
    }
    listing = alice.get("/api/folders/").json()
    assert titles(listing) == [".home", ".inbox", "inner", "Outer"]
    assert listing["meta"]["pagination"]["count"] == 4


def test_rename_and_document_settings(alice, config):
    folder = make(alice, "folders", "Old", alice.home_id)
    response = alice.patch(f"/api/nodes/{folder['id']}/",
                           {"data": {"type": "folders", "id": folder["id"],
                                     "attributes": {"title": "New"}}})
    assert response.status_code == 200
    renamed = response.json()["data"]
    assert renamed["attributes"]["title"] == "New"
    assert renamed["attributes"]["breadcrumb"] == [[".home", alice.home_id], ["New", folder["id"]]]
    assert renamed["attributes"]["updated_at"] > folder["attributes"]["updated_at"]

    document = make(alice, "documents", "doc", folder["id"])
    response = alice.patch(f"/nodes/{document['id']}", {"data": {
        "type": "documents", "attributes": {"lang": "deu", "ocr": False, "size": 999}}})
    attributes = response.json()["data"]["attributes"]
    assert (attributes["title"], attributes["lang"], attributes["ocr"], attributes["size"]) == \
           ("doc", "deu", False, 0)

    before = snapshot(config)
    for body, status, code, detail, pointer in [
        ({"data": {"type": "documents", "attributes": {"title": ""}}}, 400, "blank",
         "A title may not be blank.", "/data/attributes/title"),
        ({"data": {"type": "folders", "attributes": {"title": "x"}}}, 409, "conflict",
         'The resource type "folders" does not match `documents`.', "/data/type"),
        ({"data": {"type": "documents", "id": UNKNOWN_ID, "attributes": {"title": "x"}}}, 409,
         "conflict", "The id in the body does not match the id in the URL.", "/data/id"),
        ({"data": {"type": "documents", "attributes": {"lang": "klingon"}}}, 400, "invalid",
         "Unknown OCR language 'klingon'; installed languages: deu, eng (combine them with +, "
         "e.g. eng+deu).", "/data/attributes/lang"),
    ]:
        assert_error(alice.patch(f"/api/nodes/{document['id']}/", body), status, code, detail,
                     pointer)
    assert snapshot(config) == before


def test_special_folders_cannot_be_renamed_moved_or_deleted(alice, config):
    folder = make(alice, "folders", "Target", alice.home_id)
    before = snapshot(config)
    for special_id, title in ((alice.home_id, ".home"), (alice.inbox_id, ".inbox")):
        rename = {"data": {"type": "folders", "attributes": {"title": "renamed"}}}
        assert_error(alice.patch(f"/api/nodes/{special_id}/", rename), 403, "permission_denied",
                     f"The special folder {title} cannot be renamed.")
        assert_error(alice.delete(f"/api/nodes/{special_id}/"), 403, "permission_denied",
                     f"The special folder {title} cannot be deleted.")
        move = {"nodes": [{"id": special_id}], "target_parent": {"id": folder["id"]}}
        assert_error(alice.post("/api/nodes/move/", move, media=JSON), 403, "permission_denied",
                     f"The special folder {title} cannot be moved.", media=JSON)
    assert snapshot(config) == before


def test_move_several_nodes_at_once(alice):
    source = make(alice, "folders", "Source", alice.home_id)
    target = make(alice, "folders", "Target", alice.home_id)
    child = make(alice, "folders", "Child", source["id"])
    grandchild = make(alice, "documents", "Grandchild", child["id"])
    loose = make(alice, "documents", "Loose", alice.inbox_id)
    response = alice.post("/api/nodes/move/", {"nodes": [{"id": child["id"]}, {"id": loose["id"]}],
                                               "target_parent": {"id": target["id"]}}, media=JSON)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == JSON
    moved = response.json()["data"]
    assert sorted((m["id"], m["relationships"]["parent"]["data"]["id"]) for m in moved) == \
           sorted([(child["id"], target["id"]), (loose["id"], target["id"])])
    assert titles(alice.get(f"/api/nodes/{target['id']}/").json()) == ["Child", "Loose"]
    assert titles(alice.get(f"/api/nodes/{source['id']}/").json()) == []
    # What was below the moved folder moved with it.
    crumb = alice.get(
        f"/api/documents/{grandchild['id']}/").json()["data"]["attributes"]["breadcrumb"]
    assert crumb == [[".home", alice.home_id], ["Target", target["id"]], ["Child", child["id"]],
                     ["Grandchild", grandchild["id"]]]


def test_refused_moves_are_all_or_nothing(alice, bob, config):
    outer = make(alice, "folders", "Outer", alice.home_id)
    inner = make(alice, "folders", "Inner", outer["id"])
    document = make(alice, "documents", "Doc", alice.home_id)
    bobs = make(bob, "folders", "Bob's", bob.home_id)
    before = snapshot(config)

    def move(ids, target):
        return alice.post("/api/nodes/move/", {"nodes": [{"id": i} for i in ids],
                                               "target_parent": {"id": target}}, media=JSON)

    for response, status, code, detail, pointer in [
        (move([document["id"], UNKNOWN_ID], alice.inbox_id), 404, "not_found", "Not found.", None),
        (move([document["id"], bobs["id"]], alice.inbox_id), 404, "not_found", "Not found.", None),
        (move([document["id"]], UNKNOWN_ID), 404, "not_found", "Not found.", None),
        (move([document["id"]], bobs["id"]), 404, "not_found", "Not found.", None),
        (move([outer["id"]], document["id"]), 400, "invalid",
         "The target is a document; nodes can only be moved into a folder.", "/target_parent/id"),
        (move([document["id"], outer["id"]], outer["id"]), 400, "invalid",
         "A folder cannot be moved into itself or into one of its own folders.",
         "/target_parent/id"),
        (move([outer["id"]], inner["id"]), 400, "invalid",
         "A folder cannot be moved into itself or into one of its own folders.",
         "/target_parent/id"),
        (alice.post("/api/nodes/move/", {"nodes": "all", "target_parent": {"id": outer["id"]}},
                    media=JSON), 400, "required",
         '`nodes` must be a list of {"id": ...} objects.', "/nodes"),
        (alice.post("/api/nodes/move/", {"nodes": [{"id": document["id"]}, {}],
                                         "target_parent": {"id": outer["id"]}}, media=JSON),
         400, "invalid", "Each entry of `nodes` needs an `id`.", "/nodes/1/id"),
        (alice.post("/api/nodes/move/", {"nodes": [{"id": document["id"]}]}, media=JSON), 400,
         "required", "`target_parent` must be an object with the target folder's `id`.",
         "/target_parent"),
        (move([f"00000000-0000-4000-8000-{n:012d}" for n in range(10_001)], outer["id"]), 400,
         "invalid", "At most 10000 nodes can be moved at once; move them in parts.", "/nodes"),
    ]:
        assert_error(response, status, code, detail, pointer, media=JSON)
    assert snapshot(config) == before


@pytest.mark.config(trash_days=0)  # with the trash, tests/domain/test_trash.py
def test_delete_without_a_trash_removes_the_whole_subtree(alice, config):
    top = make(alice, "folders", "Top", alice.home_id)
    middle = make(alice, "folders", "Middle", top["id"])
    leaf = make(alice, "documents", "Leaf", middle["id"])
    keep = make(alice, "documents", "Keep", alice.home_id)
    response = alice.delete(f"/api/nodes/{top['id']}/")
    assert response.status_code == 204 and response.content == b""
    for node in (top, middle):
        assert alice.get(f"/api/folders/{node['id']}/").json() == NOT_FOUND
    assert alice.get(f"/api/documents/{leaf['id']}/").json() == NOT_FOUND
    assert titles(alice.get(f"/api/nodes/{alice.home_id}/").json()) == ["Keep"]
    remaining = snapshot(config)["node"]
    assert not [row for row in remaining
                if top["id"] in row or middle["id"] in row or leaf["id"] in row]
    assert [row for row in remaining if keep["id"] in row]


def test_deleting_a_deep_tree_works(alice):
    parent = alice.home_id
    chain = []
    for depth in range(40):
        parent = make(alice, "folders", f"level {depth}", parent)["id"]
        chain.append(parent)
    crumb = alice.get(f"/api/folders/{chain[-1]}/").json()["data"]["attributes"]["breadcrumb"]
    assert [c[0] for c in crumb] == [".home"] + [f"level {d}" for d in range(40)]
    assert alice.delete(f"/api/nodes/{chain[0]}/").status_code == 204
    assert alice.get(f"/api/folders/{chain[-1]}/").json() == NOT_FOUND
    assert titles(alice.get(f"/api/nodes/{alice.home_id}/").json()) == []


def test_documents_list_detail_patch_and_delete(alice, bob):
    folder = make(alice, "folders", "F", alice.home_id)
    first = make(alice, "documents", "b second", folder["id"])
    make(alice, "documents", "A first", alice.inbox_id)
    make(bob, "documents", "bob's", bob.home_id)
    listing = alice.get("/api/documents/").json()
    assert titles(listing) == ["A first", "b second"]
    detail = alice.get(f"/api/documents/{first['id']}/")
    assert detail.status_code == 200
    document = detail.json()["data"]
    assert stable(document)["attributes"] == {**stable(first)["attributes"], "versions": []}
    assert alice.get(f"/api/documents/{folder['id']}/").json() == NOT_FOUND
    patched = alice.patch(f"/api/documents/{first['id']}/",
                          {"data": {"type": "documents", "attributes": {"title": "renamed"}}})
    assert patched.json()["data"]["attributes"]["title"] == "renamed"
    assert patched.json()["data"]["attributes"]["versions"] == []
    assert alice.delete(f"/api/documents/{first['id']}/").status_code == 204
    assert titles(alice.get("/api/documents/").json()) == ["A first"]
