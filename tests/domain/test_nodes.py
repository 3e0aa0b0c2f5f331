"""The tree (api.md, "Folders and documents"): creating, listing, renaming, moving and deleting
folders and documents.

The rules (refusals with their field, what a change leaves in the database, the listings' order)
are tested on the fast tier, by the domain's functions (`services`); through the API, what a
client sees: the resources, statuses, media types and pointers, one case of each refusal's kind,
and another user's folder reading like an unknown one."""

from __future__ import annotations

import re
from functools import partial

import pytest

from dms.db.models import Node
from dms.domain import listings, trash, tree
from tests.harness.client import JSON, NOT_FOUND, VND, assert_error
from tests.harness.database import snapshot
from tests.harness.domaintier import assert_refused, home_id, inbox_id, new_user

DATETIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z\Z")
UNKNOWN_ID = "00000000-0000-4000-8000-000000000000"
RESOURCE_KEYS = ["type", "id", "attributes", "relationships"]
BAD_TITLE = ("A title may not contain /, \\, control characters or invisible formatting characters "
             "such as right-to-left overrides.")
INTO_ITSELF = "A folder cannot be moved into itself or into one of its own folders."


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


# -- the fast tier's helpers: the domain's functions as the routes call them ---------------------

def add(owner, kind: str, title: str, parent_id: str | None, **attributes) -> Node:
    """A folder or document made as POST /nodes/ makes it."""
    return tree.create_node(owner, kind, {"title": title, **attributes}, parent_id,
                            parent_field="parent", default_lang="eng")


def child_titles(owner, folder_id: str, sort: str | None = None) -> list[str]:
    """The titles GET /nodes/{folder_id}/?sort= lists, in its order (every page)."""
    return [row.title for row in listings.listing(owner, folder_id, sort)[1].fetch(0, 1000)]


def crumb(node_id: str) -> list[list[str]]:
    return tree.breadcrumbs([node_id])[node_id]


# -- creating -------------------------------------------------------------------------------------

