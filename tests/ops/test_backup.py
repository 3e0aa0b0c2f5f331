"""Backup, restore and verify (README, "Backup and restore"), run as a user runs them."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import socket
import threading
import time
import zipfile

import pytest

from dms.config import Config
from dms.processing.languages import installed_languages
from tests.harness import samples
from tests.harness.appserver import empty_target, served
from tests.harness.backups import TABLES, describe, rebuild, row_lines
from tests.harness.client import JSON, Client
from tests.harness.database import query_sql, snapshot
from tests.harness.documents import new_document, upload
from tests.harness.processes import config_args, dms
from tests.harness.waiting import wait_for, wait_indexed, wait_processed, wait_served

LISTINGS = ["/api/folders/?page[size]=100", "/api/documents/?page[size]=100",
            "/api/tokens/?page[size]=100", "/api/webhooks/?page[size]=100",
            "/api/correspondents/?page[size]=100", "/api/document-types/?page[size]=100",
            "/api/custom-fields/?page[size]=100", "/api/tags/?page[size]=100",
            "/api/share-links/?page[size]=100", "/api/saved-searches/?page[size]=100"]
# A webhook whose host resolves nowhere (RFC 2606), disabled: nothing is tried behind the tests.
WEBHOOK = {"data": {"type": "webhooks", "attributes": {
    "url": "https://dms-webhook.invalid/hook", "events": ["node.created"],
    "secret": "the webhook's secret, sealed", "enabled": False}}}


def folder(client, title, parent):
    body = {"data": {"type": "folders", "attributes": {"title": title},
                     "relationships": {"parent": {"data": {"type": "folders", "id": parent}}}}}
    return client.post("/api/nodes/", body).json()["data"]["id"]


@pytest.fixture
def filled(admin, alice, config):
    """Users, nested folders, several versions, OCR text, tokens, a webhook, and what the
    documents are about: correspondents, document types, custom fields with values of every
    column's type, documentlinks both ways, notes, a document date and serial numbers; nested
    tags; a share link with a password and a saved search."""
    alice.post("/api/tokens/", {"expiry_hours": 10, "name": "scanner"}, media=JSON)
    assert alice.post("/api/webhooks/", WEBHOOK).status_code == 201
    outer = folder(alice, "Outer", alice.home_id)
    inner = folder(alice, "Inner", outer)
    documents = []
    for index, parent in enumerate((outer, inner, alice.inbox_id)):
        document_id = new_document(alice, f"doc {index}", parent)
        upload(alice, document_id, "v1.txt", samples.text(f"first version {index}\n"))
        upload(alice, document_id, "v2.pdf", samples.pdf([f"second version of document {index}"]))
        documents.append(document_id)
    for document_id in documents:
        wait_processed(alice, document_id)
    describe(alice, documents)
    # Nested tags, the child made before its parent (a restore into PostgreSQL meets it first).
    child = alice.post("/api/tags/", {"data": {"type": "tags", "attributes": {
        "name": "Invoices"}}}).json()["data"]["id"]
    parent = alice.post("/api/tags/", {"data": {"type": "tags", "attributes": {
        "name": "Finance"}}}).json()["data"]["id"]
    assert alice.patch(f"/api/tags/{child}/", {"data": {"type": "tags", "attributes": {
        "parent": parent}}}).status_code == 200
    expires = dt.datetime.now(dt.UTC) + dt.timedelta(days=30)
    assert alice.post("/api/share-links/", {"data": {"type": "share-links", "attributes": {
        "node": documents[0], "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "password": "a share password", "max_downloads": 5}}}).status_code == 201
    assert alice.post("/api/saved-searches/", {"data": {"type": "saved-searches", "attributes": {
        "name": "Versions", "query": "version", "sort": "title"}}}).status_code == 201
    return documents


def state(client, admin, documents) -> dict:
    """Everything a user and the admin can see: listings, document details (with their
    metadata), text and notes, every file's SHA-256."""
    seen = {path: client.get(path).json()["data"] for path in LISTINGS}
    for link in seen["/api/share-links/?page[size]=100"]:  # the restored server's address differs
        link["attributes"]["url"] = link["attributes"]["url"].split("/s/", 1)[1]
    seen["users"] = admin.get("/api/users/").json()["data"]
    for document_id in documents:
        detail = client.get(f"/api/documents/{document_id}/").json()["data"]
        for version in detail["attributes"]["versions"]:
            content = client.get(version["download_url"].split(client.base_url, 1)[-1]).content
            version["download_url"] = hashlib.sha256(content).hexdigest()
        seen[document_id] = detail
        seen[document_id + " text"] = client.get(f"/api/documents/{document_id}/ocr-text").json()
        seen[document_id + " notes"] = client.get(f"/api/documents/{document_id}/notes/").json()
    return seen




