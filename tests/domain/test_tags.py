"""Tags (api.md, "Tags"): each user's own, in Papermerge 2's shapes; on nodes everywhere they
appear; as filters of listings and search; found by search; renamed and deleted everywhere at
once.

The rules on the fast tier (the domain's functions, no server; `reading` where search must find
what was read): refused tags and refused lists of a node's tags change nothing, a node's tags
replaced, added to and taken off, listings and search filtered by tags, search following a tag's
rename and deletion, a deleted user's tags gone, a deleted tag's `untagged` events. Through the
API what a client sees: the resources and their statuses, a refusal's pointer, another user's
tags not found, anonymous 401, the tags on every representation of a node, the filters as query
parameters. A backup restored elsewhere keeps the tags (`dms backup` and `dms restore` run as
subprocesses)."""

from __future__ import annotations

import pytest

from dms import search
from dms.db.models import Node
from dms.domain import accounts, history, listings, tags, trash, tree
from tests.harness import samples
from tests.harness.client import JSON, NOT_FOUND, VND, assert_error
from tests.harness.database import execute_sql, query_sql, snapshot
from tests.harness.documents import make_folder, new_document
from tests.harness.domaintier import (
    assert_refused,
    home_id,
    new_folder,
    new_user,
    read_document,
)
from tests.harness.domaintier import new_document as create_document
from tests.harness.processes import config_args
from tests.harness.waiting import wait_indexed

DEFAULT_COLORS = {"bg_color": "#c41fff", "fg_color": "#FFFFFF"}
REFUSED_CHARACTERS = ("A tag name may not contain commas, control characters or invisible "
                      "formatting characters.")


def tag_body(**attributes):
    return {"data": {"type": "tags", "attributes": attributes}}


def create_tag(client, name, **attributes):
    response = client.post("/api/tags/", tag_body(name=name, **attributes))
    assert response.status_code == 201, response.text
    return response.json()["data"]


def set_tags(client, node_id, names, method="POST"):
    return client.request(method, f"/api/nodes/{node_id}/tags/", json_body={"tags": names},
                          media=JSON)


def labels(*names, **colors):
    return [{"name": name, **DEFAULT_COLORS, **colors} for name in names]


# A tag that files nothing by itself (migration 0029: matching and inbox tags).
NOT_FILING = {"match": "", "matching_algorithm": "none", "is_insensitive": True,
              "is_inbox_tag": False, "parent": None}


def labels_of(node_id) -> list[dict]:
    """The node's tags as every representation of it shows them to its owner."""
    return tags.tags_of([node_id], Node.get_by_id(node_id).owner_id)[node_id]


def named(user, name):
    """The user's tag called `name`."""
    return next(tag for tag in tags.tags_of_user(user) if tag.name == name)


# -- through the API ------------------------------------------------------------------------------

def test_create_list_change_and_delete_a_tag(alice, config):
    created = alice.post("/api/tags/", tag_body(name="paid"))
    assert created.status_code == 201 and created.headers["Content-Type"] == VND
    tag = created.json()["data"]
    assert tag == {"type": "tags", "id": tag["id"], "attributes": {
        "name": "paid", **DEFAULT_COLORS, "description": "", "pinned": False, **NOT_FILING,
        "document_count": 0}}
    other = create_tag(alice, "important", bg_color="#ff0000", fg_color="#000", pinned=True,
                       description="Read first")
    listing = alice.get("/api/tags/").json()
    assert [t["attributes"]["name"] for t in listing["data"]] == ["important", "paid"]
    assert listing["meta"]["pagination"] == {"page": 1, "pages": 1, "count": 2}
    assert alice.get(f"/api/tags/{other['id']}/").json() == {"data": other}
    changed = alice.patch(f"/api/tags/{tag['id']}/", tag_body(name="Paid 2024", bg_color="#00ff00"))
    assert changed.status_code == 200
    assert changed.json()["data"]["attributes"] == {
        "name": "Paid 2024", "bg_color": "#00ff00", "fg_color": "#FFFFFF", "description": "",
        "pinned": False, **NOT_FILING, "document_count": 0}
    assert alice.delete(f"/api/tags/{tag['id']}/").status_code == 204
    assert alice.get(f"/api/tags/{tag['id']}/").json() == NOT_FOUND


