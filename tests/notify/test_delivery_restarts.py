"""Deliveries survive kill -9 (api.md, "Webhooks"): `dms serve` killed while its webhook's receiver
is down, with events not delivered yet; started again on the same data dir (and database), it
delivers each of them, in order, once the receiver is up."""

from __future__ import annotations

import signal

import pytest

from tests.harness.client import Client
from tests.harness.documents import create_node
from tests.harness.processes import Running, free_port
from tests.harness.users import add_user
from tests.harness.waiting import wait_for
from tests.harness.webhooks import Receiver, add_webhook, webhook

# Sockets (pytest-socket): a receiver on loopback and `dms serve` subprocesses.
pytestmark = pytest.mark.enable_socket

PASSWORD = "kill-9-webhooks-pw"


@pytest.mark.slow
def test_undelivered_events_are_delivered_after_kill_9_and_a_restart(tmp_path, database_url):
    data_dir, port = tmp_path / "data", free_port()
    env = {"DMS_ADMIN_PASSWORD": PASSWORD, "DMS_OUTBOUND_ALLOW": "127.0.0.1",
           "DMS_WEBHOOK_RETRY_SECONDS": "0.2",
           **({"DMS_DATABASE_URL": database_url} if database_url else {})}
    server = Running(data_dir, **env)
    try:
        alice = add_user(Client(server.url).login("admin", PASSWORD), "alice")
        webhook_id = add_webhook(alice, f"http://127.0.0.1:{port}/hook", ["node.created"])
        for title in ("one", "two", "three"):
            create_node(alice, "folders", title, alice.home_id)
        # Tried and failed (nothing listens): the three wait for the receiver.
        wait_for(lambda: webhook(alice, webhook_id)["failures_in_a_row"] >= 1, timeout=30)
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=10)
    finally:
        if server.process.poll() is None:
            server.process.kill()
    receiver = Receiver(bind_port=port)
    restarted = Running(data_dir, **env)
    try:
        deliveries = receiver.wait_for_count(3)
        assert [d.event["node"]["title"] for d in deliveries] == ["one", "two", "three"]
        alice = Client(restarted.url, alice.token)
        wait_for(lambda: webhook(alice, webhook_id)["failures_in_a_row"] == 0, timeout=30)
        assert len(receiver.deliveries) == 3
    finally:
        assert restarted.stop() == 0
        receiver.stop()
