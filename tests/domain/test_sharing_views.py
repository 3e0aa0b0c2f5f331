"""What someone sees of what is shared with them (api.md §21), on both engines: their `.shared`
folder (named by GET /users/me/, listed with .home and .inbox) lists the roots shared with them,
directly or through a group; every node shows the caller's role and its owner; a shared node's
breadcrumb starts at `.shared` and shows none of the owner's folders above the shared one; the
flat lists and search include shared documents and filter them by owner; `.shared` itself
cannot be changed, nor anything made in it."""

from __future__ import annotations

import pytest

from tests.harness import samples
from tests.harness.client import NOT_FOUND, assert_error
from tests.harness.database import snapshot
from tests.harness.documents import create_node, make_folder, upload_accepted
from tests.harness.waiting import wait_for, wait_processed


@pytest.fixture
def household(alice, bob, admin, make_user):
    """alice's .home/Papers/Family/policy (Family shared with the group Household: bob, carol)
    and .home/Papers/letter (shared with bob alone); bob's own .home/notes."""
    carol = make_user("carol")
    group = admin.post("/api/groups/", {"data": {"type": "groups", "attributes": {
        "name": "Household", "members": [bob.user_id, carol.user_id]}}}).json()["data"]["id"]
    papers = make_folder(alice, "Papers", alice.home_id)
    family = make_folder(alice, "Family", papers)
    policy = create_node(alice, "documents", "policy", family)
    letter = create_node(alice, "documents", "letter", papers)
    notes = create_node(bob, "documents", "notes", bob.home_id)
    for document, client, words in ((policy, alice, "insurance policy"),
                                    (letter, alice, "insurance letter"),
                                    (notes, bob, "insurance notes")):
        upload_accepted(client, document, "text.pdf", samples.pdf([words * 20]))
        assert wait_processed(client, document)[-1] == "succeeded"
    assert alice.post(f"/api/nodes/{family}/access/",
                      {"group": group, "role": "viewer"}).status_code == 201
    assert alice.post(f"/api/nodes/{letter}/access/",
                      {"username": "bob", "role": "editor"}).status_code == 201
    return {"alice": alice, "bob": bob, "carol": carol, "admin": admin, "group": group,
            "papers": papers, "family": family, "policy": policy, "letter": letter,
            "notes": notes}


def seen(resource: dict) -> tuple:
    attributes = resource["attributes"]
    parent = resource["relationships"]["parent"]["data"]
    return (attributes["title"], attributes["access"], attributes["owner"],
            attributes["breadcrumb"], parent and parent["id"])


def test_shared_with_me_lists_what_others_share_from_where_it_is_shared(household):
    h = household
    bob, carol = h["bob"], h["carol"]
    shared = bob.shared_id
    assert [seen(node) for node in bob.get("/api/nodes/").json()["data"]] == [
        (".home", "owner", "bob", [[".home", bob.home_id]], None),
        (".inbox", "owner", "bob", [[".inbox", bob.inbox_id]], None),
        (".shared", "owner", "bob", [[".shared", shared]], None)]
    assert seen(bob.get(f"/api/folders/{shared}/").json()["data"]) == \
        (".shared", "owner", "bob", [[".shared", shared]], None)
    listed = bob.get(f"/api/nodes/{shared}/").json()
    assert [seen(node) for node in listed["data"]] == [
        ("Family", "viewer", "alice", [[".shared", shared], ["Family", h["family"]]], shared),
        ("letter", "editor", "alice", [[".shared", shared], ["letter", h["letter"]]], shared)]
    assert listed["meta"]["pagination"]["count"] == 2
    # Inside: the path from .shared; nothing of alice's .home/Papers shows.
    inside = bob.get(f"/api/nodes/{h['family']}/").json()["data"]
    assert [seen(node) for node in inside] == [
        ("policy", "viewer", "alice",
         [[".shared", shared], ["Family", h["family"]], ["policy", h["policy"]]], h["family"])]
    # Through the group only: carol sees Family, not the letter.
    assert [node["attributes"]["title"] for node in
            carol.get(f"/api/nodes/{carol.shared_id}/").json()["data"]] == ["Family"]
    # alice's own view is unchanged; another user's .shared is unknown to her.
    assert seen(h["alice"].get(f"/api/documents/{h['policy']}/").json()["data"]) == (
        "policy", "owner", "alice",
        [[".home", h["alice"].home_id], ["Papers", h["papers"]], ["Family", h["family"]],
         ["policy", h["policy"]]], h["family"])
    assert h["alice"].get(f"/api/nodes/{shared}/").json() == NOT_FOUND
    assert h["alice"].get(f"/api/nodes/{h['papers']}/").status_code == 200