def test_a_refused_tag_is_answered_with_a_pointer(alice, config):
    """Through the API: the envelope; a field as its pointer, a clash with another tag as /data."""
    create_tag(alice, "paid")
    before = snapshot(config)
    assert_error(alice.post("/api/tags/", tag_body(name="ok", bg_color="red")), 400, "invalid",
                 "bg_color must be a colour such as #c41fff.", "/data/attributes/bg_color")
    assert_error(alice.post("/api/tags/", tag_body(name="PAID")), 400, "invalid",
                 "A tag with this name already exists.", "/data")
    assert snapshot(config) == before


def test_another_users_tags_do_not_exist_for_them(alice, bob, admin, anon, config):
    tag = create_tag(alice, "private")
    before = snapshot(config)
    for stranger in (bob, admin):
        assert stranger.get(f"/api/tags/{tag['id']}/").json() == NOT_FOUND
        assert stranger.patch(f"/api/tags/{tag['id']}/", tag_body(name="x")).json() == NOT_FOUND
        assert stranger.delete(f"/api/tags/{tag['id']}/").json() == NOT_FOUND
        assert stranger.get("/api/tags/").json()["data"] == []
    create_tag(bob, "private")  # names are unique per user only
    assert_error(anon.get("/api/tags/"), 401, "not_authenticated",
                 "Authentication credentials were not provided.")
    assert snapshot(config)["tag"] != before["tag"]  # only bob's new tag was added
    assert [t["attributes"]["name"] for t in alice.get("/api/tags/").json()["data"]] == ["private"]


def test_a_nodes_tags_are_answered_with_their_names_and_refusals_point_into_the_body(
        alice, bob, config):
    """Through the API: POST answers 201, PATCH 200 (both the node's tag names, in JSON), DELETE
    204; another user's node is not found; a refused list is answered with its pointer."""
    document_id = new_document(alice, "invoice")
    replaced = set_tags(alice, document_id, ["paid", "important", "Paid"])
    assert (replaced.status_code, replaced.headers["Content-Type"], replaced.json()) == (
        201, JSON, {"tags": ["important", "paid"]})
    appended = set_tags(alice, document_id, ["2024"], "PATCH")
    assert (appended.status_code, appended.json()) == (200, {"tags": ["2024", "important", "paid"]})
    removed = set_tags(alice, document_id, ["important", "unknown"], "DELETE")
    assert (removed.status_code, removed.content) == (204, b"")
    before = snapshot(config)
    assert set_tags(bob, document_id, ["x"]).json() == NOT_FOUND
    assert_error(set_tags(alice, document_id, "paid"), 400, "invalid",
                 "`tags` must be a list of tag names.", "/tags", media=JSON)
    assert_error(set_tags(alice, document_id, ["a,b"]), 400, "invalid", REFUSED_CHARACTERS,
                 "/tags/0", media=JSON)
    assert snapshot(config) == before


