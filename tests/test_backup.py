"""Backup, restore and verify (README, "Backup and restore"), run as a user runs them."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
import threading
import zipfile

import pytest

import samples
from dms.config import Config
from dms.server import Server
from support import JSON, Client, wait_for, wait_indexed
from test_documents import new_document, upload

pytestmark = pytest.mark.sqlite_only  # the backup format holds an SQLite file (cross-engine backups: issue 14, point 6)

LISTINGS = ["/api/folders/?page[size]=100", "/api/documents/?page[size]=100",
            "/api/tokens/?page[size]=100"]


def dms(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "dms", *map(str, args)], input=stdin,
                          capture_output=True, text=True)


def folder(client, title, parent):
    body = {"data": {"type": "folders", "attributes": {"title": title},
                     "relationships": {"parent": {"data": {"type": "folders", "id": parent}}}}}
    return client.post("/api/nodes/", body).json()["data"]["id"]


@pytest.fixture
def filled(admin, alice, config):
    """Users, nested folders, several versions, OCR text and tokens."""
    alice.post("/api/tokens/", {"expiry_hours": 10, "name": "scanner"}, media=JSON)
    outer = folder(alice, "Outer", alice.home_id)
    inner = folder(alice, "Inner", outer)
    documents = []
    for index, parent in enumerate((outer, inner, alice.inbox_id)):
        document_id = new_document(alice, f"doc {index}", parent)
        upload(alice, document_id, "v1.txt", samples.text(f"first version {index}\n"))
        upload(alice, document_id, "v2.pdf", samples.pdf([f"second version of document {index}"]))
        documents.append(document_id)
    for document_id in documents:
        wait_for(alice, document_id)
    return documents


def state(client, admin, documents) -> dict:
    """Everything a user and the admin can see: listings, document details and text, every
    file's SHA-256."""
    seen = {path: client.get(path).json()["data"] for path in LISTINGS}
    seen["users"] = admin.get("/api/users/").json()["data"]
    for document_id in documents:
        detail = client.get(f"/api/documents/{document_id}/").json()["data"]
        for version in detail["attributes"]["versions"]:
            content = client.get(version["download_url"].split(client.base_url, 1)[-1]).content
            version["download_url"] = hashlib.sha256(content).hexdigest()
        seen[document_id] = detail
        seen[document_id + " text"] = client.get(f"/api/documents/{document_id}/ocr-text").json()
    return seen


def served(config):
    server = Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    return server, thread


@pytest.mark.slow
@pytest.mark.parametrize("password", [None, "correct horse battery"])
def test_round_trip_restores_everything(alice, admin, filled, config, tmp_path, password):
    original = state(alice, admin, filled)
    archive = tmp_path / "backup.zip"
    stdin = password + "\n" if password else None
    options = ["--password-stdin"] if password else []
    made = dms("backup", archive, "--data-dir", config.data_dir, *options, stdin=stdin)
    assert made.returncode == 0, made.stderr
    assert made.stdout == f"Backup written to {archive}: 2 users, 6 folders, 3 documents, 6 files.\n"
    with zipfile.ZipFile(archive) as zipped:
        names = sorted(zipped.namelist())
        assert names[0] == "dms.db" and names[-1] == "manifest.json" and len(names) == 8
        assert bool(zipped.getinfo("dms.db").flag_bits & 0x1) == bool(password)

    restored_dir = tmp_path / "restored"
    result = dms("restore", archive, "--data-dir", restored_dir, *options, stdin=stdin)
    assert result.returncode == 0, result.stderr
    server, thread = served(Config(**{**config.__dict__, "data_dir": restored_dir}))
    try:
        # Tokens are restored too.
        restored = state(Client(server.url, alice.token), Client(server.url, admin.token), filled)
        # Links carry the server's address, which differs; everything else is identical.
        assert json.loads(json.dumps(restored).replace(server.url, alice.base_url)) == original
    finally:
        server.stop()
        thread.join(10)
    assert dms("verify", "--data-dir", restored_dir).returncode == 0


