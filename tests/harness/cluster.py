"""A cluster's lane on one machine (tests/e2e/test_multinode*.py): web nodes and workers
(tests.harness.nodes) on one PostgreSQL database and one Redis, with short timings so that its
behaviour shows within seconds; the admin's clients on two nodes; waiting for a reading, a long
scan a worker is reading, the pages each worker read (from their logs), an upload left hanging."""

from __future__ import annotations

import re
import socket
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlsplit

from tests.harness import samples
from tests.harness.client import Client
from tests.harness.database import query_sql
from tests.harness.documents import new_document, upload
from tests.harness.nodes import NodeGroup
from tests.harness.redisserver import RedisServer
from tests.harness.waiting import wait_for

PASSWORD = "cluster-admin-pw"
# Leases expire after 3 s, reconcile runs every 3 s and verify every 7.2 s.
TIMING = {"DMS_LEASE_SECONDS": "3", "DMS_RECONCILE_MINUTES": "0.05", "DMS_VERIFY_HOURS": "0.002",
          "DMS_RULE_RUNS_MINUTES": "0.05", "DMS_OCR_WORKERS": "1", "DMS_OCR_SLICE_SECONDS": "60",
          # The webhooks' receiver of the tests is on loopback.
          "DMS_OUTBOUND_ALLOW": "127.0.0.1"}


class Cluster(NodeGroup):
    """Web nodes and workers on one database and one Redis; `env` says where the files are (a
    shared files dir, a bucket)."""

    def __init__(self, root: Path, database_url: str, redis: RedisServer, **env: str):
        super().__init__(root, {"DMS_DATABASE_URL": database_url, "DMS_QUEUE_URL": redis.url(),
                                "DMS_ADMIN_PASSWORD": PASSWORD, **TIMING, **env})
        self.database = SimpleNamespace(database_url=database_url)

    def sql(self, statement: str, *params) -> list[tuple]:
        return query_sql(self.database, statement, *params)


def admin_clients(cluster: Cluster) -> tuple[Client, Client]:
    """The admin, logged in through node A, and the same token used on node B."""
    a = Client(cluster.web["a"].url).login("admin", PASSWORD)
    b = Client(cluster.web["b"].url, a.token)
    b.home_id, b.user_id = a.home_id, a.user_id
    return a, b


def wait_succeeded(client: Client, document_id: str, timeout: float = 120) -> dict:
    attributes = {}

    def ended() -> dict | None:
        attributes.update(client.get(f"/api/documents/{document_id}/").json()["data"][
            "attributes"])
        return attributes if attributes["ocr_status"] in ("succeeded", "failed") else None

    return wait_for(ended, timeout=timeout, interval=0.2,
                    message=lambda: f"document {document_id} was not processed: {attributes}")


def read_pages(logs: str) -> dict[str, list[int]]:
    """Every page each version's workers read and saved, from the workers' log lines."""
    pages: dict[str, list[int]] = {}
    for version_id, runs in re.findall(r"version (\S+): read page\(s\) ([\d, -]+)\n", logs):
        for run in runs.split(", "):
            first, _, last = run.partition("-")
            pages.setdefault(version_id, []).extend(range(int(first), int(last or first) + 1))
    return pages


def upload_long_scan(cluster: Cluster, client: Client, pages: int) -> tuple[str, str, str]:
    """Upload a scan of `pages` pages and wait until a worker holds its lease and has saved a
    page: (document id, version id, the reading worker's id)."""
    document_id = new_document(client, "long scan")
    texts = [f"Statement page {n}" for n in range(1, pages + 1)]
    response = upload(client, document_id, "long.tiff", samples.tiff(texts))
    assert response.status_code == 201, response.text
    version_id = response.json()["data"]["attributes"]["versions"][0]["id"]

    def reading_worker() -> str | None:
        rows = cluster.sql("SELECT worker_id FROM lease WHERE version_id = ?", version_id)
        saved = cluster.sql("SELECT count(*) FROM page WHERE version_id = ? AND method IS NOT "
                            "NULL", version_id)[0][0]
        return rows[0][0] if rows and saved else None

    worker_id = wait_for(reading_worker, timeout=60, interval=0.05,
                         message="no worker started reading the document")
    return document_id, version_id, worker_id


def slow_upload(url: str, token: str, document_id: str, total: int) -> socket.socket:
    """Send the headers and half the body of an upload, then leave it hanging."""
    parts = urlsplit(url)
    connection = socket.create_connection((parts.hostname, parts.port))
    connection.sendall((f"PUT /api/documents/{document_id}/upload/big.txt HTTP/1.1\r\n"
                        f"Host: {parts.hostname}\r\nAuthorization: Token {token}\r\n"
                        f"Content-Type: application/octet-stream\r\n"
                        f"Content-Length: {total}\r\n\r\n").encode() + b"x" * (total // 2))
    return connection
