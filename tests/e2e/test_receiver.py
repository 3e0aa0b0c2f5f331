"""docs/receiver.py, the webhook receiver of docs/guide.md ("Webhooks and the event stream"), runs
verbatim: Python runs the file itself, a real server delivers to it, and it prints the events
whose signature it checked and refuses a forged one; the guide shows exactly the file's text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from tests.harness.documents import create_node
from tests.harness.processes import free_port
from tests.harness.waiting import wait_for
from tests.harness.webhooks import SECRET, add_webhook, signed

ROOT = Path(__file__).resolve().parent.parent.parent
SNIPPET = ROOT / "docs" / "receiver.py"
GUIDE = ROOT / "docs" / "guide.md"
OPENING = b"<!-- receiver.py -->\n```python\n"
CLOSING = b"```\n<!-- /receiver.py -->\n"


@pytest.mark.sqlite_only  # no database
def test_the_guide_shows_the_receiver_byte_for_byte():
    guide = GUIDE.read_bytes()
    assert guide.count(OPENING) == 1 and guide.count(CLOSING) == 1
    start = guide.index(OPENING) + len(OPENING)
    assert guide[start:guide.index(CLOSING, start)] == SNIPPET.read_bytes()
    lines = [line for line in SNIPPET.read_text().splitlines() if line.strip()]
    assert len(lines) <= 18  # ten-odd lines, as the README promises


@pytest.mark.config(outbound_allow=("127.0.0.1",))
def test_the_receiver_checks_signatures_of_real_deliveries(server, alice, tmp_path):
    port = free_port()
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith("DMS_")}
    environment.update(WEBHOOK_SECRET=SECRET, PORT=str(port))
    output = open(tmp_path / "receiver.out", "w+")  # noqa: SIM115 (closed in the finally below)
    receiver = subprocess.Popen([sys.executable, str(SNIPPET)], env=environment, stdout=output,
                                stderr=subprocess.DEVNULL, text=True)  # http.server's request log
    try:
        url = f"http://127.0.0.1:{port}/"
        wait_for(lambda: _answers(url), timeout=30, interval=0.1)
        forged = json.dumps({"id": "1", "type": "node.created", "node": None}).encode()
        assert requests.post(url, data=forged, timeout=10, headers={
            "X-DMS-Signature": signed(forged, "not the secret")}).status_code == 401
        webhook_id = add_webhook(alice, url, ["node.created", "node.renamed"])
        ping = alice.post(f"/api/webhooks/{webhook_id}/test/").json()["data"]
        assert (ping["attributes"]["ok"], ping["attributes"]["status"]) == (True, 204)
        folder = create_node(alice, "folders", "Invoices", alice.home_id)
        assert alice.patch(f"/api/folders/{folder}/", {"data": {
            "type": "folders", "id": folder, "attributes": {"title": "Invoices 2026"}}}
        ).status_code == 200

        def printed() -> list[str]:
            output.seek(0)
            lines = output.read().splitlines()
            return lines if len(lines) >= 3 else []

        lines = wait_for(printed, timeout=30, interval=0.1)
        first = int(lines[1].split()[0])
        assert lines == [f"{ping['id']} ping None", f"{first} node.created Invoices",
                         f"{first + 1} node.renamed Invoices 2026"]
    finally:
        receiver.terminate()
        receiver.wait(timeout=10)
        output.close()


def _answers(url: str) -> bool:
    try:
        return requests.post(url, data=b"{}", timeout=5).status_code == 401
    except requests.ConnectionError:
        return False
