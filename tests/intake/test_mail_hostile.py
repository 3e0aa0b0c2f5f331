"""Hostile mail servers and messages against a real dms server: a fake IMAP server in the test
(tests/harness/hostileimap.py) announces 10 GB, answers one fetch with 15 messages of 24 MiB, sends
more than it said, trickles one byte a second, or serves a Subject of 28,000 encoded words and a
MIME nesting of 5,000 levels. The server's memory stays bounded, every check ends by its deadline,
other users are served meanwhile, a refused message is named in last_error and never fetched again,
and last_error never tells one kind of unreachable port from another."""

from __future__ import annotations

import socket
import threading
import time
from email.message import EmailMessage
from types import SimpleNamespace

import pytest

from tests.harness import samples
from tests.harness.client import assert_error
from tests.harness.hostileimap import (
    HostileImap,
    Message,
    encoded_word_subject,
    huge_literal,
    many_headers,
    many_lines,
    many_literals,
    nested_mime,
    stall,
    trickle,
)
from tests.harness.mail import add_account, checked, inbox, message
from tests.harness.memory import peak_growth_mib
from tests.harness.processes import free_port

UNREACHABLE = ("No IMAP server could be reached at 127.0.0.1:{port} (nothing answered, the "
               "connection was refused or cut, or what answered was not an IMAP server).")


@pytest.fixture
def hostile():
    server = HostileImap().start()
    yield server
    server.stop()


def account_on(client, server) -> dict:
    return add_account(client, ("anyone", "any-password"), server)


def check(client, account_id, timeout=60, bystander=None) -> dict:
    """Ask for a check and wait for its result; with a `bystander` (another user's client), that
    user is answered at once, again and again, while the check runs."""
    path = f"/api/mail-accounts/{account_id}/"
    before = client.get(path).json()["data"]["attributes"]["last_checked_at"]
    started = time.monotonic()
    response = client.post(path + "check/")
    assert response.status_code == 202, response.text
    assert time.monotonic() - started < 2  # it only queues the check
    if bystander is not None:
        served_while(bystander, lambda: client.get(path).json()["data"]["attributes"]["checking"])
    return checked(client, account_id, before, timeout)["attributes"]


def served_while(bystander, busy) -> None:
    """`bystander` asks for their profile once, and again as long as `busy()`: every answer is a
    200, none of them slow (a check never holds a request thread)."""
    slowest = 0.0
    while True:
        before = time.monotonic()
        assert bystander.get("/api/users/me/").status_code == 200
        slowest = max(slowest, time.monotonic() - before)
        if not busy():
            break
    assert slowest < 5, f"another user waited {slowest:.1f} s for an answer"


def with_pdf(text: str) -> bytes:
    return message(text, [(f"{text}.pdf", samples.pdf([text]), "application/pdf")])[0]


@pytest.mark.config(mail_max_message_mb=1)
@pytest.mark.socket  # bob served through waitress meanwhile
def test_a_server_announcing_ten_gigabytes_is_stopped_before_reading_it(alice, bob, hostile):
    hostile.messages = [Message(b"x" * 100, claimed_size=100, send_body=huge_literal),
                        Message(with_pdf("Gas bill"))]
    account = account_on(alice, hostile)
    outcome = {}
    growth = peak_growth_mib(lambda: outcome.update(
        first=check(alice, account["id"], bystander=bob)))
    assert outcome["first"]["last_error"] == (
        "The mail server sent a message of 9537 MiB, more than 1 MiB (DMS_MAIL_MAX_MESSAGE_MB); "
        "the check was stopped and that message is left in the mailbox.")
    assert growth < 150, f"the server's RSS grew by {growth:.0f} MiB"
    second = check(alice, account["id"])
    assert (second["last_error"], second["imported_count"]) == (None, 1)
    assert hostile.fetches == {1: 1, 2: 1}  # the huge one is never asked for again
    assert list(inbox(alice)) == ["Gas bill.pdf"]


