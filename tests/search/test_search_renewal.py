"""An index kept open by steady use is let go and opened again every RENEW_SECONDS (what tantivy
allocates for an open index grows with its commits and searches): while it is renewed again and
again, changes keep coming in and searches keep answering, each finding at least what was
indexed before it began, and at the end the index holds exactly what the database does."""

from __future__ import annotations

import threading
import time

import pytest

from dms import search
from dms.search import indexer
from tests.harness.domaintier import home_id, new_folder, new_user
from tests.harness.waiting import wait_indexed

# The tantivy index of the SQLite mode.
pytestmark = pytest.mark.sqlite_only

WORD = "quillwort"
STEADY_SECONDS = 3.0
MAX_FOLDERS = 400  # within one page of search results (500)


def test_searches_and_changes_go_on_while_the_index_is_renewed(monkeypatch, reading):
    monkeypatch.setattr(indexer, "RENEW_SECONDS", 0.3)
    services = reading
    alice = new_user("alice")
    home = home_id(alice)
    made: list[str] = []
    problems: list[str] = []
    stop = threading.Event()

    def searching() -> None:
        while not stop.is_set():
            wait_indexed(services.config)
            before = set(made)  # committed before this search began: it finds them (freshness)
            try:
                found = {hit["title"] for hit in search.query(services.search, alice, WORD,
                                                               limit=500)}
            except Exception as error:  # a search must answer, renewed index or not
                problems.append(repr(error))
                return
            if not before <= found:
                problems.append(f"missing {sorted(before - found)[:3]}")

    searcher = threading.Thread(target=searching)
    searcher.start()
    started = time.monotonic()
    try:
        while time.monotonic() - started < STEADY_SECONDS and len(made) < MAX_FOLDERS:
            title = f"{WORD} {len(made)}"
            new_folder(services, alice, title, home)
            made.append(title)
            time.sleep(0.01)
    finally:
        stop.set()
        searcher.join(60)

    wait_indexed(services.config)
    found = [hit["title"] for hit in search.query(services.search, alice, WORD, limit=500)]
    assert problems == []
    assert sorted(found) == sorted(made)
    assert services.search.renewals >= 2  # renewed again and again meanwhile (every 0.3 s at most)
