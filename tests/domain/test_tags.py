"""Tags (api.md, "Tags"): each user's own, in Papermerge 2's shapes; on nodes everywhere they
appear; as filters of listings and search; found by search; renamed and deleted everywhere at
once."""

from __future__ import annotations

import pytest

from dms.domain import tags
from tests.harness import samples
from tests.harness.client import JSON, NOT_FOUND, VND, assert_error
from tests.harness.database import execute_sql, query_sql, snapshot
from tests.harness.documents import make_folder, new_document, upload
from tests.harness.domaintier import assert_refused, new_user
from tests.harness.processes import config_args
from tests.harness.waiting import wait_indexed, wait_processed

DEFAULT_COLORS = {"bg_color": "#c41fff", "fg_color": "#FFFFFF"}


def tag_body(**attributes):
    return {"data": {"type": "tags", "attributes": attributes}}


def create_tag(client, name, **attributes):
    response = client.post("/api/tags/", tag_body(name=name, **attributes))
    assert response.status_code == 201, response.text
    return response.json()["data"]


def set_tags(client, node_id, names, method="POST"):
    return client.request(method, f"/api/nodes/{node_id}/tags/", json_body={"tags": names},
                          media=JSON)


def node_tags(client, document_id):
    return client.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]["tags"]


def labels(*names, **colors):
    return [{"name": name, **DEFAULT_COLORS, **colors} for name in names]


def test_create_list_change_and_delete_a_tag(alice, config):
    created = alice.post("/api/tags/", tag_body(name="paid"))
    assert created.status_code == 201 and created.headers["Content-Type"] == VND
    tag = created.json()["data"]
    assert tag == {"type": "tags", "id": tag["id"], "attributes": {
        "name": "paid", **DEFAULT_COLORS, "description": "", "pinned": False}}
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
        "pinned": False}
    assert alice.delete(f"/api/tags/{tag['id']}/").status_code == 204
    assert alice.get(f"/api/tags/{tag['id']}/").json() == NOT_FOUND


@pytest.mark.parametrize("attributes, code, detail, field", [
    ({}, "required", "A tag name is required.", "name"),
    ({"name": "  "}, "blank", "A tag name may not be blank.", "name"),
    ({"name": "a,b"}, "invalid", "A tag name may not contain commas, control characters or "
     "invisible formatting characters.", "name"),
    ({"name": "x" * 101}, "invalid", "A tag name has at most 100 characters.", "name"),
    ({"name": "ok", "bg_color": "red"}, "invalid", "bg_color must be a colour such as #c41fff.",
     "bg_color"),
    ({"name": "ok", "pinned": "yes"}, "invalid", "pinned must be true or false.", "pinned"),
    ({"name": "PAID"}, "invalid", "A tag with this name already exists.", "/data"),
])
def test_refused_tags_change_nothing(services, config, attributes, code, detail, field):
    """The fast tier (no server): the domain's refusal, its field and code."""
    owner = new_user("alice")
    tags.create_tag(owner, {"name": "paid"})
    assert_refused(config, lambda: tags.create_tag(owner, attributes), code, detail, field)


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


def test_node_tags_replace_append_and_remove(alice, bob, config):
    document_id = new_document(alice, "invoice")
    replaced = set_tags(alice, document_id, ["paid", "important", "Paid"])
    assert (replaced.status_code, replaced.headers["Content-Type"], replaced.json()) == (
        201, JSON, {"tags": ["important", "paid"]})
    assert node_tags(alice, document_id) == labels("important", "paid")
    appended = set_tags(alice, document_id, ["2024"], "PATCH")
    assert (appended.status_code, appended.json()) == (200, {"tags": ["2024", "important", "paid"]})
    assert set_tags(alice, document_id, ["important", "unknown"], "DELETE").status_code == 204
    assert node_tags(alice, document_id) == labels("2024", "paid")
    # The tags themselves stay; POST replaces what the node had.
    assert sorted(t["attributes"]["name"] for t in alice.get("/api/tags/").json()["data"]) == \
        ["2024", "important", "paid"]
    assert set_tags(alice, document_id, ["important"]).json() == {"tags": ["important"]}
    before = snapshot(config)
    assert set_tags(bob, document_id, ["x"]).json() == NOT_FOUND
    assert_error(set_tags(alice, document_id, "paid"), 400, "invalid",
                 "`tags` must be a list of tag names.", "/tags", media=JSON)
    assert_error(set_tags(alice, document_id, ["a,b"]), 400, "invalid",
                 "A tag name may not contain commas, control characters or invisible formatting "
                 "characters.", "/tags/0", media=JSON)
    assert snapshot(config) == before


