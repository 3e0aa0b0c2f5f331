"""Search work is bounded (issue 11): a search past its deadline is stopped with a 503, and a
search whose client went away stops at once, freeing its thread."""

from __future__ import annotations

import random
import socket
import time

import pytest

from dms import search
from dms.db import database, write_transaction
from dms.models import Node, User, new_id, utcnow
from support import JSON, assert_error

DOCUMENTS = 100
NEEDLE = "needlework"


def big_corpus(owner_id: str, parent_id: str) -> None:
    """DOCUMENTS documents of ~300 KiB of text each that all match NEEDLE only at their very end,
    so that every result's snippet scans the whole window (the costliest search there is)."""
    rnd = random.Random(3)
    words = [''.join(rnd.choice("bcdfghjklmnpqrstvwxz") for _ in range(rnd.randint(3, 8)))
             for _ in range(5000)]
    body = " ".join(rnd.choice(words) for _ in range(55_000)) + " " + NEEDLE
    now = utcnow()
    with write_transaction():
        for number in range(DOCUMENTS):
            node_id = new_id()
            Node.insert(id=node_id, owner=owner_id, parent=parent_id, kind=Node.DOCUMENT,
                        title=f"doc {number}", title_sort=f"doc {number}", lang="eng", ocr=True,
                        ocr_status="succeeded", created_at=now, updated_at=now).execute()
            search.set_document_text(node_id, body)


@pytest.fixture
def corpus(alice):
    big_corpus(alice.user_id, alice.home_id)
    user = User.get_by_id(alice.user_id)
    started = time.monotonic()
    results = search.query(user, NEEDLE, limit=DOCUMENTS, timeout=600)
    took = time.monotonic() - started
    assert len(results) == DOCUMENTS and all(r["highlight"] is None for r in results)
    assert took > 2.0, f"the premise: the whole search takes long ({took:.2f} s)"
    return took


@pytest.mark.config(search_timeout_seconds=1.0)
def test_a_search_past_its_deadline_is_stopped(alice, corpus):
    started = time.monotonic()
    response = alice.get("/api/search/", params={"q": NEEDLE, "limit": DOCUMENTS})
    assert time.monotonic() - started < 1.8
    assert_error(response, 503, "unavailable", "The search took longer than 1 s and was stopped; "
                 "search for longer or more words.", media=JSON)


@pytest.mark.config(threads=1)
def test_a_search_whose_client_left_stops_and_frees_its_thread(alice, corpus):
    host, port = alice.base_url.split("//")[1].split(":")
    abandoned = socket.create_connection((host, int(port)))
    abandoned.sendall(f"GET /api/search/?q={NEEDLE}&limit={DOCUMENTS} HTTP/1.1\r\nHost: x\r\n"
                      f"Authorization: Token {alice.token}\r\n\r\n".encode())
    time.sleep(0.3)
    abandoned.close()
    started = time.monotonic()
    response = alice.get("/api/users/me/")  # the server's only thread must be free again
    waited = time.monotonic() - started
    assert response.status_code == 200
    assert waited < min(1.0, corpus / 2), f"waited {waited:.2f} s for the abandoned search"