@pytest.mark.socket  # the other user served through waitress meanwhile
def test_one_answer_of_many_large_messages_is_stopped_at_one_message(make_user, hostile):
    """At the default limits (25 MiB a message, 400 MiB a check): one fetch answered with 15
    messages of 24 MiB, each under the limit, held 1.2 GB in the server before."""
    alice, bystander = make_user(), make_user()
    hostile.messages = [Message(b"x" * 100, claimed_size=100, send_body=many_literals),
                        Message(with_pdf("Phone bill"))]
    account = account_on(alice, hostile)
    outcome = {}
    growth = peak_growth_mib(lambda: outcome.update(
        first=check(alice, account["id"], bystander=bystander)))
    assert (outcome["first"]["last_error"], outcome["first"]["imported_count"]) == (
        "The mail server sent more than 26 MiB in answer to one request, more than a message of "
        "25 MiB (DMS_MAIL_MAX_MESSAGE_MB) needs; the check was stopped and that message is left "
        "in the mailbox.", 0)
    assert growth < 150, f"the server's RSS grew by {growth:.0f} MiB"
    second = check(alice, account["id"])
    assert (second["last_error"], second["imported_count"]) == (None, 1)
    assert hostile.fetches == {1: 1, 2: 1}  # the hostile one is never asked for again
    assert list(inbox(alice)) == ["Phone bill.pdf"]


@pytest.mark.config(mail_max_message_mb=1)
def test_a_server_sending_more_than_it_announced_is_stopped_at_the_check_budget(alice, hostile):
    note = b"Subject: note\r\nMessage-ID: <n@x>\r\n\r\n" + b"y" * (900 * 1024) + b"\r\n"
    hostile.messages = [Message(note, claimed_size=100) for _ in range(30)]
    account = account_on(alice, hostile)
    outcome = {}
    growth = peak_growth_mib(lambda: outcome.update(first=check(alice, account["id"])))
    assert outcome["first"]["last_error"] == (
        "The mail server sent more than 16 MiB in one check; the check was stopped and goes on "
        "at the next one.")
    assert growth < 150, f"the server's RSS grew by {growth:.0f} MiB"
    assert 15 <= sum(hostile.fetches.values()) <= 19


@pytest.mark.config(mail_check_seconds=3)
@pytest.mark.socket  # others served through waitress meanwhile
def test_trickling_servers_are_cut_at_the_deadline_while_others_are_served(make_user, hostile):
    hostile.messages = [Message(with_pdf("Slow letter"), send_body=trickle)]
    users = [make_user() for _ in range(8)]
    accounts = [account_on(user, hostile) for user in users]
    bystander = make_user()
    started = time.monotonic()
    for user, account in zip(users, accounts, strict=True):
        before = time.monotonic()
        response = user.post(f"/api/mail-accounts/{account['id']}/check/")
        assert response.status_code == 202, response.text
        assert response.json()["data"]["attributes"]["checking"] is True
        assert time.monotonic() - before < 2
    slowest = 0.0
    while time.monotonic() - started < 5:
        before = time.monotonic()
        assert bystander.get("/api/users/me/").status_code == 200
        slowest = max(slowest, time.monotonic() - before)
    assert slowest < 1.5, slowest
    for user, account in zip(users, accounts, strict=True):
        result = checked(user, account["id"], None, timeout=30)["attributes"]
        assert (result["last_error"], result["imported_count"]) == (
            "The check took longer than 3 s (DMS_MAIL_CHECK_SECONDS) and was stopped; it goes on "
            "at the next one.", 0)
    # Four at a time, each cut after 3 s: eight take about 6 s, never as long as the server wants.
    assert time.monotonic() - started < 20


@pytest.mark.config(mail_check_seconds=3)
def test_a_user_has_at_most_two_checks_under_way(alice, hostile, config):
    hostile.messages = [Message(with_pdf("Slow letter"), send_body=trickle)]
    accounts = [account_on(alice, hostile) for _ in range(3)]
    for account in accounts[:2]:
        assert alice.post(f"/api/mail-accounts/{account['id']}/check/").status_code == 202
    third = alice.post(f"/api/mail-accounts/{accounts[2]['id']}/check/")
    assert_error(third, 429, "throttled", "You have 2 checks of mail accounts under way; try "
                                          "again when they are done.")
    assert third.headers["Retry-After"] == "10"
    assert alice.get(f"/api/mail-accounts/{accounts[2]['id']}/").json()["data"]["attributes"][
        "checking"] is False