def test_create_folder_returns_201_and_the_whole_node(alice):
    response = alice.post("/api/nodes/", node_body("folders", "  Bills  ", alice.home_id))
    assert response.status_code == 201
    assert response.headers["Content-Type"] == VND
    folder = response.json()["data"]
    assert list(folder) == RESOURCE_KEYS
    assert stable(folder) == {
        "type": "folders", "id": folder["id"],
        "attributes": {"title": "Bills", "breadcrumb": [[".home", alice.home_id],
                                                        ["Bills", folder["id"]]], "tags": [],
                       "access": "owner", "owner": "alice"},
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
    assert isinstance(document["attributes"]["paperless_id"], int)  # its number in §17's dialect
    assert stable(document) == {
        "type": "documents", "id": document["id"],
        "attributes": {"title": "scan.pdf", "lang": "eng", "ocr": True, "ocr_status": "received",
                       "ocr_error": None, "file_name": None, "size": 0, "page_count": 0,
                       "mail": None, "correspondent": None, "document_type": None,
                       "document_date": document["attributes"]["created_at"][:10],
                       "archive_serial_number": None, "custom_fields": [], "notes_count": 0,
                       "paperless_id": document["attributes"]["paperless_id"],
                       "breadcrumb": [[".home", alice.home_id], ["Bills", folder["id"]],
                                      ["scan.pdf", document["id"]]],
                       "tags": [], "access": "owner", "owner": "alice"},
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


def test_titles_need_not_be_unique_and_may_be_200_characters(services):
    owner = new_user("alice")
    first = add(owner, Node.FOLDER, "Same", home_id(owner))
    second = add(owner, Node.FOLDER, "Same", home_id(owner))
    assert first.id != second.id
    long = add(owner, Node.DOCUMENT, "é" * 200, home_id(owner))
    assert Node.get_by_id(long.id).title == "é" * 200
    assert child_titles(owner, home_id(owner)) == ["Same", "Same", "é" * 200]


def test_bad_parents_and_document_settings_are_refused(services, config):
    """The fast tier: another user's folder reads as an unknown one; the parent's field is the
    one the route names (its pointer), a setting's the attribute."""
    owner, bob = new_user("alice"), new_user("bob")
    home, bobs = home_id(owner), home_id(bob)
    document = add(owner, Node.DOCUMENT, "doc", home)
    for call, code, detail, field in [
        (partial(add, owner, Node.FOLDER, "x", None), "required", "A parent folder is required.",
         "parent"),
        (partial(add, owner, Node.FOLDER, "x", UNKNOWN_ID), "does_not_exist",
         f"Invalid parent '{UNKNOWN_ID}': the folder does not exist.", "parent"),
        (partial(add, owner, Node.FOLDER, "x", bobs), "does_not_exist",
         f"Invalid parent '{bobs}': the folder does not exist.", "parent"),
        (partial(add, owner, Node.FOLDER, "x", document.id), "invalid",
         "A document cannot contain other nodes; choose a folder as parent.", "parent"),
        (partial(add, owner, Node.DOCUMENT, "x", home, lang="xx"), "invalid",
         "Unknown OCR language 'xx'; installed languages: deu, eng (combine them with +, "
         "e.g. eng+deu).", "lang"),
        (partial(add, owner, Node.DOCUMENT, "x", home, ocr="yes"), "invalid",
         "ocr must be true or false.", "ocr"),
    ]:
        assert_refused(config, call, code, detail, field)


def test_bad_creation_requests_change_nothing(alice, bob, config):
    """Through the API: what the route parses itself, and one case of each of the domain's
    refusals for its pointer (another user's folder answered as an unknown one)."""
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
        (alice.post("/api/nodes/", node_body("folders", "x", bob.home_id)), 400, "does_not_exist",
         f"Invalid parent '{bob.home_id}': the folder does not exist.",
         "/data/relationships/parent"),
        (alice.post("/api/nodes/", node_body("documents", "x", alice.home_id, lang="xx")), 400,
         "invalid", "Unknown OCR language 'xx'; installed languages: deu, eng "
                    "(combine them with +, e.g. eng+deu).", "/data/attributes/lang"),
    ]
    for response, status, code, detail, pointer in cases:
        assert_error(response, status, code, detail, pointer)
    assert snapshot(config) == before


# -- listing --------------------------------------------------------------------------------------

def test_top_level_nodes_are_home_inbox_and_shared(alice):
    response = alice.get("/api/nodes/")
    assert response.status_code == 200 and response.headers["Content-Type"] == VND
    body = response.json()
    mine = {"tags": [], "access": "owner", "owner": "alice"}
    assert [stable(item) for item in body["data"]] == [
        {"type": "folders", "id": alice.home_id,
         "attributes": {"title": ".home", "breadcrumb": [[".home", alice.home_id]], **mine},
         "relationships": {"parent": {"data": None}}},
        {"type": "folders", "id": alice.inbox_id,
         "attributes": {"title": ".inbox", "breadcrumb": [[".inbox", alice.inbox_id]], **mine},
         "relationships": {"parent": {"data": None}}},
        {"type": "folders", "id": alice.shared_id,
         "attributes": {"title": ".shared", "breadcrumb": [[".shared", alice.shared_id]],
                        **mine},
         "relationships": {"parent": {"data": None}}},
    ]
    assert body["meta"] == {"pagination": {"page": 1, "pages": 1, "count": 3}}


def test_listing_puts_folders_first_then_documents_by_title_ignoring_case(services, config):
    owner = new_user("alice")
    home = home_id(owner)
    for kind, title in [(Node.DOCUMENT, "b doc"), (Node.FOLDER, "Zeta"),
                        (Node.DOCUMENT, "A doc"), (Node.FOLDER, "alpha"),
                        (Node.FOLDER, "Älter"), (Node.DOCUMENT, "c doc")]:
        add(owner, kind, title, home)
    assert child_titles(owner, home) == ["alpha", "Zeta", "Älter", "A doc", "b doc", "c doc"]
    assert child_titles(owner, home, "-title") == \
        ["Älter", "Zeta", "c doc", "b doc", "alpha", "A doc"]
    by_age = child_titles(owner, home, "created_at")
    assert by_age == ["b doc", "Zeta", "A doc", "alpha", "Älter", "c doc"]
    assert child_titles(owner, home, "-created_at") == by_age[::-1]
    for sort in ("size", "--title"):
        assert_refused(config, lambda sort=sort: listings.listing(owner, home, sort), "invalid",
                       f"Cannot sort by {sort!r}; use one of {SORT_NAMES}, optionally with a "
                       "leading -.", None)


SORT_NAMES = ("title, created_at, updated_at, document_date, asn, correspondent, document_type, "
              "cf_<field id>")


def test_a_listing_is_paginated_and_sorted_as_the_query_asks(alice):
    """Through the API: `page[...]` and `sort=` reach the listing, each item is a resource of its
    own, and a sort that does not exist is a 400 (the order itself: the test above)."""
    for index in range(25):
        make(alice, "documents", f"doc {index:02d}", alice.inbox_id)
    page = alice.get(f"/api/nodes/{alice.inbox_id}/?page[number]=3").json()
    assert titles(page) == [f"doc {index:02d}" for index in range(20, 25)]
    assert page["meta"] == {"pagination": {"page": 3, "pages": 3, "count": 25}}
    for item in page["data"]:
        assert list(item) == RESOURCE_KEYS  # nothing else inside a resource
        assert item["relationships"]["parent"] == {"data": {"type": "folders",
                                                            "id": alice.inbox_id}}
    big = alice.get(f"/api/nodes/{alice.inbox_id}/?page[size]=100").json()
    assert len(big["data"]) == 25
    assert titles(alice.get(f"/api/nodes/{alice.inbox_id}/?sort=-title").json()) == \
        [f"doc {index:02d}" for index in range(24, 14, -1)]
    assert_error(alice.get(f"/api/nodes/{alice.inbox_id}/?sort=size"), 400, "invalid",
                 f"Cannot sort by 'size'; use one of {SORT_NAMES}, optionally with a leading -.")


def test_a_document_has_no_children_listing(services, config):
    owner = new_user("alice")
    document = add(owner, Node.DOCUMENT, "doc", home_id(owner))
    assert_refused(config, lambda: listings.listing(owner, document.id), "not_found", "Not found.",
                   None)


def test_the_flat_lists_hold_all_the_callers_folders_or_documents_by_title(services):
    owner, bob = new_user("alice"), new_user("bob")
    outer = add(owner, Node.FOLDER, "Outer", home_id(owner))
    inner = add(owner, Node.FOLDER, "inner", outer.id)
    add(owner, Node.DOCUMENT, "not a folder", inner.id)
    add(owner, Node.DOCUMENT, "A first", inbox_id(owner))
    add(bob, Node.FOLDER, "Bob's", home_id(bob))
    add(bob, Node.DOCUMENT, "bob's", home_id(bob))
    folders = listings.of_kind(owner, Node.FOLDER)
    assert [row.title for row in folders.fetch(0, 100)] == [".home", ".inbox", "inner", "Outer"]
    assert folders.count() == 4
    documents = listings.of_kind(owner, Node.DOCUMENT)
    assert [row.title for row in documents.fetch(0, 100)] == ["A first", "not a folder"]
    assert documents.count() == 2


def test_folder_detail_flat_folder_list_and_delete(alice):
    outer = make(alice, "folders", "Outer", alice.home_id)
    inner = make(alice, "folders", "inner", outer["id"])
    detail = alice.get(f"/api/folders/{inner['id']}/")
    assert detail.status_code == 200
    assert stable(detail.json()["data"]) == {
        "type": "folders", "id": inner["id"],
        "attributes": {"title": "inner", "tags": [], "breadcrumb": [
            [".home", alice.home_id], ["Outer", outer["id"]], ["inner", inner["id"]]],
            "access": "owner", "owner": "alice"},
        "relationships": {"parent": {"data": {"type": "folders", "id": outer["id"]}}},
    }
    listing = alice.get("/api/folders/").json()
    assert titles(listing) == [".home", ".inbox", "inner", "Outer"]
    assert listing["meta"]["pagination"]["count"] == 4
    response = alice.delete(f"/api/nodes/{outer['id']}/")
    assert response.status_code == 204 and response.content == b""
    assert alice.get(f"/api/folders/{inner['id']}/").json() == NOT_FOUND


# -- renaming -------------------------------------------------------------------------------------

def test_a_rename_and_a_documents_settings_write_only_what_they_may(services, config):
    owner = new_user("alice")
    folder = add(owner, Node.FOLDER, "Old", home_id(owner))
    renamed = tree.update_node(owner, folder.id, Node.FOLDER, {"title": "New"})
    stored = Node.get_by_id(folder.id)
    assert (renamed.title, stored.title) == ("New", "New")
    assert crumb(folder.id) == [[".home", home_id(owner)], ["New", folder.id]]
    assert stored.updated_at > folder.updated_at

    document = add(owner, Node.DOCUMENT, "doc", folder.id)
    tree.update_node(owner, document.id, Node.DOCUMENT, {"lang": "deu", "ocr": False, "size": 999})
    stored = Node.get_by_id(document.id)
    assert (stored.title, stored.lang, stored.ocr, stored.size) == ("doc", "deu", False, 0)

    for kind, attributes, code, detail, field in [
        (Node.DOCUMENT, {"title": ""}, "blank", "A title may not be blank.", "title"),
        (Node.FOLDER, {"title": "x"}, "conflict",
         'The resource type "folders" does not match `documents`.', "/data/type"),
        (Node.DOCUMENT, {"lang": "klingon"}, "invalid",
         "Unknown OCR language 'klingon'; installed languages: deu, eng (combine them with +, "
         "e.g. eng+deu).", "lang"),
    ]:
        assert_refused(config, partial(tree.update_node, owner, document.id, kind, attributes),
                       code, detail, field)


def test_a_rename_answers_the_node_and_a_refused_one_its_status_and_pointer(alice, config):
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
    ]:
        assert_error(alice.patch(f"/api/nodes/{document['id']}/", body), status, code, detail,
                     pointer)
    # A refusal for want of permission: a special folder.
    assert_error(alice.patch(f"/api/nodes/{alice.home_id}/", {"data": {
        "type": "folders", "attributes": {"title": "renamed"}}}), 403, "permission_denied",
        "The special folder .home cannot be renamed.")
    assert snapshot(config) == before