def test_tags_show_on_nodes_everywhere_and_filter_them_as_query_parameters(alice, config):
    folder = make_folder(alice, "Bills", alice.home_id)
    document_id = new_document(alice, "gas", folder)
    red = create_tag(alice, "urgent", bg_color="#ff0000")
    set_tags(alice, document_id, ["urgent", "paid"])
    set_tags(alice, folder, ["paid"])
    expected = [{"name": "paid", **DEFAULT_COLORS},
                {"name": "urgent", "bg_color": "#ff0000", "fg_color": "#FFFFFF"}]
    assert red["attributes"]["name"] == "urgent"
    listed = alice.get(f"/api/nodes/{folder}/").json()["data"][0]
    assert listed["attributes"]["tags"] == expected
    assert alice.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]["tags"] == \
        expected
    assert alice.get("/api/documents/").json()["data"][0]["attributes"]["tags"] == expected
    assert alice.get(f"/api/folders/{folder}/").json()["data"]["attributes"]["tags"] == \
        [{"name": "paid", **DEFAULT_COLORS}]
    legacy = alice.get(f"/api/document/{document_id}").json()
    assert legacy["tags"] == expected
    assert alice.get("/api/documents").json()[0]["tags"] == expected

    # `tags` and `tags_op` filter the listings and search (their rules: the fast tier's tests).
    def ids(path, **params):
        return [item["id"] for item in alice.get(path, params=params).json()["data"]]

    assert ids(f"/api/nodes/{alice.home_id}/", tags="PAID,urgent", tags_op="any") == [folder]
    assert ids(f"/api/nodes/{folder}/", tags="urgent,nonexistent") == []
    assert ids("/api/documents/", tags="urgent") == [document_id]
    assert [(r["title"], r["tags"]) for r in alice.get(
        "/api/search/", params={"tags": "urgent,nonexistent", "tags_op": "any"}).json()] == \
        [("gas", ["paid", "urgent"])]
    assert_error(alice.get(f"/api/nodes/{folder}/", params={"tags": "paid", "tags_op": "some"}),
                 400, "invalid", "tags_op must be all or any.", "/tags_op")


def test_tags_survive_a_backup_and_restore(alice, config, tmp_path):
    import sqlite3
    import subprocess
    import sys

    document_id = new_document(alice, "kept")
    create_tag(alice, "archive", bg_color="#123456")
    set_tags(alice, document_id, ["archive", "2024"])
    backup = subprocess.run([sys.executable, "-m", "dms", "backup", str(tmp_path / "b.zip"),
                             *config_args(config)], capture_output=True, text=True)
    assert backup.returncode == 0, backup.stderr
    restored = tmp_path / "restored"
    restore = subprocess.run([sys.executable, "-m", "dms", "restore", str(tmp_path / "b.zip"),
                              "--data-dir", str(restored)], capture_output=True, text=True)
    assert restore.returncode == 0, restore.stderr
    connection = sqlite3.connect(restored / "dms.db")
    assert sorted(connection.execute(
        "SELECT t.name, t.bg_color FROM node_tag AS nt JOIN tag AS t ON t.id = nt.tag_id "
        "WHERE nt.node_id = ?", (document_id,))) == [("2024", "#c41fff"), ("archive", "#123456")]
    connection.close()


# -- the fast tier --------------------------------------------------------------------------------

def test_refused_tags_change_nothing(services, config):
    """The domain's refusal, its code, sentence and field (the pointer's tail through the API)."""
    owner = new_user("alice")
    tags.create_tag(owner, {"name": "paid"})
    cases = [
        ({}, "required", "A tag name is required.", "name"),
        ({"name": "  "}, "blank", "A tag name may not be blank.", "name"),
        ({"name": "a,b"}, "invalid", REFUSED_CHARACTERS, "name"),
        ({"name": "x" * 101}, "invalid", "A tag name has at most 100 characters.", "name"),
        ({"name": "ok", "bg_color": "red"}, "invalid",
         "bg_color must be a colour such as #c41fff.", "bg_color"),
        ({"name": "ok", "pinned": "yes"}, "invalid", "pinned must be true or false.", "pinned"),
        ({"name": "PAID"}, "invalid", "A tag with this name already exists.", "/data"),
    ]
    for attributes, code, detail, field in cases:
        assert_refused(config, lambda attributes=attributes: tags.create_tag(owner, attributes),
                       code, detail, field)


