"""On PostgreSQL a search's statements stop at the search's own timeout (dms.db.statement_deadline):
a table the search reads held locked by another session, or a statement the planner gets wrong,
gives the connection back when the timeout has passed — the caller gets the search's 503
sentence, not an answer after the lock is gone — and the next search on the same connection runs
as before, with no timeout left behind."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from dms import search
from dms.db import DeadlinePassed, database, statement_deadline
from dms.errors import Unavailable
from tests.harness.database import add_document
from tests.harness.domaintier import home_id, new_user

pytestmark = pytest.mark.postgresql_only

LOCK_SECONDS = 8  # the lock is let go after this long, so that a search without a deadline ends


def titles(found: list[dict]) -> list[str]:
    return [result["title"] for result in found]


def test_a_search_stops_at_its_timeout_while_its_table_is_locked(services, config):
    alice = new_user("alice")
    add_document(alice.id, home_id(alice), "Mietvertrag", "Wohnung in der Altstadt")
    engine = search.engine(config.data_dir)
    assert titles(search.query(engine, alice, "wohnung", timeout=5)) == ["Mietvertrag"]
    with psycopg.connect(config.database_url) as locker:
        locker.execute("LOCK TABLE search_entry IN ACCESS EXCLUSIVE MODE")
        letting_go = threading.Timer(LOCK_SECONDS, locker.rollback)
        letting_go.start()
        started = time.monotonic()
        try:
            with pytest.raises(Unavailable) as refused:
                search.query(engine, alice, "wohnung", timeout=0.5)
            took = time.monotonic() - started
        finally:
            letting_go.join()
    assert refused.value.message == ("The search took longer than 0.5 s and was stopped; "
                                     "search for longer or more words.")
    assert took < 3
    assert database.execute_sql("SHOW statement_timeout").fetchone()[0] == "0"
    assert titles(search.query(engine, alice, "wohnung", timeout=5)) == ["Mietvertrag"]


def test_a_statement_past_the_deadline_is_stopped(services):
    started = time.monotonic()
    with pytest.raises(DeadlinePassed), statement_deadline(0.05):
        database.execute_sql("SELECT pg_sleep(5)")
    assert time.monotonic() - started < 2
    with statement_deadline(5):
        assert database.execute_sql("SHOW statement_timeout").fetchone()[0] == "5s"
        assert database.execute_sql("SELECT 1").fetchone()[0] == 1
    assert database.execute_sql("SHOW statement_timeout").fetchone()[0] == "0"