def test_special_folders_cannot_be_renamed_moved_or_deleted(services, config):
    owner = new_user("alice")
    target = add(owner, Node.FOLDER, "Target", home_id(owner))
    for special_id, title in ((home_id(owner), ".home"), (inbox_id(owner), ".inbox")):
        for call, verb in [
            (partial(tree.update_node, owner, special_id, Node.FOLDER, {"title": "renamed"}),
             "renamed"),
            (partial(trash.delete, services, owner, special_id), "deleted"),
            (partial(tree.move_nodes, owner, [special_id], target.id), "moved"),
        ]:
            assert_refused(config, call, "permission_denied",
                           f"The special folder {title} cannot be {verb}.", None)


# -- moving ---------------------------------------------------------------------------------------

def test_move_several_nodes_at_once(services):
    owner = new_user("alice")
    source = add(owner, Node.FOLDER, "Source", home_id(owner))
    target = add(owner, Node.FOLDER, "Target", home_id(owner))
    child = add(owner, Node.FOLDER, "Child", source.id)
    grandchild = add(owner, Node.DOCUMENT, "Grandchild", child.id)
    loose = add(owner, Node.DOCUMENT, "Loose", inbox_id(owner))
    moved = tree.move_nodes(owner, [child.id, loose.id], target.id)
    assert sorted((node.id, node.parent_id) for node in moved) == \
           sorted([(child.id, target.id), (loose.id, target.id)])
    assert child_titles(owner, target.id) == ["Child", "Loose"]
    assert child_titles(owner, source.id) == []
    # What was below the moved folder moved with it.
    assert crumb(grandchild.id) == [[".home", home_id(owner)], ["Target", target.id],
                                    ["Child", child.id], ["Grandchild", grandchild.id]]