def test_refusals_leave_nothing_behind(alice, filled, config, tmp_path):
    tmp_path = tmp_path / "work"  # beside the server's data dir
    tmp_path.mkdir()
    archive = tmp_path / "backup.zip"
    assert dms("backup", archive, "--data-dir", config.data_dir, "--password-stdin",
               stdin="secret\n").returncode == 0
    target = tmp_path / "new"

    def refused(*options, stdin=None, where=target):
        result = dms("restore", archive, "--data-dir", where, *options, stdin=stdin)
        assert result.returncode == 1
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            ["backup.zip", *(["busy"] if (tmp_path / "busy").exists() else [])]), "left something"
        return result.stderr

    assert refused() == "dms: The password is missing or wrong.\n"
    assert refused("--password-stdin", stdin="wrong\n") == "dms: The password is missing or wrong.\n"
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file").write_text("x")
    assert refused("--password-stdin", stdin="secret\n", where=tmp_path / "busy") == \
        f"dms: {tmp_path / 'busy'} is not empty; restore into a new or empty folder.\n"


def test_a_flipped_byte_is_refused(alice, filled, config, tmp_path):
    tmp_path = tmp_path / "work"  # beside the server's data dir
    tmp_path.mkdir()
    archive = tmp_path / "backup.zip"
    assert dms("backup", archive, "--data-dir", config.data_dir).returncode == 0
    with zipfile.ZipFile(archive) as zipped:
        member = next(i for i in zipped.infolist() if i.filename.startswith("files/"))
    raw = bytearray(archive.read_bytes())
    # The member's data starts after its local header (30 bytes), name and extra field.
    name_length = int.from_bytes(raw[member.header_offset + 26:member.header_offset + 28], "little")
    extra_length = int.from_bytes(raw[member.header_offset + 28:member.header_offset + 30], "little")
    offset = member.header_offset + 30 + name_length + extra_length + 3
    raw[offset] ^= 0x01
    archive.write_bytes(bytes(raw))
    result = dms("restore", archive, "--data-dir", tmp_path / "new")
    assert result.returncode == 1
    assert result.stderr.startswith(f"dms: {member.filename} in the backup ")
    assert "damaged" in result.stderr
    assert not (tmp_path / "new").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["backup.zip"]


