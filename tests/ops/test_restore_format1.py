"""A restore checks everything before anything lands in the target (dms.ops.backup.restore):
tampered, damaged and malformed backups of format 1 (the SQLite file of dms 0.1) are refused in one
sentence, and the folder they were restored into is left exactly as it was: members missing,
unlisted or marked as links, a database that is not SQLite, damaged or newer than this dms, a
malformed manifest. An older schema is migrated before it lands. The backups and the refusal's
checks: tests/ops/conftest.py, tests/harness/backups.py."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import zipfile

import pytest

from tests.harness.backups import MALFORMED, rebuild, refused
from tests.harness.olddata import make_data_dir_at_migration_1
from tests.harness.processes import dms

# Restores into new data dirs; the rows' engine is SQLite.
# Sockets (pytest-socket): restored data dirs served and asked over HTTP.
pytestmark = [pytest.mark.sqlite_only, pytest.mark.enable_socket]


def edit(*statements):
    """A `database` change for rebuild(): SQL run without foreign key enforcement."""
    def change(path):
        connection = sqlite3.connect(path)
        try:
            connection.execute("PRAGMA foreign_keys = OFF")
            for statement in statements:
                connection.execute(statement)
            connection.commit()
        finally:
            connection.close()
    return change


def test_a_rebuilt_backup_restores(base, work):
    """The tampering helper itself makes a backup that restores: the refusals below are due to
    what each one changes."""
    archive, ids = base
    result = dms("restore", rebuild(archive, work / "same.zip"), "--data-dir", work / "new")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in work.iterdir()) == ["new", "same.zip"]
    assert sorted(str(p.relative_to(work / "new")) for p in (work / "new").rglob("*")
                  if p.is_file()) == sorted(["dms.db", *ids["files"]])
    assert dms("verify", "--data-dir", work / "new").returncode == 0


@pytest.mark.parametrize("empty_target", [False, True])
def test_files_left_out_of_manifest_and_zip_are_refused(base, work, empty_target):
    archive, ids = base
    left_out = ids["files"][:2]
    refused(rebuild(archive, work / "short.zip", drop=left_out),
            f"The backup is incomplete: it lacks the files of 2 versions its database refers to "
            f"({', '.join(sorted(ids['versions'][:2]))}).", empty_target)


def test_a_file_left_out_of_the_manifest_only_is_refused(base, work):
    archive, ids = base
    refused(rebuild(archive, work / "unlisted.zip",
                    manifest=lambda m: {**m, "files": {k: v for k, v in m["files"].items()
                                                       if k != ids["files"][0]}}),
            f"The backup holds 1 members its manifest does not list ({ids['files'][0]}).")


def test_a_file_no_version_refers_to_is_refused(base, work):
    archive, _ = base
    stray = "files/ab/abcdef00-0000-4000-8000-000000000000"
    refused(rebuild(archive, work / "extra.zip", extra={stray: b"nobody's"}),
            f"The backup holds 1 files no version in its database refers to ({stray}).")


@pytest.mark.parametrize("empty_target", [False, True])
def test_a_database_that_is_not_sqlite_is_refused(base, work, empty_target):
    archive, _ = base
    refused(rebuild(archive, work / "text.zip", extra={"dms.db": b"just some text, no database"}),
            "The backup's dms.db is not an SQLite database.", empty_target)


def test_a_database_with_a_damaged_page_is_refused(base, work):
    def damage(path):
        connection = sqlite3.connect(path)
        page = connection.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'node_children'").fetchone()[0]
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
        connection.close()
        with open(path, "r+b") as file:  # the header (page 1) stays intact
            file.seek((page - 1) * page_size)
            file.write(b"\xff" * 64)

    archive, _ = base
    refused(rebuild(archive, work / "damaged.zip", database=damage),
            "The backup's database is damaged: it fails SQLite's integrity check.")


def test_a_database_with_a_dangling_row_is_refused(base, work):
    archive, _ = base
    refused(rebuild(archive, work / "dangling.zip", database=edit(
        "INSERT INTO page (id, version_id, number) VALUES ('p', 'no such version', 1)")),
        "The backup's database is damaged: 1 row(s) point at rows that are gone.")


def test_a_database_holding_a_loop_is_refused(base, work):
    archive, ids = base
    refused(rebuild(archive, work / "loop.zip", database=edit(
        f"UPDATE node SET parent_id = '{ids['inner']}' WHERE id = '{ids['outer']}'")),
        f"The backup's database is damaged: its folder tree has a loop "
        f"(nodes {', '.join(sorted([ids['inner'], ids['outer']]))}).")


def test_a_database_with_a_node_in_a_document_is_refused(base, work):
    archive, ids = base
    refused(rebuild(archive, work / "misplaced.zip", database=edit(
        f"UPDATE node SET parent_id = (SELECT id FROM node WHERE kind = 'document' LIMIT 1) "
        f"WHERE id = '{ids['inner']}'")),
        f"The backup's database is damaged: nodes have a parent that belongs to another user or "
        f"is a document ({ids['inner']}).")


def test_a_database_newer_than_this_dms_is_refused(base, work):
    archive, _ = base
    refused(rebuild(archive, work / "newer.zip",
                    database=edit("INSERT INTO schema_migrations (name, applied) "
                                  "VALUES ('9999_future', '2030-01-01')")),
            "This backup's database is newer than this dms understands; upgrade dms to restore it.")


def test_a_member_marked_as_a_symlink_is_refused(base, work):
    archive, ids = base
    refused(rebuild(archive, work / "link.zip", symlink=ids["files"][0]),
            f"The backup's member {ids['files'][0]!r} is not a regular file.")


def without(key, *path):
    def change(manifest):
        holder = manifest
        for step in path:
            holder = holder[step]
        del holder[key]
        return manifest
    return change


def setting(value, key, *path):
    def change(manifest):
        holder = manifest
        for step in path:
            holder = holder[step]
        holder[key] = value
        return manifest
    return change


@pytest.mark.parametrize("change, message", [
    (lambda m: b"{\"format_version\": 1,", MALFORMED + "it is not JSON."),
    (lambda m: b"\xff\xfe not text", MALFORMED + "it is not JSON."),
    (lambda m: [m], MALFORMED + "it is not a JSON object."),
    (lambda m: "a string", MALFORMED + "it is not a JSON object."),
    (setting("1", "format_version"),
     MALFORMED + "format_version is missing or not a whole number from 1 up."),
    (setting(True, "format_version"),
     MALFORMED + "format_version is missing or not a whole number from 1 up."),
    (setting(0, "format_version"),
     MALFORMED + "format_version is missing or not a whole number from 1 up."),
    (without("format_version"),
     MALFORMED + "format_version is missing or not a whole number from 1 up."),
    (setting(4.0, "schema_version"),
     MALFORMED + "schema_version is missing or not a whole number."),
    (without("schema_version"), MALFORMED + "schema_version is missing or not a whole number."),
    (setting(None, "app_version"), MALFORMED + "app_version is missing or not a string."),
    (without("created_at"), MALFORMED + "created_at is missing or not a string."),
    (setting([], "counts"), MALFORMED + "counts is not an object with the whole numbers users, "
                                        "folders, documents, versions."),
    (setting("3", "users", "counts"), MALFORMED + "counts is not an object with the whole "
                                                  "numbers users, folders, documents, versions."),
    (setting([], "files"), MALFORMED + "files is not an object."),
    (without("files"), MALFORMED + "files is not an object."),
    (setting("abc", "dms.db", "files"), MALFORMED + "the entry of dms.db is not an object."),
    (without("size", "files", "dms.db"),
     MALFORMED + "the size of dms.db is missing or not a whole number."),
    (setting("12", "size", "files", "dms.db"),
     MALFORMED + "the size of dms.db is missing or not a whole number."),
    (setting(-1, "size", "files", "dms.db"),
     MALFORMED + "the size of dms.db is missing or not a whole number."),
    (setting(12.5, "size", "files", "dms.db"),
     MALFORMED + "the size of dms.db is missing or not a whole number."),
    (without("sha256", "files", "dms.db"),
     MALFORMED + "the sha256 of dms.db is missing or not 64 hexadecimal digits."),
    (setting("ab" * 31, "sha256", "files", "dms.db"),
     MALFORMED + "the sha256 of dms.db is missing or not 64 hexadecimal digits."),
    (without("dms.db", "files"), MALFORMED + "it lists no dms.db."),
    (setting({"size": 1, "sha256": "0" * 64}, "../evil", "files"),
     "The backup holds an unexpected member '../evil'."),
], ids=lambda value: None if callable(value) else value[len(MALFORMED):][:40])
def test_a_malformed_manifest_is_refused_in_one_line(base, work, change, message):
    archive, _ = base
    refused(rebuild(archive, work / "malformed.zip", manifest=change), message)


def test_a_backup_of_an_older_schema_is_migrated_before_it_lands(work):
    """The database is brought up to date in the temporary folder: the target gets the newest
    schema, and nothing else appears."""
    from dms.db import schema

    old = work / "old.db"
    make_data_dir_at_migration_1(old)
    data = old.read_bytes()
    manifest = {"format_version": 1, "app_version": "0.0.1", "schema_version": 1,
                "created_at": "2025-01-02T03:04:05+00:00",
                "counts": {"users": 1, "folders": 3, "documents": 0, "versions": 0},
                "files": {"dms.db": {"sha256": hashlib.sha256(data).hexdigest(),
                                     "size": len(data)}}}
    archive = work / "old.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("dms.db", data)
        zipped.writestr("manifest.json", json.dumps(manifest))
    old.unlink()
    result = dms("restore", archive, "--data-dir", work / "new")
    assert result.returncode == 0, result.stderr
    # The migrations applied are logged once, in one line by dms, as at a start.
    shipped = schema.shipped_migrations()
    assert re.findall(r"INFO (\S+): (applied .*)", result.stderr) == \
        [("dms.db", f"applied {len(shipped) - 1} schema migration(s): {shipped[1]} to "
                    f"{shipped[-1]}")]
    assert len(result.stderr.splitlines()) == 1
    assert result.stdout == (f"Restored {archive} into {work / 'new'} (made by dms 0.0.1 at "
                             f"2025-01-02T03:04:05+00:00).\n")
    assert sorted(p.name for p in work.iterdir()) == ["new", "old.zip"]
    assert sorted(p.name for p in (work / "new").iterdir()) == ["dms.db"]
    connection = sqlite3.connect(work / "new" / "dms.db")
    applied = {row[0] for row in connection.execute("SELECT name FROM schema_migrations")}
    connection.close()
    assert applied == {p.stem for p in schema.migrations_dir().glob("[0-9]*.py")}
