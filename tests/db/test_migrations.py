"""Schema migrations: a data dir made by an older version upgrades in place and keeps its rows."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from dms import db
from dms.config import Config
from dms.db import schema
from dms.domain.credentials import hash_password
from dms.web.server import Server
from tests.harness.client import Client
from tests.harness.olddata import (
    FOLDER_ID,
    HOME_ID,
    SECRET,
    STAMP,
    USER_ID,
    make_data_dir_at_migration_1,
)
from tests.harness.waiting import wait_indexed, wait_served

# Upgrades SQLite files made by earlier versions.
# Sockets (pytest-socket): servers on upgraded data dirs, asked over HTTP.
pytestmark = [pytest.mark.sqlite_only, pytest.mark.enable_socket]


def test_every_migration_applies_in_order_and_is_recorded(tmp_path):
    path = tmp_path / "dms.db"
    db.open_database(path)
    assert schema.schema_version() == 0  # opening does not migrate
    schema.migrate_schema()
    names = sorted(p.stem for p in schema.migrations_dir().glob("[0-9]*.py"))
    assert set(schema.migration_runner().applied()) == set(names)
    assert schema.schema_version() == int(names[-1].split("_")[0])
    # A second start applies nothing.
    assert schema.migration_runner().up() == []
    db.database.close()


def test_a_data_dir_from_schema_1_starts_and_keeps_its_rows(tmp_path, config):
    make_data_dir_at_migration_1(config.db_path)
    server = Server(config)
    assert server.generated_password is None  # a user existed: no first superuser made
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        assert schema.schema_version() >= 2
        client = Client(server.url, SECRET)  # the old token still works
        me = client.get("/api/users/me/").json()["data"]
        assert me["id"] == USER_ID
        assert me["attributes"]["email"] == "old@example.org"
        assert me["attributes"]["date_joined"] == "2025-01-02T03:04:05.123456Z"
        assert me["relationships"]["home_folder"]["data"]["id"] == HOME_ID
        listing = client.get(f"/api/nodes/{HOME_ID}/").json()
        assert [(n["id"], n["attributes"]["title"]) for n in listing["data"]] == \
            [(FOLDER_ID, "Ärchive")]
        assert Client(server.url).login("old", "old-password").user_id == USER_ID
        # The new columns got their values: the sort key is the case-folded title.
        row = db.database.execute_sql("SELECT title_sort FROM node WHERE id = ?",
                                      (FOLDER_ID,)).fetchone()
        assert row == ("ärchive",)
        # The search index is built from the upgraded database (FTS5 is gone, migration 0006).
        wait_indexed(config)
        wait_served(lambda: client.get("/api/search/?q=arch"), timeout=30, interval=0.05)
        assert [r["title"] for r in client.get("/api/search/?q=arch").json()] == ["Ärchive"]
        tables = {row[0] for row in db.database.execute_sql(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "search_index" not in tables and "search_outbox" in tables
        # And the upgraded tree accepts new nodes.
        body = {"data": {"type": "documents", "attributes": {"title": "new"},
                         "relationships": {"parent": {"data": {
                             "type": "folders", "id": FOLDER_ID}}}}}
        assert client.post("/api/nodes/", body).status_code == 201
    finally:
        server.stop()
        thread.join(10)


def test_usernames_clashing_by_case_are_kept_and_reported(tmp_path, config, caplog):
    """A data dir from before usernames were unique regardless of case keeps both accounts (a
    rename would lock one out): the upgrade logs the clash, `dms verify` reports it, and no new
    clash can be made."""
    path = config.db_path
    path.parent.mkdir(parents=True)
    db.open_database(path)
    schema.migration_runner().up(target="0004_pages_search_ocr")
    db.database.close()
    connection = sqlite3.connect(path)
    for number, name in enumerate(("bob", "BOB")):
        user_id = f"{number}1111111-1111-4111-8111-111111111111"
        connection.execute("INSERT INTO user (id, username, password_hash, date_joined) "
                           "VALUES (?, ?, ?, ?)",
                           (user_id, name, hash_password("bob-password"), STAMP))
        for special in ("home", "inbox"):
            connection.execute(
                "INSERT INTO node (id, owner_id, parent_id, kind, special, title, title_sort, "
                "created_at, updated_at) VALUES (?, ?, NULL, 'folder', ?, ?, ?, ?, ?)",
                (f"{number}{'2' if special == 'home' else '3'}222222-2222-4222-8222-222222222222",
                 user_id, special, "." + special, "." + special, STAMP, STAMP))
    connection.commit()
    connection.close()
    server = Server(Config(**{**config.__dict__, "admin_password": None}))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        assert [r.getMessage() for r in caplog.records if r.name == "dms.migrations"] == \
            ["usernames 'bob' and 'BOB' differ only by case; rename one of them (PATCH "
                "/users/{id}/) so that logins stay unambiguous"]
        bob = Client(server.url).login("bob", "bob-password")
        big_bob = Client(server.url).login("BOB", "bob-password")
        assert bob.user_id != big_bob.user_id
        from dms.ops import verify
        assert "1 usernames that differ only by case:" in "\n".join(
            verify.run(config.data_dir).lines())
    finally:
        server.stop()
        thread.join(10)


def test_custom_field_values_get_their_documents_listing_keys_on_upgrade(tmp_path):
    """Migration 0022 copies each existing value's document keys (parent, title, trash mark),
    which custom field queries then read; the search outbox gets no row for the copy."""
    db.open_database(tmp_path / "dms.db")
    schema.migration_runner().up(target="0021_metadata")
    rows = {
        "user": ("INSERT INTO \"user\" (id, username, username_key, password_hash, email, "
                 "first_name, last_name, is_active, is_staff, is_superuser, date_joined) "
                 "VALUES ('u', 'alice', 'alice', 'x', '', '', '', 1, 0, 0, ?)", (STAMP,)),
        "node": ("INSERT INTO node (id, owner_id, parent_id, kind, special, title, title_sort, "
                 "created_at, updated_at) VALUES ('home', 'u', NULL, 'folder', 'home', '.home', "
                 "'.home', ?, ?), ('doc', 'u', 'home', 'document', NULL, 'Bill', 'bill', ?, ?)",
                 (STAMP,) * 4),
        "custom_field": ("INSERT INTO custom_field (id, owner_id, name, name_key, data_type, "
                         "created_at) VALUES ('f', 'u', 'Paid', 'paid', 'boolean', ?)", (STAMP,)),
        "custom_field_value": ("INSERT INTO custom_field_value (document_id, field_id, "
                               "value_bool) VALUES ('doc', 'f', 1)", ()),
    }
    for sql, params in rows.values():
        db.database.execute_sql(sql, params)
    db.database.execute_sql("DELETE FROM search_outbox")
    schema.migrate_schema()
    assert db.database.execute_sql(
        "SELECT document_id, parent_id, title_sort, trash_id FROM custom_field_value"
    ).fetchall() == [("doc", "home", "bill", None)]
    assert db.database.execute_sql("SELECT count(*) FROM search_outbox").fetchone() == (0,)
    db.database.close()


def test_grants_and_webhooks_of_grantees_follow_the_owners_events_from_the_upgrade_on(tmp_path):
    """Migration 0026: existing grants and memberships start at the newest event (nothing older is
    sent to a grantee again), and a grantee's webhook gets its place in the owner's events."""
    db.open_database(tmp_path / "dms.db")
    schema.migration_runner().up(target="0025_value_order_indexes")
    user = ("INSERT INTO \"user\" (id, username, username_key, password_hash, email, first_name, "
            "last_name, is_active, is_staff, is_superuser, date_joined) VALUES "
            "(?, ?, ?, 'x', '', '', '', 1, 0, 0, ?)")
    for user_id, name in (("u", "alice"), ("v", "bob"), ("w", "carol")):
        db.database.execute_sql(user, (user_id, name, name, STAMP))
    for sql, params in (
            ("INSERT INTO node (id, owner_id, parent_id, kind, special, title, title_sort, "
             "created_at, updated_at) VALUES ('home', 'u', NULL, 'folder', 'home', '.home', "
             "'.home', ?, ?), ('bills', 'u', 'home', 'folder', NULL, 'Bills', 'bills', ?, ?)",
             (STAMP,) * 4),
            ("INSERT INTO event (owner_id, node_id, actor_id, action, details, at) VALUES "
             "('u', 'bills', 'u', 'created', '{}', ?), ('u', 'bills', 'u', 'renamed', '{}', ?)",
             (STAMP, STAMP)),
            ("INSERT INTO user_group (id, name, name_key, created_at) VALUES "
             "('g', 'Family', 'family', ?)", (STAMP,)),
            ("INSERT INTO group_member (group_id, user_id) VALUES ('g', 'w')", ()),
            ("INSERT INTO node_grant (id, node_id, user_id, group_id, role, granted_by, "
             "created_at) VALUES ('g1', 'bills', 'v', NULL, 'viewer', 'u', ?), "
             "('g2', 'bills', NULL, 'g', 'editor', 'u', ?)", (STAMP, STAMP)),
            ("INSERT INTO webhook (id, owner_id, url, events, secret, created_at, "
             "last_event_id) VALUES ('h1', 'v', 'http://127.0.0.1/', '[]', 's', ?, 0), "
             "('h2', 'w', 'http://127.0.0.1/', '[]', 's', ?, 0), "
             "('h3', 'u', 'http://127.0.0.1/', '[]', 's', ?, 0)", (STAMP,) * 3)):
        db.database.execute_sql(sql, params)
    newest = db.database.execute_sql("SELECT max(id) FROM event").fetchone()[0]
    schema.migrate_schema()
    assert db.database.execute_sql("SELECT id, since FROM node_grant ORDER BY id").fetchall() == \
        [("g1", newest), ("g2", newest)]
    assert db.database.execute_sql("SELECT user_id, since FROM group_member").fetchall() == \
        [("w", newest)]
    assert db.database.execute_sql("SELECT webhook_id, owner_id, last_event_id FROM "
                                   "webhook_cursor ORDER BY webhook_id").fetchall() == \
        [("h1", "u", newest), ("h2", "u", newest)]
    db.database.close()


def test_numbers_for_the_paperless_dialect_are_given_on_upgrade_and_after(tmp_path):
    """Migration 0027: existing users, tags, ... get their rowid as their number; new rows one
    more than the highest, never one in use."""
    db.open_database(tmp_path / "dms.db")
    schema.migration_runner().up(target="0026_shared_events")
    user = ("INSERT INTO \"user\" (id, username, username_key, password_hash, email, first_name, "
            "last_name, is_active, is_staff, is_superuser, date_joined) VALUES "
            "(?, ?, ?, 'x', '', '', '', 1, 0, 0, ?)")
    for user_id, name in (("u", "alice"), ("v", "bob")):
        db.database.execute_sql(user, (user_id, name, name, STAMP))
    db.database.execute_sql("INSERT INTO tag (id, owner_id, name, name_key, bg_color, fg_color, "
                            "description, pinned, created_at) VALUES ('t1', 'u', 'a', 'a', "
                            "'#000000', '#ffffff', '', 0, ?), ('t2', 'v', 'b', 'b', '#000000', "
                            "'#ffffff', '', 0, ?)", (STAMP, STAMP))
    schema.migrate_schema()
    assert db.database.execute_sql('SELECT id, seq FROM "user" ORDER BY seq').fetchall() == \
        [("u", 1), ("v", 2)]
    db.database.execute_sql("DELETE FROM tag WHERE id = 't1'")
    db.database.execute_sql("INSERT INTO tag (id, owner_id, name, name_key, bg_color, fg_color, "
                            "description, pinned, created_at) VALUES ('t3', 'u', 'c', 'c', "
                            "'#000000', '#ffffff', '', 0, ?)", (STAMP,))
    assert db.database.execute_sql("SELECT id, seq FROM tag ORDER BY seq").fetchall() == \
        [("t2", 2), ("t3", 3)]
    assert db.database.execute_sql("SELECT count(*) FROM ui_settings").fetchone() == (0,)
    db.database.close()


def test_tokens_made_before_sessions_are_api_tokens_and_sessions_are_found_by_last_use(tmp_path):
    """Migration 0033 (api.md §22): every existing token is an API token with no recorded use
    (which were the page's logins cannot be told; a script's must not start expiring)."""
    db.open_database(tmp_path / "dms.db")
    schema.migration_runner().up(target="0032_search_fields")
    db.database.execute_sql(
        'INSERT INTO "user" (id, username, username_key, password_hash, email, first_name, '
        "last_name, is_active, is_staff, is_superuser, date_joined) VALUES "
        "('u', 'alice', 'alice', 'x', '', '', '', 1, 0, 0, ?)", (STAMP,))
    db.database.execute_sql(
        "INSERT INTO token (digest, token_key, user_id, name, created, expiry) VALUES "
        "('d1', 'k1', 'u', 'login', ?, NULL), ('d2', 'k2', 'u', 'scanner', ?, ?)",
        (STAMP, STAMP, STAMP))
    schema.migrate_schema()
    assert db.database.execute_sql(
        "SELECT digest, name, kind, last_used FROM token ORDER BY digest").fetchall() == [
        ("d1", "login", "api", None), ("d2", "scanner", "api", None)]
    plan = " ".join(str(row) for row in db.database.execute_sql(
        "EXPLAIN QUERY PLAN DELETE FROM token WHERE kind = 'session' AND last_used <= ?",
        (STAMP,)).fetchall())
    assert "token_kind_last_used" in plan, plan
    db.database.close()