def test_refused_moves_are_all_or_nothing(services, config):
    """The fast tier: nothing moves, not even the nodes that could; another user's nodes read as
    unknown ones."""
    owner, bob = new_user("alice"), new_user("bob")
    outer = add(owner, Node.FOLDER, "Outer", home_id(owner)).id
    inner = add(owner, Node.FOLDER, "Inner", outer).id
    document = add(owner, Node.DOCUMENT, "Doc", home_id(owner)).id
    bobs = add(bob, Node.FOLDER, "Bob's", home_id(bob)).id
    inbox = inbox_id(owner)
    for moved, target, code, detail, field in [
        ([document, UNKNOWN_ID], inbox, "not_found", "Not found.", None),
        ([document, bobs], inbox, "not_found", "Not found.", None),
        ([document], UNKNOWN_ID, "not_found", "Not found.", None),
        ([], UNKNOWN_ID, "not_found", "Not found.", None),  # nothing to move: still unknown
        ([], bobs, "not_found", "Not found.", None),
        ([document], bobs, "not_found", "Not found.", None),
        ([outer], document, "invalid",
         "The target is a document; nodes can only be moved into a folder.", "/target_parent/id"),
        ([document, outer], outer, "invalid", INTO_ITSELF, "/target_parent/id"),
        ([outer], inner, "invalid", INTO_ITSELF, "/target_parent/id"),
        ([f"00000000-0000-4000-8000-{n:012d}" for n in range(10_001)], outer, "invalid",
         "At most 10000 nodes can be moved at once; move them in parts.", "/nodes"),
    ]:
        assert_refused(config, partial(tree.move_nodes, owner, moved, target), code, detail,
                       field)


