"""A throwaway Redis for the tests: Debian's `redis-server` on 127.0.0.1 and a free port, no
persistence, its files in a temp dir; stopped (and the dir removed) by stop()."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from tests.harness.processes import free_port, terminate
from tests.harness.waiting import WaitTimeout, wait_for


class RedisServer:
    def __init__(self):
        command = shutil.which("redis-server")
        if command is None:
            raise RuntimeError("redis-server is not installed: run scripts/setup.sh --test")
        self.command = command
        self.dir = Path(tempfile.mkdtemp(prefix="dms-redis-"))
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> RedisServer:
        self.process = subprocess.Popen(
            [self.command, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.dir), "--logfile", str(self.dir / "log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for(self._answers, timeout=20, interval=0.05)
        except WaitTimeout:
            self.stop()
            raise RuntimeError("redis-server did not start") from None
        return self

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as connection:
                connection.sendall(b"PING\r\n")
                return connection.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        if self.process is not None:
            terminate(self.process)
        shutil.rmtree(self.dir, ignore_errors=True)