@pytest.mark.config(mail_check_seconds=3, mail_checks_per_node=3)
def test_a_node_full_of_checks_answers_503_and_queues_nothing(alice, bob, hostile):
    hostile.messages = [Message(with_pdf("Slow letter"), send_body=stall)]
    accounts = {"alice": [account_on(alice, hostile) for _ in range(2)],
                "bob": [account_on(bob, hostile) for _ in range(2)]}
    for client, account in ((alice, accounts["alice"][0]), (alice, accounts["alice"][1]),
                            (bob, accounts["bob"][0])):
        assert client.post(f"/api/mail-accounts/{account['id']}/check/").status_code == 202
    refused = accounts["bob"][1]
    assert_error(bob.post(f"/api/mail-accounts/{refused['id']}/check/"), 503, "unavailable",
                 "This server is checking many mail accounts right now; try again in a moment.")
    for client, account in ((alice, accounts["alice"][0]), (alice, accounts["alice"][1]),
                            (bob, accounts["bob"][0])):
        result = checked(client, account["id"], None, timeout=30)["attributes"]
        assert result["last_error"] == ("The check took longer than 3 s (DMS_MAIL_CHECK_SECONDS) "
                                        "and was stopped; it goes on at the next one.")
    after = bob.get(f"/api/mail-accounts/{refused['id']}/").json()["data"]["attributes"]
    assert (after["checking"], after["last_checked_at"], after["last_error"]) == (False, None, None)
    assert len(hostile.sessions) == 3  # the refused check never connected
    assert bob.post(f"/api/mail-accounts/{refused['id']}/check/").status_code == 202  # room again


@pytest.mark.config(mail_check_seconds=3, mail_checks_parallel=2)
def test_a_node_runs_at_most_its_parallel_checks_at_once(make_user, hostile):
    hostile.messages = [Message(with_pdf("Slow letter"), send_body=stall)]
    users = [make_user() for _ in range(3)]
    accounts = [(user, account_on(user, hostile)) for user in users for _ in range(2)][:5]
    for user, account in accounts:
        response = user.post(f"/api/mail-accounts/{account['id']}/check/")
        assert response.status_code == 202, response.text
    for user, account in accounts:  # two at a time, each cut after 3 s: about 9 s
        checked(user, account["id"], None, timeout=60)
    assert len(hostile.sessions) == 5
    assert hostile.most_at_once() == 2


@pytest.mark.socket  # bob served through waitress meanwhile
def test_a_subject_of_encoded_words_is_refused_remembered_and_the_rest_imported(alice, bob,
                                                                               hostile):
    """28,000 encoded words (381 KB) took 3 GB to parse: the header section is over 256 KiB;
    15,000 of them (210 KB) make one header longer than 8 KiB."""
    bomb, smaller = encoded_word_subject(), encoded_word_subject(15_000)
    assert len(bomb) < 400_000 and 200_000 < len(smaller) < 256 * 1024
    hostile.messages = [Message(bomb), Message(smaller), Message(with_pdf("Water bill"))]
    account = account_on(alice, hostile)
    outcome = {}
    growth = peak_growth_mib(lambda: outcome.update(
        first=check(alice, account["id"], bystander=bob)))
    assert (outcome["first"]["last_error"], outcome["first"]["imported_count"]) == (
        "The message '<m1@hostile.example>' was refused: its header is larger than 256 KiB; it "
        "is left in the mailbox. The message '<m2@hostile.example>' was refused: one of its "
        "headers is longer than 8 KiB (DMS_MAIL_MAX_HEADER_KB); it is left in the mailbox.", 1)
    assert growth < 150, f"the server's RSS grew by {growth:.0f} MiB"
    assert list(inbox(alice)) == ["Water bill.pdf"]
    again = check(alice, account["id"])
    assert (again["last_error"], again["imported_count"]) == (None, 1)
    assert hostile.fetches == {1: 1, 2: 1, 3: 1}


def test_a_mime_nesting_of_five_thousand_levels_is_refused_and_the_rest_imported(alice,
                                                                                 hostile):
    hostile.messages = [Message(nested_mime()), Message(with_pdf("Tax notice"))]
    account = account_on(alice, hostile)
    outcome = {}
    growth = peak_growth_mib(lambda: outcome.update(first=check(alice, account["id"])))
    assert (outcome["first"]["last_error"], outcome["first"]["imported_count"]) == (
        "The message '<m1@hostile.example>' was refused: it has more than 50 nested MIME parts "
        "(DMS_MAIL_MAX_MULTIPARTS); it is left in the mailbox.", 1)
    assert growth < 150, f"the server's RSS grew by {growth:.0f} MiB"
    assert list(inbox(alice)) == ["Tax notice.pdf"]
    again = check(alice, account["id"])
    assert (again["last_error"], again["imported_count"]) == (None, 1)
    assert hostile.fetches == {1: 1, 2: 1}


