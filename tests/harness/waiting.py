"""Waiting for the server's background work: a condition, a document's processing, the search
index."""

from __future__ import annotations

import sqlite3
import time


def wait_for(client, document_id, timeout=90):
    """Poll the document until processing ended; returns every status seen, in order."""
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = client.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]["ocr_status"]
        if not seen or seen[-1] != status:
            seen.append(status)
        if status in ("succeeded", "failed"):
            return seen
        time.sleep(0.1)
    raise AssertionError(f"processing did not end: {seen}")


def wait_indexed(target, timeout: float = 30) -> None:
    """Wait until the search index holds every change committed so far: the indexer deletes
    outbox rows only after the index committed them (dms.search.indexer). `target`: a Config or
    the path of an SQLite file. PostgreSQL's search is written in each change's own transaction:
    nothing to wait for."""
    if getattr(target, "database_url", None):
        return
    path = target.db_path if hasattr(target, "db_path") else target
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        connection = sqlite3.connect(path)
        try:
            left = connection.execute("SELECT count(*) FROM search_outbox").fetchone()[0]
        finally:
            connection.close()
        if left == 0:
            return
        time.sleep(0.02)
    raise AssertionError(f"the search index did not catch up: {left} changes left")


def wait_until(condition, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("timed out")