def test_a_move_answers_the_moved_nodes_and_a_refused_one_its_status_and_pointer(alice, bob,
                                                                                 config):
    """Through the API: the moved nodes as resources; what the route parses itself, and one case
    of each of the domain's refusals (another user's node is 404, as an unknown one)."""
    outer = make(alice, "folders", "Outer", alice.home_id)
    document = make(alice, "documents", "Doc", alice.home_id)
    bobs = make(bob, "folders", "Bob's", bob.home_id)
    before = snapshot(config)

    def move(ids, target):
        return alice.post("/api/nodes/move/", {"nodes": [{"id": i} for i in ids],
                                               "target_parent": {"id": target}}, media=JSON)

    for response, status, code, detail, pointer in [
        (move([document["id"], bobs["id"]], alice.inbox_id), 404, "not_found", "Not found.", None),
        (move([document["id"], outer["id"]], outer["id"]), 400, "invalid", INTO_ITSELF,
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
    ]:
        assert_error(response, status, code, detail, pointer, media=JSON)
    assert snapshot(config) == before

    response = move([document["id"]], outer["id"])
    assert response.status_code == 200
    assert response.headers["Content-Type"] == JSON
    moved = response.json()["data"]
    assert [(item["type"], item["id"], item["relationships"]) for item in moved] == [
        ("documents", document["id"], {"parent": {"data": {"type": "folders", "id": outer["id"]}}})]
    assert moved[0]["attributes"]["breadcrumb"] == [[".home", alice.home_id],
                                                    ["Outer", outer["id"]],
                                                    ["Doc", document["id"]]]


# -- deleting -------------------------------------------------------------------------------------

@pytest.mark.config(trash_days=0)  # with the trash, tests/domain/test_trash.py
def test_delete_without_a_trash_removes_the_whole_subtree(services, config):
    owner = new_user("alice")
    top = add(owner, Node.FOLDER, "Top", home_id(owner))
    middle = add(owner, Node.FOLDER, "Middle", top.id)
    leaf = add(owner, Node.DOCUMENT, "Leaf", middle.id)
    keep = add(owner, Node.DOCUMENT, "Keep", home_id(owner))
    trash.delete(services, owner, top.id)
    for node in (top, middle, leaf):
        assert_refused(config, partial(tree.owned_node, owner, node.id, node.kind), "not_found",
                       "Not found.", None)
    assert child_titles(owner, home_id(owner)) == ["Keep"]
    remaining = snapshot(config)["node"]
    assert not [row for row in remaining if top.id in row or middle.id in row or leaf.id in row]
    assert [row for row in remaining if keep.id in row]


def test_deleting_a_deep_tree_works(services, config):
    owner = new_user("alice")
    parent = home_id(owner)
    chain = []
    for depth in range(40):
        parent = add(owner, Node.FOLDER, f"level {depth}", parent).id
        chain.append(parent)
    assert [title for title, _ in crumb(chain[-1])] == \
        [".home"] + [f"level {depth}" for depth in range(40)]
    trash.delete(services, owner, chain[0])
    assert_refused(config, lambda: tree.owned_node(owner, chain[-1], Node.FOLDER), "not_found",
                   "Not found.", None)
    assert child_titles(owner, home_id(owner)) == []


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
