"""The consume folder's tests (tests/intake/test_consume_*): the settings of a server that polls
it five times a second, what a look takes, the titles in a user's inbox, the program file every
server refuses and its reason."""

from __future__ import annotations

import time

CONSUME = dict(consume_interval=0.2, consume_stable_seconds=1.0)
EXE = b"MZ" + b"\x00" * 100
REASON = "This type of file is not supported; upload a PDF, PNG, JPEG, TIFF or plain text file.\n"


def looks(count: int = 6) -> None:
    time.sleep(count * CONSUME["consume_interval"] + CONSUME["consume_stable_seconds"])


def inbox_titles(client, folder_id=None) -> dict[str, str]:
    data = client.get(f"/api/nodes/{folder_id or client.inbox_id}/?page[size]=100").json()["data"]
    return {item["attributes"]["title"]: item["id"] for item in data}
