"""Several dms processes on one machine, as a cluster runs them: web nodes (`dms serve
--no-worker`) and `dms worker` processes, each with a data dir of its own and its output in a log
file, all configured by one environment (database, queue, shared files dir). The multi-node tests
(tests/e2e/test_multinode.py) and the scale-out benchmark (bench/scaleout.py) run them."""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import uuid
from pathlib import Path

from dms.files.sealing import KEY_BYTES, KEY_FILE
from tests.harness.processes import LISTENING, dms_command, environment
from tests.harness.waiting import WaitTimeout, wait_for

ROOT = Path(__file__).resolve().parents[2]
WORKER_READY = re.compile(r"dms worker (\S+) reading")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class DmsNode:
    """`python -m dms serve --no-worker` or `python -m dms worker` (with `args`), its output in a
    log file beside its data dir; started once it says it listens or reads its queue."""

    def __init__(self, command: str, data_dir: Path, env: dict, *args: str,
                 name: str | None = None, start_timeout: float = 60,
                 stop_timeout: float = 60):
        data_dir.mkdir(parents=True, exist_ok=True)
        self.name = name or data_dir.name
        self.data_dir = data_dir
        self.stop_timeout = stop_timeout
        # Unique: a node started again under its name keeps the log of its first life.
        self.log_path = data_dir.parent / f"{self.name}-{uuid.uuid4().hex[:6]}.log"
        self._log = open(self.log_path, "w")  # noqa: SIM115 (closed when the node stops)
        extra = ["--port", "0", "--no-worker"] if command == "serve" else []
        self.process = subprocess.Popen(
            dms_command(command, "--data-dir", str(data_dir), *extra, *args),
            env=environment(**env), stdout=self._log, stderr=subprocess.STDOUT, text=True,
            cwd=ROOT)
        self.url = self.worker_id = None
        self.stopped_status: int | None = None
        match = self.wait_for(LISTENING if command == "serve" else WORKER_READY, start_timeout)
        if command == "serve":
            self.url = match.group(1)
        else:
            self.worker_id = match.group(1)

    @property
    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for(self, pattern: re.Pattern, timeout: float) -> re.Match:
        """The first match of `pattern` in the output; if the process ends first or it takes
        longer than `timeout` seconds, it is killed and RuntimeError raised."""
        def said_or_exited():
            return pattern.search(self.output) or self.process.poll() is not None

        with contextlib.suppress(WaitTimeout):
            match = wait_for(said_or_exited, timeout=timeout, interval=0.05)
            if match is not True:
                return match
        self.stop(signal.SIGKILL)
        raise RuntimeError(f"{self.name} did not start (exit status {self.process.returncode});"
                           f" its output:\n{self.output[-3000:]}")

    def cpu_seconds(self) -> float:
        """User + system time of the process and of its children it has waited for (Tesseract)."""
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return float("nan")
        # after the command: state is fields[0]; utime, stime, cutime, cstime are 14-17 of stat(5)
        return sum(int(value) for value in fields[11:15]) / CLOCK_TICKS

    def stop(self, signum: int = signal.SIGTERM) -> int:
        """Send `signum` (unless it has ended) and wait for the exit status; SIGKILL after
        stop_timeout seconds. Stopping a stopped node returns its status again."""
        if self.stopped_status is not None:
            return self.stopped_status
        if self.process.poll() is None:
            self.process.send_signal(signum)
        try:
            status = self.process.wait(timeout=self.stop_timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            status = self.process.wait()
        self._log.close()
        self.stopped_status = status
        return status


class NodeGroup:
    """The nodes of one cluster under `root`: web nodes by name, workers, and the retired ones
    (stopped or killed, kept for their logs). `worker_args` are given to every `dms worker`.
    Every node's data dir gets the cluster's one sealing key (mail.key), as the README's "Several
    machines" asks: a secret sealed by one node (a mail password, a webhook's secret) opens on
    every other."""

    def __init__(self, root: Path, env: dict, *, worker_args: tuple[str, ...] = (),
                 start_timeout: float = 60, stop_timeout: float = 60):
        self.root = root
        self.env = env
        self.worker_args = worker_args
        self.timeouts = {"start_timeout": start_timeout, "stop_timeout": stop_timeout}
        self.web: dict[str, DmsNode] = {}
        self.workers: list[DmsNode] = []
        self.retired: list[DmsNode] = []
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()
        self._key = secrets.token_bytes(KEY_BYTES)

    def _data_dir(self, name: str) -> Path:
        data_dir = self.root / name
        data_dir.mkdir(parents=True, exist_ok=True)
        key = data_dir / KEY_FILE
        if not key.exists():
            key.write_bytes(self._key)
            key.chmod(0o600)
        return data_dir

    def web_nodes(self) -> list[DmsNode]:
        return list(self.web.values())

    def start_web(self, name: str) -> DmsNode:
        self.web[name] = DmsNode("serve", self._data_dir(name), self.env, **self.timeouts)
        return self.web[name]

    def start_worker(self) -> DmsNode:
        with self._lock:
            name = f"worker{next(self._numbers)}"
        node = DmsNode("worker", self._data_dir(name), self.env, *self.worker_args,
                       **self.timeouts)
        with self._lock:
            self.workers.append(node)
        return node

    def start_workers(self, count: int) -> list[DmsNode]:
        """`count` workers, started at once (each writes its readiness line when it reads)."""
        started: list[DmsNode] = []
        errors: list[BaseException] = []

        def start() -> None:
            try:
                started.append(self.start_worker())
            except BaseException as error:  # re-raised below, in this thread
                errors.append(error)

        run_together([start] * count)
        if errors:
            raise errors[0]
        return started

    def retire(self, node: DmsNode, signum=signal.SIGTERM) -> int:
        status = node.stop(signum)
        self.retired.append(node)
        if node in self.workers:
            self.workers.remove(node)
        return status

    def stop_workers(self) -> list[int]:
        """Stop every worker at once (SIGTERM); their exit statuses."""
        statuses = [0] * len(self.workers)

        def stopper(index: int, node: DmsNode):
            return lambda: statuses.__setitem__(index, node.stop())

        run_together([stopper(index, node) for index, node in enumerate(self.workers)])
        self.retired += self.workers
        self.workers = []
        return statuses

    def stop_all(self) -> None:
        for node in [*self.workers, *self.web.values()]:
            try:
                node.stop()
            except Exception as error:  # keep stopping the others
                print(f"could not stop {node.name}: {error}", file=sys.stderr)
        self.retired += self.workers + self.web_nodes()
        self.workers, self.web = [], {}

    def all_nodes(self) -> list[DmsNode]:
        return [*self.web.values(), *self.workers, *self.retired]

    def worker_logs(self) -> str:
        return "".join(node.output for node in self.workers + self.retired
                       if node.worker_id is not None)


def run_together(calls) -> None:
    threads = [threading.Thread(target=call, daemon=True) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
