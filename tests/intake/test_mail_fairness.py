"""Mail checks shared by turns, and servers that stall, against real dms servers and IMAP servers in
the test (tests/harness/hostileimap.py): two users' tarpits held all four check threads for 300 s
while another user's check waited. A user's accounts are checked one after another, so another
user's check runs while theirs are held; a server that sends nothing, or a byte now and then, is
left after DMS_MAIL_STALL_SECONDS instead of at the check's deadline."""

from __future__ import annotations

import functools

import pytest

from tests.harness import samples
from tests.harness.hostileimap import Gate, HostileImap, Message, stall, trickle
from tests.harness.mail import add_account, checked, inbox, message


def with_pdf(text: str) -> bytes:
    return message(text, [(f"{text}.pdf", samples.pdf([text]), "application/pdf")])[0]


@pytest.fixture
def servers():
    started: list[HostileImap] = []

    def start(*messages: Message, name: str = "hostile") -> HostileImap:
        started.append(HostileImap(list(messages), name).start())
        return started[-1]

    yield start
    for server in started:
        server.stop()


def account_on(client, server) -> dict:
    return add_account(client, ("anyone", "any-password"), server)


def ask(client, account) -> None:
    response = client.post(f"/api/mail-accounts/{account['id']}/check/")
    assert response.status_code == 202, response.text


# Two threads: before, alice's two held accounts took both, and bob's check waited for them.
@pytest.mark.config(mail_checks_parallel=2)
def test_another_users_check_runs_while_one_users_checks_are_held(alice, bob, servers):
    gate = Gate()
    tarpit = servers(Message(with_pdf("Held letter"), send_body=gate), name="tarpit")
    fast = servers(Message(with_pdf("Quick letter")), name="fast")
    held = [account_on(alice, tarpit) for _ in range(2)]
    quick = account_on(bob, fast)
    try:
        for account in held:
            ask(alice, account)
        assert gate.entered.wait(30), "alice's first check never reached her server"
        ask(bob, quick)
        bobs = checked(bob, quick["id"], None, timeout=30)["attributes"]
        assert (bobs["last_error"], bobs["imported_count"]) == (None, 1)
        assert list(inbox(bob)) == ["Quick letter.pdf"]
        # Meanwhile alice's first check is still held and her second has not begun.
        assert (gate.opened.is_set(), gate.inside) == (False, 1)
        second = alice.get(f"/api/mail-accounts/{held[1]['id']}/").json()["data"]["attributes"]
        assert (second["checking"], second["last_checked_at"]) == (True, None)
        assert len(tarpit.sessions) == 1
    finally:
        gate.opened.set()
    results = [checked(alice, account["id"], None, timeout=30)["attributes"] for account in held]
    # The second account finds the same message already taken (the same Message-ID and bytes).
    assert [(r["last_error"], r["imported_count"]) for r in results] == [(None, 1), (None, 0)]
    assert list(inbox(alice)) == ["Held letter.pdf"]
    assert (gate.most, len(tarpit.sessions)) == (1, 2)  # one of alice's checks at a time


@pytest.mark.config(mail_stall_seconds=2, mail_check_seconds=120)
def test_servers_that_stall_are_left_long_before_the_deadline(alice, bob, servers):
    """A byte every quarter of a second keeps every read timeout alive: it is less than 16 KiB
    in 2 s. Nothing at all for 2 s is the read timeout."""
    trickling = servers(Message(with_pdf("Slow letter"),
                                send_body=functools.partial(trickle, every=0.25)), name="trickle")
    silent = servers(Message(with_pdf("Silent letter"), send_body=stall), name="silent")
    accounts = {"trickle": (alice, account_on(alice, trickling)),
                "silent": (bob, account_on(bob, silent))}
    for client, account in accounts.values():
        ask(client, account)
    results = {name: checked(client, account["id"], None, timeout=60)["attributes"]
               for name, (client, account) in accounts.items()}
    assert {name: (r["last_error"], r["imported_count"]) for name, r in results.items()} == {
        "trickle": ("The mail server sent less than 16 KiB in 2 s (DMS_MAIL_STALL_SECONDS); the "
                    "check was stopped and goes on at the next one.", 0),
        "silent": ("The mail server sent nothing for 2 s (DMS_MAIL_STALL_SECONDS); the check was "
                   "stopped and goes on at the next one.", 0)}
    assert (trickling.fetches, silent.fetches) == ({1: 1}, {1: 1})
    assert (inbox(alice), inbox(bob)) == ({}, {})
