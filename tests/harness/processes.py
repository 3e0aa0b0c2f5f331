"""dms and other servers as subprocesses: a free port, stopping a process, the command line of
`python -m dms` with a clean environment, a `dms serve` whose output says where it listens, and
one-off `dms` commands on a test's data dir."""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import requests

from tests.harness.waiting import WaitTimeout, wait_for

LISTENING = re.compile(r"dms listening on (http://\S+)")
EOF = "end of output"  # what Running._next_line returns when the output ends


def is_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def ephemeral_ports() -> range:
    """The ports the kernel gives outgoing connections and bind(port 0)
    (net.ipv4.ip_local_port_range)."""
    try:
        low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    except (OSError, ValueError):
        low, high = 32768, 60999
    return range(low, high + 1)


def free_port(below: int = 0, taken: frozenset[int] = frozenset()) -> int:
    """A free port on loopback below the kernel's ephemeral ports (and `below` under their start,
    for a server that also takes port + below). A port among those could be taken while its
    server is stopped (a connection of another test, or of the other lane, gets it as its own
    end), and starting the server again on it would fail: "address already in use"."""
    ceiling = ephemeral_ports().start - below
    floor = max(1024, ceiling - 12000)
    if ceiling - floor < 1000:  # a kernel whose ephemeral ports begin low: anywhere, then
        floor, ceiling = 1024, 65536 - below
    for _ in range(10_000):
        port = random.randrange(floor, ceiling)
        if port not in taken and is_free(port):
            return port
    raise RuntimeError(f"no free port between {floor} and {ceiling}")


def own_children(command_part: str) -> list[int]:
    """The pids of this process' children whose command line holds `command_part` (a hidden
    subcommand of dms, say), still there."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid() \
                and command_part.encode() in command:
            found.append(int(entry.name))
    return found


def terminate(process: subprocess.Popen) -> None:
    """Stop a test server: SIGTERM, then SIGKILL if it is still there after 10 s."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def dms_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "dms", *args]


def environment(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DMS_")}
    env.update(extra)
    return env


class Running:
    """A `dms serve` subprocess whose output is read until it says where it listens."""

    def __init__(self, data_dir, **env):
        self.process = subprocess.Popen(
            dms_command("serve", "--port", "0", "--data-dir", str(data_dir)),
            env=environment(**env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        with contextlib.suppress(WaitTimeout):
            # Each look reads one line (blocking): no pause between looks.
            match = wait_for(self._next_line, timeout=30, interval=0)
            if match is not EOF:
                self.url = match.group(1)
                return
        self.process.kill()
        raise AssertionError("dms serve did not start:\n" + "".join(self.lines))

    def _next_line(self):
        """The match of LISTENING in the next line of output, None, or EOF at its end."""
        line = self.process.stdout.readline()
        if not line:
            return EOF
        self.lines.append(line)
        return LISTENING.search(line)

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def drain(self) -> Running:
        """Keep reading the output in a thread from now on: a server that logs much (a line per
        document read) would otherwise stall on a full pipe."""
        self._drainer = threading.Thread(target=self.lines.extend, args=(self.process.stdout,),
                                         daemon=True)
        self._drainer.start()
        return self

    def stop(self, signum=signal.SIGTERM) -> int:
        self.process.send_signal(signum)
        drainer = getattr(self, "_drainer", None)
        if drainer is not None:
            self.process.wait(timeout=20)
            drainer.join(timeout=20)
            return self.process.returncode
        rest, _ = self.process.communicate(timeout=20)
        self.lines.append(rest)
        return self.process.returncode


def dms(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "dms", *map(str, args)], input=stdin,
                          capture_output=True, text=True)


def config_env(config) -> dict[str, str]:
    """The environment that puts a `dms serve` subprocess (Running) on the database of `config`:
    its PostgreSQL database, or nothing (the SQLite file of the data dir)."""
    return {"DMS_DATABASE_URL": config.database_url} if config.database_url else {}


def config_args(config) -> list[str]:
    """The command-line options of a `dms` command on the data dir and database of `config`."""
    url = ["--database-url", config.database_url] if config.database_url else []
    return ["--data-dir", str(config.data_dir), *url]


def admin_session(url: str, password: str) -> tuple[requests.Session, str]:
    """A requests session logged in as `admin` on a `dms serve` subprocess, and admin's .home."""
    client = requests.Session()
    token = client.post(url + "/api/auth/login/",
                        json={"username": "admin", "password": password}).json()["token"]
    client.headers["Authorization"] = f"Token {token}"
    me = client.get(url + "/api/users/me/").json()["data"]
    return client, me["relationships"]["home_folder"]["data"]["id"]


def make_node(client: requests.Session, url: str, kind: str, title: str, parent: str) -> str:
    """A folder or document (`kind`: folders, documents) made through such a session; its id."""
    body = {"data": {"type": kind, "attributes": {"title": title},
                     "relationships": {"parent": {"data": {"type": "folders", "id": parent}}}}}
    response = client.post(url + "/api/nodes/", json=body,
                           headers={"Content-Type": "application/vnd.api+json"})
    assert response.status_code == 201, response.text
    return response.json()["data"]["id"]
