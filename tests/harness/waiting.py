"""The one wait loop of the tests and benchmarks, and the waits built on it: a server that answers
503 while it builds its search index, a document's processing, the search index catching up."""

from __future__ import annotations

import sqlite3
import time


class WaitTimeout(AssertionError):
    """A wait_for() whose condition did not come true in time (an AssertionError: a test that
    waits in vain fails)."""


def wait_for(condition, timeout: float = 30.0, interval: float = 0.1, message="timed out"):
    """Call `condition()` at once and then every `interval` seconds until it returns a true
    value, and return that value. After `timeout` seconds raise WaitTimeout with `message`: a
    string, or a callable called then (to say what was seen last)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise WaitTimeout(message() if callable(message) else message)
        time.sleep(interval)


def wait_served(request, timeout: float = 30.0, interval: float = 0.1):
    """Repeat `request()`, an HTTP call, while its answer is 503 (what a server answers while it
    builds its search index); the first other answer."""
    answer = None

    def not_503() -> bool:
        nonlocal answer
        answer = request()
        return answer.status_code != 503

    wait_for(not_503, timeout=timeout, interval=interval,
             message=lambda: f"still 503 after {timeout} s: {answer.text}")
    return answer


def wait_processed(client, document_id, timeout=90):
    """Poll the document until processing ended; returns every status seen, in order."""
    return wait_status_ended(lambda: client.get(f"/api/documents/{document_id}/").json()[
        "data"]["attributes"]["ocr_status"], timeout, 0.1)


def wait_status_ended(status_of, timeout: float, interval: float) -> list[str]:
    """Poll `status_of()`, a document's `ocr_status`, until its reading ended (succeeded or
    failed); every status seen, in order."""
    seen: list[str] = []

    def ended() -> bool:
        status = status_of()
        if not seen or seen[-1] != status:
            seen.append(status)
        return status in ("succeeded", "failed")

    wait_for(ended, timeout=timeout, interval=interval,
             message=lambda: f"processing did not end: {seen}")
    return seen


def wait_indexed(target, timeout: float = 30) -> None:
    """Wait until the search index holds every change committed so far: the indexer deletes
    outbox rows only after the index committed them (dms.search.indexer). `target`: a Config or
    the path of an SQLite file. PostgreSQL's search is written in each change's own transaction:
    nothing to wait for."""
    if getattr(target, "database_url", None):
        return
    path = target.db_path if hasattr(target, "db_path") else target
    left = None

    def caught_up() -> bool:
        nonlocal left
        connection = sqlite3.connect(path)
        try:
            left = connection.execute("SELECT count(*) FROM search_outbox").fetchone()[0]
        finally:
            connection.close()
        return left == 0

    wait_for(caught_up, timeout=timeout, interval=0.02,
             message=lambda: f"the search index did not catch up: {left} changes left")