def test_messages_costly_to_parse_are_refused_before_parsing(alice, hostile):
    """At the default limits: 2,000,000 tiny headers (9.5 MB) took 18.6 s and 328 MiB to parse,
    12,000,000 empty lines 1 GB; a header section over 256 KiB, more than 1,000 fields in it,
    more than 1,000,000 lines, more than 10,000 fields in all parts refuse the message."""
    hostile.messages = [Message(many_headers(2_000_000)), Message(many_headers(1_001)),
                        Message(many_lines(12_000_000)),
                        Message(many_headers(20_000, in_part=True)),
                        Message(with_pdf("Insurance"))]
    account = account_on(alice, hostile)
    outcome = {}
    growth = peak_growth_mib(lambda: outcome.update(first=check(alice, account["id"])))
    reasons = ("its header is larger than 256 KiB", "it has more than 1,000 header fields",
               "it has more than 1,000,000 lines",
               "it has more than 10,000 header fields in all its parts")
    assert (outcome["first"]["last_error"], outcome["first"]["imported_count"]) == (" ".join(
        f"The message '<m{uid}@hostile.example>' was refused: {reason}; it is left in the "
        "mailbox." for uid, reason in enumerate(reasons, 1)), 1)
    assert growth < 150, f"the server's RSS grew by {growth:.0f} MiB"
    assert list(inbox(alice)) == ["Insurance.pdf"]
    again = check(alice, account["id"])
    assert (again["last_error"], again["imported_count"]) == (None, 1)
    assert hostile.fetches == {1: 1, 2: 1, 3: 1, 4: 1, 5: 1}


def test_a_message_of_more_than_five_hundred_parts_is_refused_whole(alice, hostile):
    """An attachment after the 500th MIME part was skipped without a word, and the message
    remembered as one without attachments: it was never looked at again."""
    mail = EmailMessage()
    mail["Subject"], mail["From"] = "Many parts", "someone@example.org"
    mail.set_content("The invoice is at the end.\n")
    for n in range(499):  # with the container and the body: 501 parts
        mail.add_attachment(f"note {n}\n", disposition="inline")
    mail.add_attachment(samples.pdf(["Invoice 501"]), maintype="application", subtype="pdf",
                        filename="invoice.pdf")
    assert len(list(mail.walk())) == 502
    hostile.messages = [Message(bytes(mail)), Message(with_pdf("Receipt"))]
    account = account_on(alice, hostile)
    first = check(alice, account["id"])
    assert (first["last_error"], first["imported_count"]) == (
        "The message '<m1@hostile.example>' was refused: it has more than 500 MIME parts; it is "
        "left in the mailbox.", 1)
    assert [r["attributes"] | {"refused_at": None}
            for r in alice.get("/api/intake/refusals/").json()["data"]] == [
        {"source": "mail", "name": "<m1@hostile.example>", "origin": None,
         "reason": "The message was refused: it has more than 500 MIME parts; it is left in the "
                   "mailbox.", "refused_at": None}]
    assert list(inbox(alice)) == ["Receipt.pdf"]
    assert hostile.seen == {2}  # the refused one is left as it was
    again = check(alice, account["id"])
    assert (again["last_error"], again["imported_count"]) == (None, 1)
    assert hostile.fetches == {1: 1, 2: 1}


def serve_forever(listener: socket.socket, answer: bytes | None) -> None:
    """Accept connections; send `answer` (another service's banner) or nothing at all."""
    while True:
        try:
            connection, _ = listener.accept()
        except OSError:
            return
        if answer is not None:
            connection.sendall(answer)
        threading.Timer(30, connection.close).start()


@pytest.mark.config(mail_check_seconds=2)
def test_last_error_does_not_tell_port_states_apart(alice):
    closed = free_port()
    banner = socket.create_server(("127.0.0.1", 0))
    silent = socket.create_server(("127.0.0.1", 0))
    for listener, answer in ((banner, b"SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n"),
                             (silent, None)):
        threading.Thread(target=serve_forever, args=(listener, answer), daemon=True).start()
    try:
        for port in (closed, banner.getsockname()[1], silent.getsockname()[1]):
            account = add_account(alice, ("anyone", "any-password"), SimpleNamespace(port=port))
            result = check(alice, account["id"])
            assert result["last_error"] == UNREACHABLE.format(port=port)
    finally:
        banner.close()
        silent.close()
