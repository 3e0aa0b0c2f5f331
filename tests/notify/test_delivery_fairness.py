"""Fair shares of a process' webhook senders (dms.notify.deliverer): one user's webhooks to a
receiver that never answers hold at most 2 of the 4 senders, so another user's delivery goes out
while they wait (before, alice's 20 such webhooks held all four and bob's delivery waited 49.5 s).
Real receivers on loopback; alice's holds every POST until the test releases it."""

from __future__ import annotations

import pytest

from tests.harness.documents import create_node
from tests.harness.webhooks import Receiver, add_webhook

ALICES = 6  # webhooks of alice, more than the 4 senders


@pytest.fixture
def receivers():
    running = [Receiver(), Receiver()]
    yield running
    for receiver in running:
        receiver.stop()


# The timeout (60 s) outlasts the test: dms never gives up on a held POST and sends another.
@pytest.mark.config(outbound_allow=("127.0.0.1",), webhook_timeout_seconds=60)
def test_one_users_held_deliveries_leave_the_other_senders_to_others(alice, bob, receivers):
    holding, answering = receivers
    holding.hold()
    paths = [f"/alice/{number}" for number in range(ALICES)]
    for path in paths:
        add_webhook(alice, holding.url(path), ["node.created"])
    add_webhook(bob, answering.url("/bob"), ["node.created"])
    try:
        create_node(alice, "folders", "Alice's", alice.home_id)
        holding.wait_for_count(2)
        create_node(bob, "folders", "Bob's", bob.home_id)
        [delivery] = answering.wait_for_count(1)
        assert (delivery.path, delivery.event["node"]["title"]) == ("/bob", "Bob's")
        # alice's two are still held, and no third one of hers was started meanwhile
        assert (len(holding.deliveries), holding.held, holding.most_held) == (2, 2, 2)
    finally:
        holding.release()
    deliveries = holding.wait_for_count(ALICES)
    assert sorted(d.path for d in deliveries) == sorted(paths)
    assert {d.event["node"]["title"] for d in deliveries} == {"Alice's"}
