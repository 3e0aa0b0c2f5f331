"""A restore checks everything before anything lands in the target (dms.ops.restore): tampered,
damaged and malformed backups of both formats are refused in one sentence, and the folder they
were restored into is left exactly as it was. Format 1 (the SQLite file of dms 0.1) and format 2
(one file per table) share the checks of the rows; each has its own of the container."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
import zipfile

import pytest

from dms.config import Config
from tests.harness import samples
from tests.harness.appserver import running
from tests.harness.backups import rebuild, row_lines
from tests.harness.client import Client
from tests.harness.documents import create_node, upload_accepted
from tests.harness.olddata import make_data_dir_at_migration_1
from tests.harness.users import ADMIN_PASSWORD, add_user
from tests.harness.waiting import wait_processed

pytestmark = pytest.mark.sqlite_only  # restores into new data dirs; the rows' engine is SQLite


def dms(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "dms", *map(str, args)], input=stdin,
                          capture_output=True, text=True)


@pytest.fixture(scope="module")
def filled_dir(tmp_path_factory):
    """A small data dir (made once for the module, its server stopped): alice with nested
    folders and three documents of one version each. Returns (data dir, ids)."""
    root = tmp_path_factory.mktemp("base")
    config = Config(host="127.0.0.1", port=0, data_dir=root / "data", threads=4,
                    admin_username="admin", admin_password=ADMIN_PASSWORD, ocr_workers=1)
    with running(config) as server:
        alice = add_user(Client(server.url).login("admin", ADMIN_PASSWORD), "alice")
        outer = create_node(alice, "folders", "Outer", alice.home_id)
        inner = create_node(alice, "folders", "Inner", outer)
        documents = []
        for index, parent in enumerate((outer, inner, alice.inbox_id)):
            documents.append(create_node(alice, "documents", f"doc {index}", parent))
            upload_accepted(alice, documents[-1], f"doc{index}.txt",
                            samples.text(f"document {index}\n"))
        for document_id in documents:
            wait_processed(alice, document_id)
    files = sorted(f"files/{p.relative_to(config.data_dir / 'files')}"
                   for p in (config.data_dir / "files").rglob("*") if p.is_file())
    return config.data_dir, {"outer": outer, "inner": inner, "home": alice.home_id,
                             "files": files, "versions": [n.rsplit("/", 1)[1] for n in files]}


@pytest.fixture(scope="module")
def base(filled_dir):
    """A backup in format 1, as dms 0.1 wrote it: the SQLite file itself. Returns (archive,
    ids)."""
    data_dir, ids = filled_dir
    archive = data_dir.parent / "format1.zip"
    connection = sqlite3.connect(data_dir / "dms.db")
    copy = data_dir.parent / "copy.db"
    target = sqlite3.connect(copy)
    connection.backup(target)
    target.close()
    count = lambda sql: connection.execute(sql).fetchone()[0]  # noqa: E731
    names = [row[0] for row in connection.execute("SELECT name FROM schema_migrations")]
    manifest = {"format_version": 1, "app_version": "0.1.0",
                "created_at": "2026-01-02T03:04:05+00:00",
                "schema_version": max(int(name.split("_")[0]) for name in names),
                "counts": {"users": count('SELECT count(*) FROM "user"'),
                           "folders": count("SELECT count(*) FROM node WHERE kind = 'folder'"),
                           "documents": count("SELECT count(*) FROM node WHERE kind = 'document'"),
                           "versions": count("SELECT count(*) FROM document_version")},
                "files": {}}
    connection.close()
    members = {"dms.db": copy.read_bytes()}
    copy.unlink()
    for name in ids["files"]:
        members[name] = (data_dir / name).read_bytes()
    with zipfile.ZipFile(archive, "w") as zipped:
        for name, data in members.items():
            zipped.writestr(name, data)
            manifest["files"][name] = {"sha256": hashlib.sha256(data).hexdigest(),
                                       "size": len(data)}
        zipped.writestr("manifest.json", json.dumps(manifest))
    return archive, ids


@pytest.fixture(scope="module")
def logical(filled_dir):
    """A backup in format 2, by `dms backup`: one file per table. Returns (archive, ids)."""
    data_dir, ids = filled_dir
    archive = data_dir.parent / "format2.zip"
    made = dms("backup", archive, "--data-dir", data_dir)
    assert made.returncode == 0, made.stderr
    return archive, ids


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


def refused(archive, message, empty_target=False):
    """Restore `archive` into `<its folder>/new`: refused with `message`, exit status 1, and
    the folder exactly as before (no target, or the empty one; no temporary folder)."""
    target = archive.parent / "new"
    if empty_target:
        target.mkdir()
    before = sorted(p.name for p in archive.parent.iterdir())
    result = dms("restore", archive, "--data-dir", target)
    assert (result.returncode, result.stdout, result.stderr) == (1, "", f"dms: {message}\n")
    assert sorted(p.name for p in archive.parent.iterdir()) == before
    assert not any(".restore-" in p.name for p in archive.parent.iterdir())
    if empty_target:
        assert list(target.iterdir()) == []


@pytest.fixture
def work(tmp_path):
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


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


MALFORMED = "The backup's manifest is malformed: "


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
    assert result.returncode == 0, result.stderr  # stderr logs the migrations applied
    assert result.stdout == (f"Restored {archive} into {work / 'new'} (made by dms 0.0.1 at "
                             f"2025-01-02T03:04:05+00:00).\n")
    assert sorted(p.name for p in work.iterdir()) == ["new", "old.zip"]
    assert sorted(p.name for p in (work / "new").iterdir()) == ["dms.db"]
    connection = sqlite3.connect(work / "new" / "dms.db")
    applied = {row[0] for row in connection.execute("SELECT name FROM schema_migrations")}
    connection.close()
    assert applied == {p.stem for p in schema.migrations_dir().glob("[0-9]*.py")}


# -- format 2: one file per table ----------------------------------------------------------------

def test_a_rebuilt_logical_backup_restores(logical, work):
    archive, ids = logical
    with zipfile.ZipFile(archive) as zipped:
        names = sorted(zipped.namelist())
    assert names == sorted(["manifest.json", *ids["files"], *(f"tables/{t}.jsonl" for t in (
        "document_mail", "document_version", "event", "mail_account", "mail_import", "node",
        "node_tag", "page", "preference", "schema_migrations", "tag", "token", "trash_entry",
        "user"))])
    result = dms("restore", rebuild(archive, work / "same.zip"), "--data-dir", work / "new")
    assert result.returncode == 0, result.stderr
    assert sorted(str(p.relative_to(work / "new")) for p in (work / "new").rglob("*")
                  if p.is_file()) == sorted(["dms.db", *ids["files"]])
    assert dms("verify", "--data-dir", work / "new").returncode == 0


def test_a_loop_in_the_rows_is_refused(logical, work):
    archive, ids = logical

    def loop(lines):
        header, rows = row_lines(lines)
        for row in rows:
            if row[header.index("id")] == ids["outer"]:
                row[header.index("parent_id")] = ids["inner"]
        return [lines[0]] + [json.dumps(row) + "\n" for row in rows]

    refused(rebuild(archive, work / "loop.zip", rows={"node": loop}),
            f"The backup's database is damaged: its folder tree has a loop "
            f"(nodes {', '.join(sorted([ids['inner'], ids['outer']]))}).")


def test_a_dangling_row_in_the_rows_is_refused(logical, work):
    archive, _ = logical

    def dangling(lines):
        header, rows = row_lines(lines)
        extra = [{"id": "p", "version_id": "no such version", "number": 1, "text": "",
                  "method": None}[column] for column in header]
        return lines + [json.dumps(extra) + "\n"]

    refused(rebuild(archive, work / "dangling.zip", rows={"page": dangling},
                    manifest=lambda m: {**m, "tables": {**m["tables"],
                                                        "page": m["tables"]["page"] + 1}}),
            "The backup's database is damaged: 1 row(s) point at rows that are gone.")


@pytest.mark.parametrize("change, message", [
    (lambda lines: lines[:-1],
     "The backup's table tag holds {n_less} rows, its manifest says {n}: the backup is damaged."),
    (lambda lines: lines + ["not json\n"],
     "The backup is damaged: line {last} of tables/tag.jsonl is not JSON."),
    (lambda lines: lines + ['["only one value"]\n'],
     "The backup is damaged: line {last} of tables/tag.jsonl is not a row of {width} plain "
     "values."),
    (lambda lines: lines + [json.dumps([[1]] * len(json.loads(lines[0]))) + "\n"],
     "The backup is damaged: line {last} of tables/tag.jsonl is not a row of {width} plain "
     "values."),
    (lambda lines: lines[:-1] + [lines[-1].rstrip("\n")],
     "The backup is damaged: line {length} of tables/tag.jsonl is too long or unfinished."),
    (lambda lines: [lines[0].replace('"name"', '"title"')] + lines[1:],
     "The backup's table tag has the columns {renamed}, not those of this dms's tag: the "
     "backup is damaged."),
    (lambda lines: ['{"id": 1}\n'] + lines[1:],
     "The backup is damaged: tables/tag.jsonl does not start with a list of column names."),
    (lambda lines: lines + [lines[1]],
     "The backup's table tag cannot be restored: UNIQUE constraint failed: tag.owner_id, "
     "tag.name_key."),
], ids=["a row less", "not JSON", "a short row", "a nested value", "unfinished",
        "a renamed column", "no header", "a duplicate"])
def test_a_damaged_table_file_is_refused(logical, work, change, message):
    archive, _ = logical
    with zipfile.ZipFile(archive) as zipped:
        lines = zipped.read("tables/tag.jsonl").decode().splitlines(keepends=True)
    header = json.loads(lines[0])
    if len(lines) < 2:  # the fixture's data has no tags: give the table two
        rows = [[{"id": f"t{n}", "owner_id": "x", "name": f"tag {n}", "name_key": f"tag {n}",
                  "bg_color": "#c41fff", "fg_color": "#FFFFFF", "description": "",
                  "pinned": 0, "created_at": "2026-01-02 03:04:05.000000"}[c] for c in header]
                for n in (1, 2)]
        lines += [json.dumps(row) + "\n" for row in rows]
    n = len(lines) - 1
    message = message.format(n=n, n_less=n - 1, last=len(change(list(lines))),
                             length=len(lines), width=len(header),
                             renamed=", ".join(c if c != "name" else "title" for c in header))
    refused(rebuild(archive, work / "damaged.zip", rows={"tag": lambda _: change(list(lines))},
                    manifest=lambda m: {**m, "tables": {**m["tables"], "tag": n}}), message)


def test_an_unknown_or_missing_table_is_refused(logical, work):
    archive, _ = logical
    refused(rebuild(archive, work / "unknown.zip", extra={"tables/invoices.jsonl": b'["id"]\n'},
                    manifest=lambda m: {**m, "tables": {**m["tables"], "invoices": 0}}),
            "The backup holds a table this dms does not know: invoices.")
    refused(rebuild(archive, work / "missing.zip", drop=["tables/preference.jsonl"],
                    manifest=lambda m: {**m, "tables": {k: v for k, v in m["tables"].items()
                                                        if k != "preference"}}),
            "The backup's database is damaged: it lacks the table preference.")
    refused(rebuild(archive, work / "escape.zip", extra={"tables/../x.jsonl": b'["id"]\n'},
                    manifest=lambda m: {**m, "tables": {**m["tables"], "../x": 0}}),
            MALFORMED + "tables names a table that no dms database has.")


def test_a_logical_backup_of_a_newer_schema_is_refused(logical, work):
    archive, _ = logical

    def future(lines):
        header = json.loads(lines[0])
        row = {"id": 999, "name": "9999_future", "applied": "2030-01-01"}
        return lines + [json.dumps([row.get(column) for column in header]) + "\n"]

    refused(rebuild(archive, work / "newer.zip", rows={"schema_migrations": future},
                    manifest=lambda m: {**m, "tables": {**m["tables"], "schema_migrations":
                                                        m["tables"]["schema_migrations"] + 1}}),
            "This backup's database is newer than this dms understands; upgrade dms to restore it.")


# -- rows the API would refuse (issue 22): checked by the API's own rules, both formats ---------

TITLE_RULE = ("A title may not contain /, \\, control characters or invisible formatting "
              "characters such as right-to-left overrides")


def value_cases(outer: str, alice: str) -> list[tuple]:
    """(table, the row to change {column: value} or None to add one, the values, what is said)."""
    title = f"has a title the API would refuse ({TITLE_RULE})"
    shouting = {"id": "u-shouting", "username": "ALICE", "username_key": "alice-2",
                "first_name": "", "last_name": "", "email": "", "is_active": 1, "is_staff": 0,
                "is_superuser": 0, "date_joined": "2026-01-02 03:04:05.000000",
                "password_hash": None}
    return [
        ("node", {"id": outer}, {"title": "a/b"}, outer, title),
        ("node", {"id": outer}, {"title": "nul\x00"}, outer, title),
        ("node", {"id": outer}, {"title": "invoice\u202efdp.exe"}, outer, title),
        ("node", {"id": outer}, {"created_at": "garbage"}, outer,
         "has a created_at that is not a time ('garbage')"),
        ("user", None, shouting, "u-shouting",
         f"has the username 'ALICE', which differs only by case from that of user {alice}"),
        ("user", {"id": alice}, {"username": "not allowed!", "username_key": "not allowed!"},
         alice, "has a username the API would refuse (A username may contain only letters, "
                "digits and @ . + - _ characters)"),
    ]


def sql_change(table, match, values):
    """A `database` change for rebuild() (format 1)."""
    def change(path):
        connection = sqlite3.connect(path)
        try:
            connection.execute("PRAGMA foreign_keys = OFF")
            if match is None:
                connection.execute(f'INSERT INTO "{table}" ({", ".join(values)}) VALUES '
                                   f'({", ".join("?" * len(values))})', list(values.values()))
            else:
                (key, wanted), = match.items()
                connection.execute(f'UPDATE "{table}" SET '
                                   + ", ".join(f"{column} = ?" for column in values)
                                   + f" WHERE {key} = ?", [*values.values(), wanted])
            connection.commit()
        finally:
            connection.close()
    return change


def lines_change(match, values):
    """A `rows` change for rebuild() (format 2)."""
    def change(lines):
        header, rows = row_lines(lines)
        if match is None:
            rows.append([values.get(column) for column in header])
        else:
            (key, wanted), = match.items()
            for row in rows:
                if row[header.index(key)] == wanted:
                    for column, value in values.items():
                        row[header.index(column)] = value
        return [lines[0]] + [json.dumps(row) + "\n" for row in rows]
    return change


@pytest.mark.parametrize("case", range(6), ids=["slash", "NUL", "RLO", "garbage time",
                                                "ALICE beside alice", "refused username"])
def test_rows_the_api_would_refuse_are_refused_in_both_formats(filled_dir, base, logical, work,
                                                               case):
    data_dir, ids = filled_dir
    connection = sqlite3.connect(data_dir / "dms.db")
    alice = connection.execute("SELECT id FROM \"user\" WHERE username = 'alice'").fetchone()[0]
    connection.close()
    table, match, values, row, what = value_cases(ids["outer"], alice)[case]
    message = f"The backup's table {table} cannot be restored: row {row} {what}."
    refused(rebuild(base[0], work / "format1.zip", database=sql_change(table, match, values),
                    manifest=lambda m: {**m, "counts": {**m["counts"], "users": m["counts"][
                        "users"] + (match is None and table == "user")}}), message)
    refused(rebuild(logical[0], work / "format2.zip", rows={table: lines_change(match, values)},
                    manifest=lambda m: {**m, "tables": {**m["tables"], table: m["tables"][table]
                                                        + (match is None)},
                                        "counts": {**m["counts"], "users": m["counts"]["users"]
                                                   + (match is None and table == "user")}}),
            message)


def test_a_value_of_the_wrong_type_in_a_table_file_is_refused(filled_dir, logical, work):
    """SQLite would quietly store the integer as the text of a title (in format 1 that is what
    the file holds: the title "7")."""
    _, ids = filled_dir

    def integer_title(lines):
        header, rows = row_lines(lines)
        for row in rows:
            if row[header.index("id")] == ids["outer"]:
                row[header.index("title")] = 7
        return [lines[0]] + [json.dumps(row) + "\n" for row in rows]

    with zipfile.ZipFile(logical[0]) as zipped:
        lines = zipped.read("tables/node.jsonl").decode().splitlines()
    line = next(number for number, text in enumerate(lines, 1) if ids["outer"] in text)
    refused(rebuild(logical[0], work / "typed.zip", rows={"node": integer_title}),
            f"The backup's table node cannot be restored: line {line} has a title of the wrong "
            "type (7).")