def test_tags_show_on_nodes_everywhere(alice, config):
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


def test_listings_filter_by_tags(alice):
    folder = make_folder(alice, "Mixed", alice.home_id)
    both = new_document(alice, "both", folder)
    paid = new_document(alice, "paid only", folder)
    neither = new_document(alice, "neither", folder)
    set_tags(alice, both, ["paid", "2024"])
    set_tags(alice, paid, ["paid"])

    def titles(path, **params):
        return [d["attributes"]["title"] for d in alice.get(path, params=params).json()["data"]]

    assert titles(f"/api/nodes/{folder}/", tags="paid,2024") == ["both"]
    assert titles(f"/api/nodes/{folder}/", tags="paid,2024", tags_op="any") == ["both", "paid only"]
    assert titles(f"/api/nodes/{folder}/", tags="PAID") == ["both", "paid only"]
    assert titles(f"/api/nodes/{folder}/", tags="paid,nonexistent") == []
    assert titles(f"/api/nodes/{folder}/", tags="paid,nonexistent", tags_op="any") == \
        ["both", "paid only"]
    assert titles("/api/documents/", tags="2024") == ["both"]
    assert neither and len(titles(f"/api/nodes/{folder}/")) == 3
    assert_error(alice.get(f"/api/nodes/{folder}/", params={"tags": "paid", "tags_op": "some"}),
                 400, "invalid", "tags_op must be all or any.", "/tags_op")


def test_search_by_tag_name_filter_rename_and_delete(alice, config):
    invoice = new_document(alice, "Stadtwerke")
    upload(alice, invoice, "bill.txt", samples.text("electricity bill for march\n"))
    other = new_document(alice, "Telekom")
    upload(alice, other, "phone.txt", samples.text("phone bill for march\n"))
    for document_id in (invoice, other):
        assert wait_processed(alice, document_id)[-1] == "succeeded"
    set_tags(alice, invoice, ["paid", "energy"])
    set_tags(alice, other, ["unpaid"])

    def found(**params):
        wait_indexed(config)
        return [(r["title"], r["tags"]) for r in alice.get("/api/search/", params=params).json()]

    assert found(q="energy") == [("Stadtwerke", ["energy", "paid"])]  # a tag name finds its nodes
    assert found(q="bill", tags="paid") == [("Stadtwerke", ["energy", "paid"])]
    assert sorted(found(q="bill", tags="paid,unpaid", tags_op="any")) == \
        [("Stadtwerke", ["energy", "paid"]), ("Telekom", ["unpaid"])]
    assert found(q="bill", tags="paid,unpaid") == []
    assert sorted(found(tags="paid,unpaid", tags_op="any")) == \
        [("Stadtwerke", ["energy", "paid"]), ("Telekom", ["unpaid"])]
    energy = next(t for t in alice.get("/api/tags/").json()["data"]
                  if t["attributes"]["name"] == "energy")
    alice.patch(f"/api/tags/{energy['id']}/", tag_body(name="utilities"))
    assert found(q="utilities") == [("Stadtwerke", ["paid", "utilities"])]
    assert found(q="energy") == []
    assert alice.get(f"/api/documents/{invoice}/").json()["data"]["attributes"]["tags"] == \
        labels("paid", "utilities")
    alice.delete(f"/api/tags/{energy['id']}/")
    assert found(q="utilities") == []
    assert alice.get(f"/api/documents/{invoice}/").json()["data"]["attributes"]["tags"] == \
        labels("paid")


