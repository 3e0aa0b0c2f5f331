"""Search work is bounded: a search past its deadline is stopped with a 503, a search whose client
went away stops at once and frees its thread, and prefixes too short to be expanded cheaply match
only themselves in the text."""

from __future__ import annotations

import random
import socket
import time

import pytest

from dms import search
from dms.db.models import User
from dms.search import highlight
from tests.harness.client import JSON, assert_error
from tests.harness.database import add_document
from tests.harness.waiting import wait_indexed

DOCUMENTS = 16
NEEDLE = "needlework"


def costly_corpus(owner_id: str, parent_id: str) -> None:
    """DOCUMENTS documents of ~300 KiB of non-Latin words that match NEEDLE only past the first
    256 Ki characters that a snippet looks at: every snippet scans its whole window, folding each
    word (the costliest search; 20,000 distinct words, more than highlight's cache of folded
    words holds). PostgreSQL's index, which holds a text's first 1,000,000 bytes of distinct
    words and their beginnings, holds the needle too."""
    rnd = random.Random(3)
    alphabet = "абвгдеёжзийклмнопрстуфхцчшщыэюя"
    # Short words: the more words a snippet's window holds, the longer its scan (a fast machine
    # scanned 7-letter words in less than the premise below).
    vocabulary = ["".join(rnd.choice(alphabet) for _ in range(4)) for _ in range(20_000)]
    for number in range(DOCUMENTS):
        words = rnd.choices(vocabulary, k=60_000)
        words.insert(56_000, NEEDLE)
        assert len(" ".join(words[:56_000])) > highlight.SCAN_CHARS
        add_document(owner_id, parent_id, f"doc {number}", " ".join(words))


@pytest.fixture
def corpus(alice, server, config):
    costly_corpus(alice.user_id, alice.home_id)
    wait_indexed(config)
    user = User.get_by_id(alice.user_id)
    started = time.monotonic()
    results = search.query(server.app.services.search, user, NEEDLE, timeout=600)
    took = time.monotonic() - started
    assert len(results) == DOCUMENTS
    # The needle lies past the first 256 KiB of each text: no snippet, after a full scan.
    assert [r["highlight"] for r in results] == [None] * DOCUMENTS
    assert took > 0.4, f"the premise: the whole search takes long ({took:.2f} s)"
    return took


@pytest.mark.config(search_timeout_seconds=0.1)
def test_a_search_past_its_deadline_is_stopped(alice, corpus):
    started = time.monotonic()
    response = alice.get("/api/search/", params={"q": NEEDLE})
    assert time.monotonic() - started < min(1.0, corpus * 0.7)
    assert_error(response, 503, "unavailable", "The search took longer than 0.1 s and was "
                 "stopped; search for longer or more words.", media=JSON)


@pytest.mark.config(threads=1)
@pytest.mark.socket  # a client that leaves, waitress' only thread
def test_a_search_whose_client_left_stops_and_frees_its_thread(alice, corpus):
    host, port = alice.base_url.split("//")[1].split(":")
    abandoned = socket.create_connection((host, int(port)))
    abandoned.sendall(f"GET /api/search/?q={NEEDLE} HTTP/1.1\r\nHost: x\r\n"
                      f"Authorization: Token {alice.token}\r\n\r\n".encode())
    time.sleep(0.05)
    abandoned.close()
    started = time.monotonic()
    response = alice.get("/api/users/me/")  # the server's only thread must be free again
    waited = time.monotonic() - started
    assert response.status_code == 200
    # Not stopped, the search would hold the thread for the rest of its time (corpus - 0.05 s).
    assert waited < min(1.0, corpus * 0.6), f"waited {waited:.2f} s for the abandoned search"


def test_short_words_are_prefixes_of_titles_then_of_text(alice, config):
    first = add_document(alice.user_id, alice.home_id, "Quarterly report", "nothing here")
    second = add_document(alice.user_id, alice.home_id, "Notes", "quarterly figures")
    single = add_document(alice.user_id, alice.home_id, "Q", "q")
    wait_indexed(config)

    def found(q):
        return sorted(r["id"] for r in alice.get("/api/search/", params={"q": q}).json())

    assert found("q") == [single]  # one letter: only the word itself
    assert found("qu") == [first]  # two letters: titles starting with them
    assert found("qua") == sorted([first, second])  # three: titles and text