def test_newer_format_is_refused(alice, config, tmp_path):
    archive = tmp_path / "backup.zip"
    assert dms("backup", archive, "--data-dir", config.data_dir).returncode == 0
    newer = tmp_path / "newer.zip"
    with zipfile.ZipFile(archive) as source, zipfile.ZipFile(newer, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "manifest.json":
                manifest = json.loads(data)
                manifest["format_version"] = 99
                data = json.dumps(manifest).encode()
            target.writestr(info.filename, data)
    result = dms("restore", newer, "--data-dir", tmp_path / "new")
    assert (result.returncode, result.stderr) == (
        1, "dms: This backup was made by a newer dms (format 99); upgrade dms to restore it.\n")


def test_verify_finds_a_deleted_a_corrupted_and_an_orphaned_file(alice, filled, config):
    assert dms("verify", "--data-dir", config.data_dir).stdout.endswith("No problems found.\n")
    files = sorted(p for p in (config.data_dir / "files").rglob("*") if p.is_file())
    files[0].unlink()
    files[1].write_bytes(files[1].read_bytes() + b"rot")
    orphan = config.data_dir / "files" / "ab" / "abcdef00-0000-4000-8000-000000000000"
    orphan.parent.mkdir(exist_ok=True)
    orphan.write_bytes(b"nobody's")
    result = dms("verify", "--data-dir", config.data_dir)
    assert result.returncode == 1
    assert result.stdout == "\n".join([
        f"Checked {len(files) - 1} stored files.",
        "1 corrupt files (checksum or size differs):", f"  version {files[1].name} ({files[1]})",
        "1 missing files (version without its file):", f"  version {files[0].name}",
        "1 orphaned files (no version refers to them):", f"  {orphan}",
        "Problems found.", ""])
    # The server shows the last result to admins at /health, and only the status to others.
    report = json.loads((config.data_dir / "verify.json").read_text())
    assert report["ok"] is False and report["missing"] == [f"version {files[0].name}"]


def test_health_shows_the_last_verify_to_admins_only(admin, alice, anon, config):
    assert dms("verify", "--data-dir", config.data_dir).returncode == 0
    expected = json.loads((config.data_dir / "verify.json").read_text())
    wait_indexed(config)
    health = admin.get("/health").json()
    assert health == {"status": "ok", "verify": expected, "search": {
        "state": "ready", "pending_changes": 0, "indexed": health["search"]["indexed"]}}
    assert health["search"]["indexed"] == 4  # the .home and .inbox of admin and alice
    assert alice.get("/health").json() == {"status": "ok"}
    assert anon.get("/health").json() == {"status": "ok"}


@pytest.mark.slow
def test_backup_during_uploads_restores_a_consistent_state(alice, config, tmp_path):
    stop = threading.Event()
    uploaded = []

    def keep_uploading():
        index = 0
        while not stop.is_set():
            document_id = new_document(alice, f"busy {index}")
            upload(alice, document_id, "x.txt", samples.text(f"busy {index}\n"))
            uploaded.append(document_id)
            index += 1

    worker = threading.Thread(target=keep_uploading)
    worker.start()
    try:
        while len(uploaded) < 5:
            pass
        archive = tmp_path / "busy.zip"
        result = dms("backup", archive, "--data-dir", config.data_dir)
    finally:
        stop.set()
        worker.join()
    assert result.returncode == 0, result.stderr
    restored = tmp_path / "restored"
    assert dms("restore", archive, "--data-dir", restored).returncode == 0
    check = dms("verify", "--data-dir", restored)
    # Consistent: every version has its file, no stray file; documents may still be waiting for
    # OCR, which the restored server does at its start.
    assert "missing files" not in check.stdout and "orphaned" not in check.stdout
    assert "corrupt" not in check.stdout


# -- a restore checks everything before anything lands in the target ------------------------

@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """A real backup of a small data dir (made once for the module): alice with nested folders
    and three documents of one version each. Returns (archive, ids)."""
    from conftest import ADMIN_PASSWORD
    from test_verify import create, make_user, running
    from test_verify import upload as put

    root = tmp_path_factory.mktemp("base")
    config = Config(host="127.0.0.1", port=0, data_dir=root / "data", threads=4,
                    admin_username="admin", admin_password=ADMIN_PASSWORD, ocr_workers=1)
    with running(config) as server:
        alice = make_user(Client(server.url).login("admin", ADMIN_PASSWORD), "alice")
        outer = create(alice, "folders", "Outer", alice.home_id)
        inner = create(alice, "folders", "Inner", outer)
        documents = []
        for index, parent in enumerate((outer, inner, alice.inbox_id)):
            documents.append(create(alice, "documents", f"doc {index}", parent))
            put(alice, documents[-1], f"doc{index}.txt", samples.text(f"document {index}\n"))
        for document_id in documents:
            wait_for(alice, document_id)
    archive = root / "base.zip"
    assert dms("backup", archive, "--data-dir", config.data_dir).returncode == 0
    with zipfile.ZipFile(archive) as zipped:
        files = sorted(name for name in zipped.namelist() if name.startswith("files/"))
    return archive, {"outer": outer, "inner": inner, "home": alice.home_id, "files": files,
                     "versions": [name.rsplit("/", 1)[1] for name in files]}


def rebuild(source, target, *, database=None, manifest=None, drop=(), extra=None,
            symlink=None):
    """Write a changed copy of the backup `source` to `target`, with a manifest whose checksums
    match: `database(path)` changes a copy of dms.db, members in `drop` are left out (of the zip
    and the manifest), `extra` {name: bytes} is added, `manifest(dict)` returns the manifest to
    write (bytes are written as they are), and the member `symlink` is marked as a symlink."""
    with zipfile.ZipFile(source) as zipped:
        members = {name: zipped.read(name) for name in zipped.namelist()}
    listed = json.loads(members.pop("manifest.json"))
    if database is not None:
        path = target.with_name(target.name + ".db")
        path.write_bytes(members["dms.db"])
        database(path)
        members["dms.db"] = path.read_bytes()
        path.unlink()
    for name in drop:
        del members[name]
        del listed["files"][name]
    members.update(extra or {})
    for name, data in members.items():
        listed["files"][name] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    if manifest is not None:
        listed = manifest(listed)
    with zipfile.ZipFile(target, "w") as zipped:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 2, 3, 4, 5))
            if name == symlink:
                info.external_attr = 0o120777 << 16
            zipped.writestr(info, data)
        zipped.writestr("manifest.json", listed if isinstance(listed, bytes) else
                        json.dumps(listed).encode())
    return target


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
    from test_migrations import make_data_dir_at_migration_1

    from dms import db

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
    assert applied == {p.stem for p in db.migrations_dir().glob("[0-9]*.py")}
