"""What an earlier dms wrote keeps working: a data dir and a backup made by dms 0.2, before the
package move (tests/fixtures/v0.2/), are served and restored by today's code, with the same folders,
file, text, tag and search results."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tarfile
import threading
from pathlib import Path

import pytest

from dms.config import Config
from dms.db.schema import (
    POSTGRESQL_BASELINE,
    latest_schema_version,
    schema_version,
    shipped_migrations,
)
from dms.ops import verify
from dms.web.server import Server
from tests.harness import samples
from tests.harness.client import Client
from tests.harness.processes import config_args
from tests.harness.waiting import wait_for, wait_indexed

# Sockets (pytest-socket): servers on upgraded data dirs, asked over HTTP.
pytestmark = pytest.mark.enable_socket

FIXTURES = Path(__file__).parent.parent / "fixtures" / "v0.2"
ALICE = ("alice", "alice-password-1")
FOLDER_ID = "ac42d7a2-e6ae-4410-9caa-333c1e631a65"
DOCUMENT_ID = "263025cd-497a-4277-959d-2177590c084d"
LETTER = samples.pdf(["Stadtwerke electricity invoice November 2026", "Total 42.17 EUR"])


def served(config: Config):
    server = Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    return server, thread


def assert_as_dms_0_2_left_it(server: Server, config: Config) -> None:
    alice = Client(server.url).login(*ALICE)
    listing = alice.get(f"/api/nodes/{FOLDER_ID}/").json()["data"]
    assert [(node["id"], node["attributes"]["title"]) for node in listing] == \
        [(DOCUMENT_ID, "Electricity")]
    document = alice.get(f"/api/documents/{DOCUMENT_ID}/").json()["data"]["attributes"]
    assert (document["ocr_status"], document["page_count"], document["file_name"],
            document["breadcrumb"], [tag["name"] for tag in document["tags"]]) == \
        ("succeeded", 2, "letter.pdf", [[".home", alice.home_id], ["Bills 2026", FOLDER_ID],
                                        ["Electricity", DOCUMENT_ID]], ["paid"])
    download = alice.get(document["versions"][0]["download_url"])
    assert hashlib.sha256(download.content).hexdigest() == hashlib.sha256(LETTER).hexdigest()
    assert alice.get(f"/api/documents/{DOCUMENT_ID}/ocr-text").json() == \
        {"text": "Stadtwerke electricity invoice November 2026\n\nTotal 42.17 EUR"}
    wait_indexed(config)
    # The index of dms 0.2 is of an older format: the server builds it again at its start, and
    # answers 503 until then (an empty outbox says nothing of that build).
    wait_for(lambda: alice.get("/api/search/?q=stadtwerke").status_code == 200,
             message="the search index of the upgraded data dir was not rebuilt")
    hits = alice.get("/api/search/?q=stadtwerke").json()
    assert [(hit["id"], hit["breadcrumb"], hit["tags"]) for hit in hits] == \
        [(DOCUMENT_ID, [".home", "Bills 2026", "Electricity"], ["paid"])]


@pytest.mark.sqlite_only  # the fixture is an SQLite data dir
def test_a_data_dir_of_dms_0_2_is_served_as_it_was(tmp_path):
    with tarfile.open(FIXTURES / "data.tar.gz") as archive:
        archive.extractall(tmp_path, filter="data")
    config = Config(host="127.0.0.1", port=0, data_dir=tmp_path / "data", threads=4,
                    ocr_workers=1)
    server, thread = served(config)
    try:
        assert schema_version() == latest_schema_version()
        assert_as_dms_0_2_left_it(server, config)
        report = verify.run(config.data_dir, files_dir=config.files_path)
        assert report.ok, report.lines()
    finally:
        server.stop()
        thread.join(15)


def test_a_backup_of_dms_0_2_restores(tmp_path, request, engine):
    url = request.getfixturevalue("postgres").new_database(empty=True) \
        if engine == "postgresql" else None
    config = Config(host="127.0.0.1", port=0, data_dir=tmp_path / "restored", threads=4,
                    ocr_workers=1, database_url=url)
    archive = tmp_path / "backup.zip"
    shutil.copyfile(FIXTURES / "backup.zip", archive)
    result = subprocess.run([sys.executable, "-m", "dms", "restore", str(archive),
                             *config_args(config)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"Restored {archive} into {config.data_dir}")
    # The migrations since dms 0.2 (0012 on), logged once in one line; on PostgreSQL also the
    # empty database's own schema, made before the rows are copied in.
    shipped = shipped_migrations()
    expected = [f"dms.db: applied {len(shipped) - 11} schema migration(s): "
                f"0012_intake_refusals to {shipped[-1]}"]
    if url:
        after = shipped.index(POSTGRESQL_BASELINE) + 1
        expected += [f"dms.db: created the PostgreSQL schema (baseline {POSTGRESQL_BASELINE})",
                     f"dms.db: applied {len(shipped) - after} schema migration(s): "
                     f"{shipped[after]} to {shipped[-1]}"]
    assert [line.split(" INFO ", 1)[1] for line in result.stderr.splitlines()] == expected
    assert "(made by dms 0.1.0 at 2026-11-25T17:51" in result.stdout
    server, thread = served(config)
    try:
        assert_as_dms_0_2_left_it(server, config)
    finally:
        server.stop()
        thread.join(15)