@pytest.mark.slow
@pytest.mark.parametrize("password", [None, "correct horse battery"])
def test_round_trip_restores_everything(alice, admin, server, filled, config, tmp_path,
                                        password, request):
    original = state(alice, admin, filled)
    first, second, third = filled  # the first links to the others, they back to it
    assert [[field["value"] for field in original[document]["attributes"]["custom_fields"]]
            for document in (second, third)] == [[[first]], [[first]]]
    archive = tmp_path / "backup.zip"
    stdin = password + "\n" if password else None
    options = ["--password-stdin"] if password else []
    made = dms("backup", archive, *config_args(config), *options, stdin=stdin)
    assert made.returncode == 0, made.stderr
    assert made.stdout == \
        f"Backup written to {archive}: 2 users, 6 folders, 3 documents, 6 files.\n"
    with zipfile.ZipFile(archive) as zipped:
        names = sorted(zipped.namelist())
        # mail.key: the key of the webhook's secret (and of mail passwords), made with it.
        assert [n for n in names if not n.startswith("files/")] == \
            ["mail.key", "manifest.json", *(f"tables/{table}.jsonl" for table in TABLES)]
        assert len(names) == 2 + len(TABLES) + 6
        assert bool(zipped.getinfo("tables/page.jsonl").flag_bits & 0x1) == bool(password)
        manifest = json.loads(zipped.read("manifest.json")) if not password else None
    if manifest:
        assert manifest["format_version"] == 2
        assert {t: manifest["tables"][t] for t in ("user", "node", "document_version")} == \
            {"user": 2, "node": 9, "document_version": 6}

    target = empty_target(config, request, tmp_path / "restored")
    result = dms("restore", archive, *config_args(target), *options, stdin=stdin)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in target.data_dir.iterdir()) == \
        (["files", "mail.key"] if config.database_url else ["dms.db", "files", "mail.key"])
    assert_same_state(target, alice, admin, filled, original, server)
    assert dms("verify", *config_args(target)).returncode == 0


def assert_same_state(config, alice, admin, documents, original, replacing) -> None:
    """A server on `config`, `replacing` the test's, shows what `original` recorded (tokens are
    restored too)."""
    server, thread = served(config, replacing)
    try:
        restored = state(Client(server.url, alice.token), Client(server.url, admin.token),
                         documents)
        # Links carry the server's address, which differs; everything else is identical.
        assert json.loads(json.dumps(restored).replace(server.url, alice.base_url)) == original
        # Search works again: on SQLite the restored server builds its index at start-up
        # (503 until then), on PostgreSQL the restore's rows arrived with their search rows.
        client = Client(server.url, alice.token)
        found = wait_served(lambda: client.get("/api/search/", params={"q": "second"}), timeout=60)
        assert sorted(r["id"] for r in found.json()) == sorted(documents)
        # ... with what the documents are about: a note's words, a correspondent's name.
        for words, expected in (("gekündigt", documents[:1]), ("stadtwerke", documents[:2])):
            found = client.get("/api/search/", params={"q": words})
            assert sorted(r["id"] for r in found.json()) == sorted(expected), words
        # The webhook's secret opens with the restored key (mail.key came with the backup): its
        # ping fails for its host, not for its secret.
        [webhook] = client.get("/api/webhooks/").json()["data"]
        ping = client.post(f"/api/webhooks/{webhook['id']}/test/").json()["data"]["attributes"]
        assert ping["error"] == "The host name dms-webhook.invalid could not be resolved."
    finally:
        server.stop()
        thread.join(10)


