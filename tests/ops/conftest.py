"""Fixtures of the restore's checks (test_restore_format1, test_restore_format2,
test_restore_values): a small data dir made once for each module, its backups in format 1 (the
SQLite file of dms 0.1) and format 2 (one file per table), and an empty folder to work in."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zipfile

import pytest

from dms.config import Config
from tests.harness import samples
from tests.harness.appserver import running
from tests.harness.client import Client
from tests.harness.documents import create_node, upload_accepted
from tests.harness.processes import dms
from tests.harness.users import ADMIN_PASSWORD, add_user
from tests.harness.waiting import wait_processed


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

@pytest.fixture
def work(tmp_path):
    folder = tmp_path / "work"
    folder.mkdir()
    return folder