def test_search_without_words_lists_recent_documents(alice, config):
    first = new_document(alice, "first")
    second = new_document(alice, "second")
    make_folder(alice, "a folder", alice.home_id)
    alice.patch(f"/api/nodes/{first}/", {"data": {"type": "documents",
                                                  "attributes": {"title": "first again"}}})
    results = alice.get("/api/search/").json()
    assert [(r["title"], r["node_type"], r["highlight"]) for r in results] == [
        ("first again", "document", None), ("second", "document", None)]
    assert [r["title"] for r in alice.get("/api/search/", params={"limit": 1}).json()] == \
        ["first again"]
    assert second in [r["id"] for r in results]


def test_deleting_a_user_deletes_their_tags(admin, make_user, config):
    carol = make_user("carol")
    create_tag(carol, "mine")
    admin.delete(f"/api/users/{carol.user_id}/")
    assert snapshot(config)["tag"] == []


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


def history(client, node_id) -> list[tuple[str, str | None, dict]]:
    data = client.get(f"/api/nodes/{node_id}/history/?page[size]=100").json()["data"]
    return [(event["attributes"]["action"], (event["attributes"]["actor"] or {}).get("username"),
             event["attributes"]["details"]) for event in data]


def test_deleting_a_tag_writes_untagged_on_every_node_it_labelled(alice, config):
    folder = make_folder(alice, "Bills", alice.home_id)
    labelled = [folder, new_document(alice, "a", folder), new_document(alice, "b")]
    other = new_document(alice, "c")
    for node_id in labelled:
        assert set_tags(alice, node_id, ["paid", "2026"]).status_code == 201
    assert set_tags(alice, other, ["2026"]).status_code == 201
    assert alice.delete(f"/api/nodes/{labelled[2]}/").status_code == 204  # in the trash too
    paid = next(tag for tag in alice.get("/api/tags/").json()["data"]
                if tag["attributes"]["name"] == "paid")
    assert alice.delete(f"/api/tags/{paid['id']}/").status_code == 204
    for node_id in labelled:
        assert history(alice, node_id)[0] == ("untagged", "alice", {"tags": ["paid"]})
    assert [action for action, _, _ in history(alice, other)] == ["tagged", "created"]
    assert query_sql(config, "SELECT count(*) FROM event WHERE action = 'untagged'") == [(3,)]


@pytest.mark.slow
def test_a_tag_on_100000_nodes_is_deleted_with_an_event_for_each(alice, config):
    """One INSERT ... SELECT writes the events, in the deletion's transaction; nothing about
    each node passes through Python. On PostgreSQL 10,000: its search triggers run for each
    node linked and unlinked (about 1 ms each here), which makes 100,000 take minutes with or
    without the events (their INSERT takes a fraction of a second)."""
    count = 10_000 if config.database_url else 100_000
    tag = create_tag(alice, "bulk")
    execute_sql(config, """
        INSERT INTO node (id, owner_id, parent_id, kind, title, title_sort, created_at,
                          updated_at)
        WITH RECURSIVE numbers(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM numbers WHERE i < ?)
        SELECT 'bulk-' || i, ?, ?, 'folder', 'F' || i, 'f' || i, '2026-01-01 00:00:00.000000',
               '2026-01-01 00:00:00.000000' FROM numbers""", count, alice.user_id, alice.home_id)
    execute_sql(config, "INSERT INTO node_tag (node_id, tag_id) SELECT id, ? FROM node "
                        "WHERE id LIKE 'bulk-%'", tag["id"])
    assert alice.delete(f"/api/tags/{tag['id']}/").status_code == 204
    assert query_sql(config, "SELECT count(*), count(DISTINCT node_id), min(details), "
                             "max(details) FROM event WHERE action = 'untagged'") == \
        [(count, count, '{"tags":["bulk"]}', '{"tags":["bulk"]}')]
    assert query_sql(config, "SELECT count(*) FROM node_tag") == [(0,)]