@pytest.mark.slow
@pytest.mark.postgresql_only
def test_a_home_moves_to_postgresql_and_back(alice, admin, server, filled, config, postgres,
                                             tmp_path):
    """PostgreSQL -> SQLite -> PostgreSQL, each step by `dms backup` and `dms restore`, each
    state served and compared: the documented way to move between the engines."""
    original = state(alice, admin, filled)
    to_sqlite = tmp_path / "from-postgresql.zip"
    assert dms("backup", to_sqlite, *config_args(config)).returncode == 0
    home = Config(**{**config.__dict__, "data_dir": tmp_path / "home", "database_url": None})
    restored = dms("restore", to_sqlite, *config_args(home))
    assert restored.returncode == 0, restored.stderr
    assert_same_state(home, alice, admin, filled, original, server)
    assert dms("verify", *config_args(home)).returncode == 0

    to_postgresql = tmp_path / "from-sqlite.zip"
    assert dms("backup", to_postgresql, *config_args(home)).returncode == 0
    office = Config(**{**config.__dict__, "data_dir": tmp_path / "office",
                       "database_url": postgres.new_database(empty=True)})
    moved = dms("restore", to_postgresql, *config_args(office))
    assert moved.returncode == 0, moved.stderr
    assert moved.stdout.startswith(f"Restored {to_postgresql} into {office.data_dir} and "
                                   f"postgresql://postgres@127.0.0.1:")
    assert_same_state(office, alice, admin, filled, original, server)
    assert dms("verify", *config_args(office)).returncode == 0

    # Into a database that already holds dms data: refused, nothing changed, no files left.
    again = Config(**{**office.__dict__, "data_dir": tmp_path / "again"})
    before = snapshot(office)
    refused = dms("restore", to_postgresql, *config_args(again))
    assert (refused.returncode, refused.stderr) == (1, (
        "dms: The PostgreSQL database already holds dms data; restore into a new, empty "
        "database.\n"))
    assert snapshot(office) == before and not again.data_dir.exists()


def test_refusals_leave_nothing_behind(alice, filled, config, tmp_path):
    tmp_path = tmp_path / "work"  # beside the server's data dir
    tmp_path.mkdir()
    archive = tmp_path / "backup.zip"
    assert dms("backup", archive, *config_args(config), "--password-stdin",
               stdin="secret\n").returncode == 0
    target = tmp_path / "new"

    def refused(*options, stdin=None, where=target):
        result = dms("restore", archive, "--data-dir", where, *options, stdin=stdin)
        assert result.returncode == 1
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            ["backup.zip", *(["busy"] if (tmp_path / "busy").exists() else [])]), "left something"
        return result.stderr

    assert refused() == ("dms: The backup is encrypted: give its password on standard input, "
                         "e.g. dms restore BACKUP.zip --password-stdin --data-dir DIR < "
                         "password-file.\n")
    assert refused("--password-stdin", stdin="wrong\n") == "dms: The password is wrong.\n"
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file").write_text("x")
    assert refused("--password-stdin", stdin="secret\n", where=tmp_path / "busy") == \
        f"dms: {tmp_path / 'busy'} is not empty; restore into a new or empty folder.\n"


def test_a_flipped_byte_is_refused(alice, filled, config, tmp_path):
    tmp_path = tmp_path / "work"  # beside the server's data dir
    tmp_path.mkdir()
    archive = tmp_path / "backup.zip"
    assert dms("backup", archive, *config_args(config)).returncode == 0
    with zipfile.ZipFile(archive) as zipped:
        member = next(i for i in zipped.infolist() if i.filename.startswith("files/"))
    raw = bytearray(archive.read_bytes())
    # The member's data starts after its local header (30 bytes), name and extra field.
    name_length = int.from_bytes(raw[member.header_offset + 26:member.header_offset + 28], "little")
    extra_length = int.from_bytes(raw[member.header_offset + 28:member.header_offset + 30],
                                  "little")
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
    assert dms("backup", archive, *config_args(config)).returncode == 0
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
    assert dms("verify", *config_args(config)).stdout.endswith("No problems found.\n")
    files = sorted(p for p in (config.data_dir / "files").rglob("*") if p.is_file())
    files[0].unlink()
    files[1].write_bytes(files[1].read_bytes() + b"rot")
    orphan = config.data_dir / "files" / "ab" / "abcdef00-0000-4000-8000-000000000000"
    orphan.parent.mkdir(exist_ok=True)
    orphan.write_bytes(b"nobody's")
    hours_ago = time.time() - 2 * 3600  # older than the sweep's grace period: not an upload
    os.utime(orphan, (hours_ago, hours_ago))
    result = dms("verify", *config_args(config))
    assert result.returncode == 1
    assert result.stdout == "\n".join([
        f"Checked {len(files) - 1} stored files.",
        "1 corrupt files (checksum or size differs):", f"  version {files[1].name} ({files[1]})",
        "1 missing files (version without its file):", f"  version {files[0].name}",
        "1 orphaned files (no version refers to them):", f"  {orphan}",
        "Problems found.", ""])
    # The server shows the last result to admins at /health, and only the status to others.
    report = last_verify(config)
    assert report["ok"] is False and report["missing"] == [f"version {files[0].name}"]


