"""PostgreSQL as the database (DMS_DATABASE_URL): start-up errors, one schema on both engines,
migrations applied once when several processes start together. Runs with --engine postgresql
(scripts/test's second run); the rest of the suite runs there too, against a cloned database."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import psycopg
import pytest

from tests.harness import samples
from tests.harness.documents import new_document, upload
from tests.harness.waiting import wait_processed

# Sockets (pytest-socket): servers and `dms` commands on the cluster, asked over HTTP.
pytestmark = [pytest.mark.postgresql_only, pytest.mark.enable_socket]

ROOT = Path(__file__).resolve().parents[2]


def dms(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dms", *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env=env)


def test_start_up_errors_are_one_line_and_exit_1(postgres, tmp_path):
    data = str(tmp_path / "data")
    unreachable = dms("migrate", "--data-dir", data,
                      "--database-url", "postgresql://dms:s3cret@127.0.0.1:1/dms")
    assert unreachable.returncode == 1
    assert unreachable.stderr.startswith(
        "dms: cannot connect to PostgreSQL at postgresql://dms@127.0.0.1:1/dms: ")
    assert len(unreachable.stderr.strip().splitlines()) == 1 and "s3cret" not in unreachable.stderr
    missing = dms("serve", "--port", "0", "--data-dir", data,
                  "--database-url", postgres.url("no_such_database"))
    assert missing.returncode == 1
    assert missing.stderr.startswith(f"dms: cannot connect to PostgreSQL at "
                                     f"{postgres.url('no_such_database')}: ")
    assert 'database "no_such_database" does not exist' in missing.stderr
    wrong = dms("migrate", "--data-dir", data, "--database-url", "mysql://x@y/z")
    assert (wrong.returncode, wrong.stderr) == (2, (
        "dms: --database-url must be a PostgreSQL URL such as postgresql://dms:password@localhost/"
        "dms (leave it unset for SQLite in the data directory).\n"))
    foreign = postgres.new_database(empty=True)
    with psycopg.connect(foreign, autocommit=True) as connection:
        connection.execute("CREATE TABLE invoices (id int)")
    taken = dms("migrate", "--data-dir", data, "--database-url", foreign)
    assert (taken.returncode, taken.stderr) == (1, (
        "dms: the PostgreSQL database already holds tables that are not dms's (invoices); give "
        "dms an empty database of its own.\n"))
    postgres.admin_sql("CREATE ROLE visitor LOGIN")  # may connect, may not create tables
    unowned = postgres.new_database(empty=True).replace("postgres@", "visitor@")
    refused = dms("serve", "--port", "0", "--data-dir", data, "--database-url", unowned)
    assert (refused.returncode, refused.stderr) == (1, (
        "dms: PostgreSQL refused to create dms's tables (permission denied for schema public); "
        "make dms's role the owner of its database: createdb --owner ROLE DATABASE.\n"))
    with psycopg.connect(unowned.replace("visitor@", "postgres@")) as connection:
        assert connection.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
                                  ).fetchone() == (0,)  # nothing half made


def sqlite_schema(path: Path) -> dict:
    connection = sqlite3.connect(path)
    try:
        tables = [row[0] for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        return {
            "columns": {table: sorted(row[1] for row in connection.execute(
                f'PRAGMA table_info("{table}")')) for table in tables},
            "indexes": sorted(row[0] for row in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")),
            "foreign keys": sorted(
                (table, row[3], row[2], row[4], row[6]) for table in tables
                for row in connection.execute(f'PRAGMA foreign_key_list("{table}")')),
            "unique": sorted([
                (table, tuple(column[2] for column in connection.execute(
                    f'PRAGMA index_info("{index[1]}")')))
                for table in tables for index in connection.execute(f'PRAGMA index_list("{table}")')
                if index[2]] + [  # an INTEGER PRIMARY KEY is the rowid: unique, without an index
                (table, (row[1],)) for table in tables
                for row in connection.execute(f'PRAGMA table_info("{table}")')
                if row[5] == 1 and row[2].upper() == "INTEGER"]),
        }
    finally:
        connection.close()


def postgresql_schema(url: str) -> dict:
    with psycopg.connect(url) as connection:
        columns: dict[str, list[str]] = {}
        for table, column in connection.execute(
                "SELECT table_name, column_name FROM information_schema.columns "
                "WHERE table_schema = 'public'"):
            columns.setdefault(table, []).append(column)
        indexes = [row[0] for row in connection.execute(
            "SELECT i.indexname FROM pg_indexes AS i WHERE i.schemaname = 'public' AND NOT EXISTS "
            "(SELECT 1 FROM pg_constraint AS c WHERE c.conname = i.indexname)")]
        foreign_keys = connection.execute(
            "SELECT c.conrelid::regclass::text, a.attname, c.confrelid::regclass::text, "
            "f.attname, c.confdeltype FROM pg_constraint AS c "
            "JOIN pg_attribute AS a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1] "
            "JOIN pg_attribute AS f ON f.attrelid = c.confrelid AND f.attnum = c.confkey[1] "
            "WHERE c.contype = 'f'").fetchall()
        unique = connection.execute(
            "SELECT i.indrelid::regclass::text, array_agg(a.attname ORDER BY k.ord) "
            "FROM pg_index AS i CROSS JOIN unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) "
            "JOIN pg_attribute AS a ON a.attrelid = i.indrelid AND a.attnum = k.attnum "
            "JOIN pg_class AS t ON t.oid = i.indrelid JOIN pg_namespace AS n "
            "ON n.oid = t.relnamespace WHERE i.indisunique AND n.nspname = 'public' "
            "GROUP BY i.indexrelid, i.indrelid").fetchall()
    actions = {"c": "CASCADE", "a": "NO ACTION", "r": "RESTRICT", "n": "SET NULL"}
    return {"columns": {table: sorted(names) for table, names in columns.items()},
            "indexes": sorted(indexes),
            "foreign keys": sorted((table.strip('"'), column, target.strip('"'), key,
                                    actions[action]) for table, column, target, key, action
                                   in foreign_keys),
            "unique": sorted((table.strip('"'), tuple(names)) for table, names in unique)}


def test_both_engines_end_with_one_schema(postgres, tmp_path):
    """Tables, columns, indexes, foreign keys and unique constraints agree; what differs is the
    search engines' own: the SQLite outbox that feeds tantivy, PostgreSQL's search_entry with its
    GIN indexes, and the owners' words and their inner parts (search_owner, search_owner_word,
    search_part), and SQLite's highest numbers of deleted rows (number_high, migration 0042:
    PostgreSQL's identity columns never give a number twice by themselves)."""
    url = postgres.new_database(empty=True)
    assert dms("migrate", "--data-dir", str(tmp_path / "data")).returncode == 0
    assert dms("migrate", "--data-dir", str(tmp_path / "pg"), "--database-url", url).returncode == 0
    lite, pg = sqlite_schema(tmp_path / "data" / "dms.db"), postgresql_schema(url)
    del lite["columns"]["search_outbox"], lite["columns"]["number_high"]
    searched = ("search_entry", "search_owner", "search_owner_word", "search_part")
    assert sorted(table for table in pg["columns"] if table.startswith("search_")) == list(searched)
    for table in searched:
        del pg["columns"][table]
    pg["indexes"] = [name for name in pg["indexes"] if not name.startswith(searched)]
    pg["foreign keys"] = [key for key in pg["foreign keys"] if key[0] not in searched]
    pg["unique"] = [key for key in pg["unique"] if key[0] not in searched]
    lite["unique"] = [key for key in lite["unique"]
                      if key[0] not in ("search_outbox", "number_high")]
    assert pg == lite


