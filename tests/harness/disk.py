"""A small disk for full-disk tests: a tmpfs mounted at a folder (root only), and a file that
takes every byte left on it."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def small_tmpfs(mount_point: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` (e.g. "48m") at `mount_point` for the duration; skips the test where
    it cannot be mounted."""
    mount_point.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs",
                             str(mount_point)], capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip("a tmpfs cannot be mounted here (this test needs root): "
                    f"{result.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=True)


def fill(disk: Path) -> int:
    """Write `disk`/filler until the disk has no byte left; returns its size."""
    size, chunk = 0, b"\0" * 65536
    descriptor = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            try:
                size += os.write(descriptor, chunk)
            except OSError:
                if len(chunk) == 1:
                    return size
                chunk = chunk[:len(chunk) // 2]
    finally:
        os.close(descriptor)