def last_verify(config) -> dict:
    """The last verify result, which every node reads from the database."""
    [(report,)] = query_sql(config, "SELECT report FROM verify_result WHERE id = 1")
    return json.loads(report)


def test_health_shows_the_last_verify_workers_and_queue_to_admins_only(admin, alice, anon,
                                                                        config, server):
    assert dms("verify", *config_args(config)).returncode == 0
    expected = last_verify(config)
    wait_indexed(config)
    health = admin.get("/health").json()
    if config.database_url:  # the search is the database's own: nothing to count or wait for
        search = {"state": "ready", "engine": "postgresql", "pending_changes": 0}
    else:  # the .home and .inbox of admin and alice
        search = {"state": "ready", "pending_changes": 0, "indexed": 4}
    [worker] = health.pop("workers")  # the server's own embedded workers
    assert worker == {"id": server.processor.worker_id, "host": socket.gethostname(),
                      "pid": os.getpid(), "languages": list(installed_languages()),
                      "concurrency": config.ocr_workers, "started_at": worker["started_at"],
                      "last_heartbeat": worker["last_heartbeat"], "live": True}
    assert worker["started_at"] <= worker["last_heartbeat"] <= utc_stamp_now()
    assert health == {"status": "ok", "verify": expected, "search": search,
                      "queue": {"engine": "sqlite", "pending": 0},
                      "intake": {"refused_last_24_hours": {"consume": 0, "mail": 0}},
                      "storage": {"kind": "local"}}
    assert alice.get("/health").json() == {"status": "ok"}
    assert anon.get("/health").json() == {"status": "ok"}


def utc_stamp_now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.slow
@pytest.mark.socket  # uploads on a thread of their own
def test_backup_during_uploads_restores_a_consistent_state(alice, config, tmp_path, request):
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
        wait_for(lambda: len(uploaded) >= 5, timeout=120, interval=0.01)
        archive = tmp_path / "busy.zip"
        result = dms("backup", archive, *config_args(config))
    finally:
        stop.set()
        worker.join()
    assert result.returncode == 0, result.stderr
    restored = empty_target(config, request, tmp_path / "restored")
    assert dms("restore", archive, *config_args(restored)).returncode == 0
    check = dms("verify", *config_args(restored))
    # Consistent: every version has its file, no stray file; documents may still be waiting for
    # OCR, which the restored server does at its start.
    assert "missing files" not in check.stdout and "orphaned" not in check.stdout
    assert "corrupt" not in check.stdout


@pytest.mark.postgresql_only
def test_a_refused_restore_leaves_the_postgresql_database_empty(alice, filled, config, postgres,
                                                               tmp_path):
    """Regression: the schema was created before the rows were refused, and stayed. Now the rows'
    checks come first, and the schema is made in the transaction that copies the rows."""
    archive = tmp_path / "backup.zip"
    assert dms("backup", archive, *config_args(config)).returncode == 0

    def change(column, value):
        def edit(lines):
            header, rows = row_lines(lines)
            for row in rows:
                row[header.index(column)] = value
            return [lines[0]] + [json.dumps(row) + "\n" for row in rows]
        return edit

    # A title the API would refuse (SQLite's checks), and a text PostgreSQL cannot hold (NUL).
    for table, column, value, message in (
            ("node", "title", "a/b", "dms: The backup's table node cannot be restored: row "),
            ("page", "text", "a\x00b", "dms: The backup's rows cannot be written into "
                                       "PostgreSQL: ")):
        bad = rebuild(archive, tmp_path / f"{table}.zip", rows={table: change(column, value)})
        target = Config(**{**config.__dict__, "data_dir": tmp_path / f"into-{table}",
                           "database_url": postgres.new_database(empty=True)})
        result = dms("restore", bad, *config_args(target))
        last = result.stderr.splitlines()[-1]  # after the log lines of the rolled-back schema
        assert result.returncode == 1 and last.startswith(message), result.stderr
        import psycopg

        with psycopg.connect(target.database_url) as connection:
            assert connection.execute("SELECT table_name FROM information_schema.tables "
                                      "WHERE table_schema = 'public'").fetchall() == []
        assert not target.data_dir.exists()
