"""The consume folder's tests (tests/intake/test_consume_*) and bench/hostile3.py: the settings of
a server that polls it five times a second, what a look takes, the titles in a user's inbox, the
program file every server refuses and its reason, a chain of nested folders deeper than any path
(made and removed without recursing)."""

from __future__ import annotations

import os
import time
from pathlib import Path

CONSUME = dict(consume_interval=0.2, consume_stable_seconds=1.0)
EXE = b"MZ" + b"\x00" * 100
REASON = "This type of file is not supported; upload a PDF, PNG, JPEG, TIFF or plain text file.\n"


def looks(count: int = 6) -> None:
    time.sleep(count * CONSUME["consume_interval"] + CONSUME["consume_stable_seconds"])


def inbox_titles(client, folder_id=None) -> dict[str, str]:
    data = client.get(f"/api/nodes/{folder_id or client.inbox_id}/?page[size]=100").json()["data"]
    return {item["attributes"]["title"]: item["id"] for item in data}


def deep_chain(parent: Path, levels: int, file_name: str, content: bytes) -> None:
    """`levels` nested folders `d` in `parent` (which exists), and a file at the bottom; made
    through directory descriptors, as a path that deep is longer than the file system takes."""
    level = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(levels):
        os.mkdir("d", dir_fd=level)
        deeper = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=level)
        os.close(level)
        level = deeper
    with open(os.open(file_name, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=level), "wb") as out:
        out.write(content)
    os.close(level)


def remove_chain(top: Path) -> None:
    """Remove a chain of nested `d` folders without recursing (shutil.rmtree and pytest's own
    clean-up would): the level below moves up."""
    while top.exists():
        spare = top.with_name(top.name + "~")
        if (top / "d").is_dir():
            os.rename(top / "d", spare)
        for entry in top.iterdir():
            entry.unlink()
        top.rmdir()
        if spare.exists():
            os.rename(spare, top)