def test_lists_and_search_include_shared_documents_and_filter_by_owner(household):
    h = household
    bob = h["bob"]

    def titles(path: str) -> list[str]:
        return [node["attributes"]["title"] for node in bob.get(path).json()["data"]]

    assert titles("/api/documents/") == ["letter", "notes", "policy"]
    assert titles("/api/documents/?owner=me") == ["notes"]
    assert titles("/api/documents/?owner=others") == ["letter", "policy"]
    assert titles("/api/documents/?owner=alice") == ["letter", "policy"]
    assert titles("/api/documents/?owner=nobody") == []
    assert titles("/api/folders/") == [".home", ".inbox", "Family"]
    assert titles(f"/api/nodes/{bob.shared_id}/?owner=me") == []
    assert_error(bob.get("/api/documents/?owner=" + "x" * 151), 400, "invalid",
                 "owner is me, others or a username.", "/owner")

    def found(query: str) -> list[tuple]:
        return sorted((hit["title"], hit["owner"], hit["access"], hit["breadcrumb"]) for hit in
                      bob.get(f"/api/search/?q={query}").json())

    expected = [("letter", "alice", "editor", [".shared", "letter"]),
                ("notes", "bob", "owner", [".home", "notes"]),
                ("policy", "alice", "viewer", [".shared", "Family", "policy"])]
    # alice's documents are found once the index holds them (bob's own search waits only for
    # his own changes).
    wait_for(lambda: found("insurance") == expected, timeout=30,
             message=f"search found {found('insurance')}")
    assert found("insurance&owner=others") == [expected[0], expected[2]]
    assert [hit["title"] for hit in h["carol"].get("/api/search/?q=insurance").json()] == \
        ["policy"]
    assert sorted(hit["title"] for hit in bob.get("/api/search/").json()) == \
        ["letter", "notes", "policy"]  # without words: the most recently changed


def test_nothing_is_made_in_or_moved_into_shared_and_it_cannot_be_changed(household, config):
    h = household
    bob, shared = h["bob"], h["bob"].shared_id
    before = snapshot(config)
    folder = {"type": "folders", "attributes": {"title": "x"}}
    assert_error(bob.post("/api/nodes/", {"data": {**folder, "relationships": {"parent": {
        "data": {"type": "folders", "id": shared}}}}}), 400, "does_not_exist",
        f"Invalid parent {shared!r}: the folder does not exist.", "/data/relationships/parent")
    for method, path, body in (
            ("PATCH", f"/api/folders/{shared}/", {"data": {**folder, "id": shared}}),
            ("DELETE", f"/api/nodes/{shared}/", None),
            ("POST", "/api/nodes/move/", {"nodes": [{"id": h["notes"]}],
                                          "target_parent": {"id": shared}}),
            ("POST", f"/api/nodes/{shared}/access/", {"username": "carol", "role": "viewer"}),
            ("POST", f"/api/nodes/{shared}/tags/", {"tags": ["x"]}),
            ("GET", f"/api/nodes/{shared}/history/", None)):
        assert bob.request(method, path, json_body=body).json() == NOT_FOUND, path
    assert snapshot(config) == before


def test_a_change_of_a_groups_members_counts_at_once(household):
    h = household
    carol, admin = h["carol"], h["admin"]
    assert carol.get(f"/api/documents/{h['policy']}/").status_code == 200
    response = admin.patch(f"/api/groups/{h['group']}/", {"data": {
        "type": "groups", "attributes": {"members": [h["bob"].user_id]}}})
    assert response.status_code == 200, response.text
    assert carol.get(f"/api/documents/{h['policy']}/").json() == NOT_FOUND
    assert carol.get(f"/api/nodes/{carol.shared_id}/").json()["data"] == []
    assert carol.get("/api/search/?q=insurance").json() == []
    assert [node["attributes"]["title"] for node in
            h["bob"].get(f"/api/nodes/{h['bob'].shared_id}/").json()["data"]] == \
        ["Family", "letter"]


def test_a_list_of_ones_own_and_shared_documents_pages_and_sorts_as_one(household):
    h = household
    bob = h["bob"]
    for title in ("apple", "zebra", "mango"):
        create_node(bob, "documents", title, bob.home_id)
    create_node(h["alice"], "documents", "kiwi", h["family"])

    def titles(query: str) -> list[str]:
        return [node["attributes"]["title"] for node in
                bob.get(f"/api/documents/?{query}").json()["data"]]

    everything = ["apple", "kiwi", "letter", "mango", "notes", "policy", "zebra"]
    assert titles("page[size]=100") == everything
    assert [title for number in range(1, 8) for title in
            titles(f"page[size]=1&page[number]={number}")] == everything
    assert titles("page[size]=3&page[number]=2") == everything[3:6]
    assert titles("page[size]=100&sort=-title") == everything[::-1]
    body = bob.get("/api/documents/?page[size]=2&page[number]=4").json()
    assert ([node["attributes"]["title"] for node in body["data"]], body["meta"]) == \
        (["zebra"], {"pagination": {"page": 4, "pages": 4, "count": 7}})