def test_node_tags_replace_append_and_remove(services, config):
    alice = new_user("alice")
    document_id = create_document(services, alice, "invoice")
    assert tags.change_node_tags(alice, document_id, ["paid", "important", "Paid"],
                                 "replace") == ["important", "paid"]
    assert labels_of(document_id) == labels("important", "paid")
    assert tags.change_node_tags(alice, document_id, ["2024"], "append") == \
        ["2024", "important", "paid"]
    assert tags.change_node_tags(alice, document_id, ["important", "unknown"], "remove") == \
        ["2024", "paid"]
    assert labels_of(document_id) == labels("2024", "paid")
    # The tags themselves stay; replacing replaces what the node had.
    assert sorted(tag.name for tag in tags.tags_of_user(alice)) == ["2024", "important", "paid"]
    assert tags.change_node_tags(alice, document_id, ["important"], "replace") == ["important"]
    bob = new_user("bob")
    cases = [
        (bob, ["x"], "not_found", "Not found.", None),
        (alice, "paid", "invalid", "`tags` must be a list of tag names.", "tags"),
        (alice, ["a,b"], "invalid", REFUSED_CHARACTERS, "/tags/0"),
    ]
    for user, names, code, detail, field in cases:
        assert_refused(config, lambda user=user, names=names: tags.change_node_tags(
            user, document_id, names, "replace"), code, detail, field)


def test_listings_filter_by_tags(services, config):
    alice = new_user("alice")
    folder = new_folder(services, alice, "Mixed", home_id(alice))
    both = create_document(services, alice, "both", folder)
    paid = create_document(services, alice, "paid only", folder)
    neither = create_document(services, alice, "neither", folder)
    tags.change_node_tags(alice, both, ["paid", "2024"], "replace")
    tags.change_node_tags(alice, paid, ["paid"], "replace")

    def titles(**filters):
        _, children = listings.listing(alice, folder, **filters)
        return [node.title for node in children.fetch(0, 100)]

    assert titles(tags="paid,2024") == ["both"]
    assert titles(tags="paid,2024", tags_op="any") == ["both", "paid only"]
    assert titles(tags="PAID") == ["both", "paid only"]
    assert titles(tags="paid,nonexistent") == []
    assert titles(tags="paid,nonexistent", tags_op="any") == ["both", "paid only"]
    assert [node.title for node in listings.of_kind(alice, Node.DOCUMENT, "2024").fetch(0, 100)] \
        == ["both"]
    assert neither and len(titles()) == 3
    assert_refused(config, lambda: listings.listing(alice, folder, tags="paid", tags_op="some"),
                   "invalid", "tags_op must be all or any.", "/tags_op")


def test_search_by_tag_name_filter_rename_and_delete(reading, config):
    alice = new_user("alice")
    invoice = read_document(reading, alice, "Stadtwerke", "bill.txt",
                            samples.text("electricity bill for march\n"))
    other = read_document(reading, alice, "Telekom", "phone.txt",
                          samples.text("phone bill for march\n"))
    tags.change_node_tags(alice, invoice, ["paid", "energy"], "replace")
    tags.change_node_tags(alice, other, ["unpaid"], "replace")

    def found(text=None, **filters):
        wait_indexed(config)
        return [(r["title"], r["tags"]) for r in search.query(reading.search, alice, text,
                                                               **filters)]

    assert found("energy") == [("Stadtwerke", ["energy", "paid"])]  # a tag name finds its nodes
    assert found("bill", tags="paid") == [("Stadtwerke", ["energy", "paid"])]
    assert sorted(found("bill", tags="paid,unpaid", tags_op="any")) == \
        [("Stadtwerke", ["energy", "paid"]), ("Telekom", ["unpaid"])]
    assert found("bill", tags="paid,unpaid") == []
    assert sorted(found(tags="paid,unpaid", tags_op="any")) == \
        [("Stadtwerke", ["energy", "paid"]), ("Telekom", ["unpaid"])]
    energy = named(alice, "energy")
    tags.update_tag(alice, energy.id, {"name": "utilities"})
    assert found("utilities") == [("Stadtwerke", ["paid", "utilities"])]
    assert found("energy") == []
    assert labels_of(invoice) == labels("paid", "utilities")
    tags.delete_tag(alice, energy.id)
    assert found("utilities") == []
    assert labels_of(invoice) == labels("paid")


