"""kill -9 of a `dms serve` storing in a bucket (api.md §19) while uploads are in flight: after
the next start every acknowledged upload downloads byte-equal, every version row's object is in
the bucket with the row's bytes, and what the killed uploads left is only objects no row names
(garbage for `dms storage gc`) or nothing."""

from __future__ import annotations

import signal
import sqlite3
import subprocess

import pytest

from tests.harness.bucketuploads import UploadStorm, object_shas, sha
from tests.harness.processes import (
    Running,
    admin_session,
    dms_command,
    environment,
    make_node,
)
from tests.harness.waiting import wait_for

# Kills the server and reads its SQLite file.
# Sockets (pytest-socket): a `dms serve` subprocess killed and started again, the S3 server.
pytestmark = [pytest.mark.sqlite_only, pytest.mark.slow, pytest.mark.enable_socket]

PASSWORD = "bucket-crash-pw"
THREADS = 6


def version_rows(data_dir) -> list[tuple[str, str, str, str | None]]:
    """(document id, version id, sha256, searchable_sha256) of every version."""
    connection = sqlite3.connect(data_dir / "dms.db")
    try:
        return connection.execute("SELECT document_id, id, sha256, searchable_sha256 FROM "
                                  "document_version ORDER BY id").fetchall()
    finally:
        connection.close()


def test_kill_9_during_uploads_to_the_bucket_loses_nothing_acknowledged(tmp_path, s3_server):
    data_dir = tmp_path / "data"
    prefix = "crash/"
    env = {**s3_server.dms_environment(prefix), "DMS_ADMIN_PASSWORD": PASSWORD}
    server = Running(data_dir, **env).drain()
    session, home = admin_session(server.url, PASSWORD)
    documents = [[make_node(session, server.url, "documents", f"t{thread}-{number}", home)
                  for number in range(40)] for thread in range(THREADS)]
    storm = UploadStorm([server.url] * THREADS,
                        session.headers["Authorization"].split()[1], documents).start()
    try:
        # Some acknowledged, and if it comes, an object in the bucket whose row is committing.
        storm.wait_for_committing(s3_server, prefix, acknowledged=2 * THREADS,
                                  through=server.url)
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=10)
    finally:
        if server.process.poll() is None:
            server.process.kill()
        storm.stop()
    assert len(storm.refused) == THREADS  # each thread had an upload in flight
    assert len(storm.acknowledged) >= 2 * THREADS

    restarted = Running(data_dir, **env, DMS_SWEEP_GRACE_MINUTES="0").drain()
    try:
        session.headers["Authorization"] = admin_session(restarted.url, PASSWORD)[0].headers[
            "Authorization"]
        with_versions = {document_id for document_id, *_ in version_rows(data_dir)}

        def every_reading_ended() -> bool:
            return all(session.get(f"{restarted.url}/api/documents/{document_id}/").json()[
                "data"]["attributes"]["ocr_status"] in ("succeeded", "failed")
                for document_id in with_versions)

        wait_for(every_reading_ended, timeout=120, interval=0.5,
                 message="the restarted server did not finish reading the uploads")
        for document_id, body in storm.acknowledged.items():
            download = session.get(f"{restarted.url}/api/documents/{document_id}/download/")
            assert (download.status_code, sha(download.content)) == (200, sha(body))
    finally:
        assert restarted.stop() == 0

    storm.check_bucket(version_rows(data_dir), object_shas(s3_server, prefix))
    assert list((data_dir / "tmp").iterdir()) == []
    assert not (data_dir / "files").exists()
    check = subprocess.run(dms_command("verify", "--data-dir", str(data_dir)),
                           env=environment(**env), capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.rstrip().endswith("No problems found."), check.stdout