def test_two_processes_starting_together_migrate_once(postgres, tmp_path):
    url = postgres.new_database(empty=True)
    results = []

    def start(name: str) -> None:
        results.append(dms("migrate", "--data-dir", str(tmp_path / name), "--database-url", url))

    threads = [threading.Thread(target=start, args=(f"node{i}",)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [result.returncode for result in results] == [0, 0, 0], [r.stderr for r in results]
    with psycopg.connect(url) as connection:
        names = [row[0] for row in connection.execute(
            "SELECT name FROM schema_migrations ORDER BY name")]
    assert names == sorted(p.stem for p in (ROOT / "dms" / "db" / "migrations").glob("[0-9]*.py"))


def test_a_request_that_finds_every_connection_in_use_gets_a_sentence(postgres):
    """The pool waits for a free connection (30 s in dms; 0.3 s here) and then says so: a 503
    with a sentence through dms.web, never a 500."""
    from dms.db import database, open_database
    from dms.errors import Unavailable

    open_database(postgres.new_database(), pool_size=2)
    database.close()  # this thread's connection goes back to the pool
    database.obj._wait_timeout = 0.3  # peewee's pool setting, shortened for the test
    holding, release = threading.Barrier(3, timeout=10), threading.Event()

    def hold():
        database.execute_sql("SELECT 1")  # this thread keeps its connection until closed
        holding.wait()
        release.wait(10)
        database.close()

    threads = [threading.Thread(target=hold) for _ in range(2)]
    for thread in threads:
        thread.start()
    holding.wait()
    outcome = {}

    def third():
        try:
            database.execute_sql("SELECT 1")
        except Unavailable as error:
            outcome["message"] = error.message

    extra = threading.Thread(target=third)
    extra.start()
    extra.join(10)
    release.set()
    for thread in threads:
        thread.join(10)
    assert outcome == {"message": "Every database connection of this server is in use "
                                  "(DMS_DB_POOL_SIZE); try again in a moment."}


@pytest.mark.config(db_pool_size=2, lease_seconds=1.5)
@pytest.mark.socket  # sixteen clients on real threads
def test_a_pool_of_two_serves_sixteen_clients_beside_background_work(alice, config):
    """Regression: background work (the heartbeat, the queue's workers, the start-up) kept pooled
    connections while idle, so a node with DMS_DB_POOL_SIZE=2 wedged for good. Every unit of
    background work now gives its connection back."""
    document_id = new_document(alice, "scan.png")
    assert upload(alice, document_id, "scan.png", samples.png("Pool of two")).status_code == 201
    statuses: list[int] = []

    def client(number: int) -> None:
        for round_ in range(8):
            statuses.append(alice.get("/api/users/me/").status_code)
            statuses.append(alice.post("/api/nodes/", {"data": {
                "type": "folders", "attributes": {"title": f"f{number}-{round_}"},
                "relationships": {"parent": {"data": {"type": "folders",
                                                      "id": alice.home_id}}}}}).status_code)
            statuses.append(alice.get(f"/api/nodes/{alice.home_id}/").status_code)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert len(statuses) == 16 * 8 * 3
    assert sorted(set(statuses)) == [200, 201], [s for s in statuses if s >= 300][:5]
    assert wait_processed(alice, document_id)[-1] == "succeeded"
    import time
    time.sleep(2)  # several heartbeats later the node still answers at once
    assert alice.get("/api/users/me/").status_code == 200