def test_search_without_words_lists_recent_documents(services):
    alice = new_user("alice")
    first = create_document(services, alice, "first")
    second = create_document(services, alice, "second")
    new_folder(services, alice, "a folder", home_id(alice))
    tree.update_node(alice, first, Node.DOCUMENT, {"title": "first again"})
    results = search.query(services.search, alice, None)
    assert [(r["title"], r["node_type"], r["highlight"]) for r in results] == [
        ("first again", "document", None), ("second", "document", None)]
    assert [r["title"] for r in search.query(services.search, alice, None, "1")] == \
        ["first again"]
    assert second in [r["id"] for r in results]


def test_deleting_a_user_deletes_their_tags(services, root, config):
    carol = new_user("carol")
    tags.create_tag(carol, {"name": "mine"})
    accounts.delete_user_by(services, root, carol.id)
    assert snapshot(config)["tag"] == []


def events(user, node_id) -> list[tuple[str, str | None, dict]]:
    """(action, actor's username, details) of the node's history, newest first."""
    return [(row.action, row.actor_username, row.details)
            for row in history.history_of(user, node_id).fetch(0, 100)]


def test_deleting_a_tag_writes_untagged_on_every_node_it_labelled(services, config):
    alice = new_user("alice")
    folder = new_folder(services, alice, "Bills", home_id(alice))
    labelled = [folder, create_document(services, alice, "a", folder),
                create_document(services, alice, "b")]
    other = create_document(services, alice, "c")
    for node_id in labelled:
        tags.change_node_tags(alice, node_id, ["paid", "2026"], "replace")
    tags.change_node_tags(alice, other, ["2026"], "replace")
    trash.delete(services, alice, labelled[2])  # in the trash too
    tags.delete_tag(alice, named(alice, "paid").id)
    for node_id in labelled:
        assert events(alice, node_id)[0] == ("untagged", "alice", {"tags": ["paid"]})
    assert [action for action, _, _ in events(alice, other)] == ["tagged", "created"]
    assert query_sql(config, "SELECT count(*) FROM event WHERE action = 'untagged'") == [(3,)]


@pytest.mark.slow
def test_a_tag_on_100000_nodes_is_deleted_with_an_event_for_each(services, config):
    """One INSERT ... SELECT writes the events, in the deletion's transaction; nothing about
    each node passes through Python. On PostgreSQL 10,000: its search triggers run for each
    node linked and unlinked (about 1 ms each here), which makes 100,000 take minutes with or
    without the events (their INSERT takes a fraction of a second)."""
    count = 10_000 if config.database_url else 100_000
    alice = new_user("alice")
    tag = tags.create_tag(alice, {"name": "bulk"})
    execute_sql(config, """
        INSERT INTO node (id, owner_id, parent_id, kind, title, title_sort, created_at,
                          updated_at)
        WITH RECURSIVE numbers(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM numbers WHERE i < ?)
        SELECT 'bulk-' || i, ?, ?, 'folder', 'F' || i, 'f' || i, '2026-01-01 00:00:00.000000',
               '2026-01-01 00:00:00.000000' FROM numbers""", count, alice.id, home_id(alice))
    execute_sql(config, "INSERT INTO node_tag (node_id, tag_id) SELECT id, ? FROM node "
                        "WHERE id LIKE 'bulk-%'", tag.id)
    tags.delete_tag(alice, tag.id)
    assert query_sql(config, "SELECT count(*), count(DISTINCT node_id), min(details), "
                             "max(details) FROM event WHERE action = 'untagged'") == \
        [(count, count, '{"tags":["bulk"]}', '{"tags":["bulk"]}')]
    assert query_sql(config, "SELECT count(*) FROM node_tag") == [(0,)]
