"""A large message is unpacked in a child process (dms.intake.mail.unpacking), a small one in the
checking thread: both ways take the same from the same messages, and what the child may spend is
capped. The thresholds are set on the module in this process, whose mail checks run in the test's
own server (the child is a real `python -m dms _mail-unpack`)."""

from __future__ import annotations

import os
import threading
import time

import pytest

from dms.intake.mail import unpacking
from dms.intake.mail._client import Budget
from dms.intake.mail._message import MessageLimits
from tests.harness import samples
from tests.harness.hostileimap import HostileImap, Message, many_headers
from tests.harness.mail import add_account, check, inbox, message
from tests.harness.processes import own_children

LONG_NAME = "Jahresabrechnung " + "Strom " * 60 + ".pdf"  # 378 characters


@pytest.fixture
def hostile():
    server = HostileImap([], "unpack").start()
    yield server
    server.stop()


def account_on(client, server) -> dict:
    return add_account(client, ("anyone", "any-password"), server)


def downloaded(client, document_id) -> bytes:
    response = client.get(f"/api/documents/{document_id}/download/")
    assert response.status_code == 200
    return response.content


@pytest.mark.parametrize("in_child", [True, False], ids=["every message in a child",
                                                         "every message in the thread"])
def test_a_child_and_the_checking_thread_take_the_same_from_the_same_messages(alice, hostile,
                                                                           monkeypatch, in_child):
    monkeypatch.setattr(unpacking, "IN_PROCESS_BYTES", -1 if in_child else 2**40)
    bill, note = samples.pdf(["Strom 2026 total 412.80"]), samples.text("Zählerstand 4711\n")
    hostile.messages = [
        Message(message("=?utf-8?q?Ihre_Jahresabrechnung_f=C3=BCr_2026?=",
                        [(LONG_NAME, bill, "application/pdf"), ("stand.txt", note, "text/plain")],
                        sender="Stadtwerke <post@stadtwerke.example>",
                        date="Mon, 30 Nov 2026 08:00:00 +0100")[0]),
        Message(many_headers(1_001)),
        Message(message("No attachment here")[0])]
    account = account_on(alice, hostile)
    first = check(alice, account["id"])["attributes"]
    assert (first["last_error"], first["imported_count"]) == (
        "The message '<m2@unpack.example>' was refused: it has more than 1,000 header fields; it "
        "is left in the mailbox.", 2)
    documents = inbox(alice)
    assert sorted((title, d["attributes"]["file_name"]) for title, d in documents.items()) == [
        (LONG_NAME[:200], LONG_NAME[:255]), ("stand.txt", "stand.txt")]  # a title's, a name's
    origin = {"subject": "Ihre Jahresabrechnung für 2026",
              "from": "Stadtwerke <post@stadtwerke.example>", "date": "2026-11-30T07:00:00Z",
              "message_id": "<m1@unpack.example>"}
    assert [documents[title]["attributes"]["mail"] for title in sorted(documents)] == [origin] * 2
    assert downloaded(alice, documents[LONG_NAME[:200]]["id"]) == bill
    assert downloaded(alice, documents["stand.txt"]["id"]) == note
    again = check(alice, account["id"])["attributes"]
    assert (again["last_error"], again["imported_count"]) == (None, 2)
    assert hostile.fetches == {1: 1, 2: 1, 3: 1}


def test_a_message_needing_more_memory_than_its_child_may_have_is_refused(alice, hostile,
                                                                          monkeypatch):
    """24 MiB of raw 8-bit bytes took the child 136 MiB of address space; capped at 100 MiB, it
    is refused, remembered, and the next message imported; the checking process never held it.
    (By default a child may have 512 MiB, and 64 + 6 MiB for each MiB of DMS_MAIL_MAX_MESSAGE_MB
    where that is more.)"""
    monkeypatch.setattr(unpacking, "CHILD_MEMORY_MB", 100)
    monkeypatch.setattr(unpacking, "MEMORY_PER_MESSAGE_MB", 0)
    raw = b"Subject: raw\r\nFrom: someone@example.org\r\n\r\n" + os.urandom(24 * 2**20)
    receipt = samples.pdf(["Receipt 17"])
    hostile.messages = [Message(raw), Message(message("Receipt", [
        ("receipt.pdf", receipt, "application/pdf")])[0])]
    account = account_on(alice, hostile)
    first = check(alice, account["id"])["attributes"]
    assert (first["last_error"], first["imported_count"]) == (
        "The message '<m1@unpack.example>' was refused: it needs more memory than this server "
        "gives the reading of one message; it is left in the mailbox.", 1)
    assert list(inbox(alice)) == ["receipt.pdf"]
    again = check(alice, account["id"])["attributes"]
    assert (again["last_error"], again["imported_count"]) == (None, 1)
    assert hostile.fetches == {1: 1, 2: 1}


def test_a_message_taking_longer_than_its_child_may_take_is_refused(alice, hostile, monkeypatch,
                                                                    config):
    monkeypatch.setattr(unpacking, "IN_PROCESS_BYTES", -1)
    monkeypatch.setattr(unpacking, "CHILD_SECONDS", 0.01)  # less than a child's start
    monkeypatch.setattr(unpacking, "POLL_SECONDS", 0.005)
    hostile.messages = [Message(message("Slow", [
        ("slow.pdf", samples.pdf(["Slow"]), "application/pdf")])[0])]
    account = account_on(alice, hostile)
    first = check(alice, account["id"])["attributes"]
    assert (first["last_error"], first["imported_count"]) == (
        "The message '<m1@unpack.example>' was refused: it took longer than 0.01 s to read; it "
        "is left in the mailbox.", 0)
    assert inbox(alice) == {}
    assert os.listdir(config.data_dir / "tmp") == []  # the child killed, its files removed


def unpacking_children() -> list[int]:
    """The pids of this process' `dms _mail-unpack` children still there."""
    return own_children(unpacking.UNPACK_COMMAND)


@pytest.mark.parametrize("ended_by", ["its deadline", "the server stopping"])
def test_a_check_ending_while_its_message_is_unpacked_kills_the_child(tmp_path, monkeypatch,
                                                                      ended_by):
    """The message is a named pipe that nobody writes: the child waits on it for ever."""
    monkeypatch.setattr(unpacking, "IN_PROCESS_BYTES", -1)
    message = tmp_path / "message"
    os.mkfifo(message)
    budget = Budget(2**20, 2**24, seconds=0.5 if ended_by == "its deadline" else 60)
    if ended_by == "the server stopping":
        threading.Timer(0.5, budget.expire).start()
    started = time.monotonic()
    with pytest.raises(unpacking.CheckEnded):
        unpacking.unpack_message(message, tmp_path, "<m1@example.org>", MessageLimits(), budget,
                                 25)
    assert 0.5 <= time.monotonic() - started < 0.5 + unpacking.POLL_SECONDS + 2
    assert budget.expired
    assert unpacking_children() == []
    assert sorted(os.listdir(tmp_path)) == ["message"]


def test_a_child_may_have_more_memory_where_messages_may_be_larger():
    assert [unpacking.child_memory_mb(mb) for mb in (1, 25, 74, 100, 1024)] == [
        512, 512, 512, 664, 6208]
