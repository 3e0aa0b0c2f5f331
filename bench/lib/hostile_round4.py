"""The frame of bench/hostile4.py: the probe (another user's clients, with an upload and a preview
besides hostile_http.Victim's requests), an attack's common parts (its own users, threads that loop
until the phase ends, answers tallied per thread), raw requests on sockets, and the phases
themselves: each attack prepared, run for its seconds beside the probe, reported with the probe's
latencies, the server's memory and output, and one summary line with the targets beside the numbers.
It prints numbers and never asserts."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field

from bench.common import ServerProcess
from bench.lib.hostile_http import (
    VND,
    Tally,
    Victim,
    create_node,
    create_user,
    exchange,
    percentile,
    print_latencies,
    run_phase,
)
from bench.lib.hostile_watch import OutputDrain
from tests.harness.samples import pdf

# The targets (docs/performance.md, "Numbers"): under each attack another user's requests ...
PROBE_P99_TARGET_MS = 100
# ... and the server's resident memory.
RSS_TARGET_MIB = 600
DONE = ("succeeded", "failed")
RAW_TIMEOUT_SECONDS = 70  # a raw request the server never answers (it closed one after 62 s)
# Not found by the probe's own search for "invoice": its result stays the same size all along.
PROBE_PDF = pdf(["Probe upload: Stadtwerke Musterstadt, letter 4711, total 93.20 EUR"])


# -- requests -------------------------------------------------------------------------------------
def timed(tally: Tally, op: str, client, method: str, path: str, body=None,
          headers: dict | None = None) -> tuple[int, bytes]:
    """One request on a keep-alive connection, recorded in `tally` under `op`."""
    started = time.perf_counter()
    return tally.record(op, started, exchange(client, method, path, body, headers))


def data_of(reply: tuple[int, bytes]) -> dict | list | None:
    """The `data` of a JSON:API answer in 2xx, or None (any other answer, or not JSON)."""
    status, body = reply
    if not 200 <= status < 300:
        return None
    try:
        return json.loads(body).get("data")
    except (ValueError, AttributeError):
        return None


def detail_of(body: bytes) -> str:
    """The first error's detail of a JSON:API error answer, else the body's start."""
    try:
        return json.loads(body)["errors"][0]["detail"]
    except (ValueError, KeyError, IndexError, TypeError):
        return body[:160].decode("utf-8", "replace")


def new_document(client, tally: Tally, title: str, parent: str) -> str | None:
    """A new document under `parent`: its id, or None when it was refused."""
    started = time.perf_counter()
    data = data_of(tally.record("POST nodes (document)", started,
                                create_node(client, "documents", title, parent)))
    return data["id"] if isinstance(data, dict) else None


def upload(client, tally: Tally, document: str, name: str, content: bytes,
           op: str | None = None) -> tuple[int, bytes]:
    return timed(tally, op or f"PUT upload {name}", client, "PUT",
                 f"/api/documents/{document}/upload/{name}", content,
                 {"Content-Disposition": f"attachment; filename={name}"})


def wait_processed(client, document: str, timeout: float) -> str:
    """The document's ocr_status once final, or the last one seen after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    state = "unknown"
    while time.monotonic() < deadline:
        data = data_of(exchange(client, "GET", f"/api/documents/{document}/"))
        state = data["attributes"]["ocr_status"] if isinstance(data, dict) else state
        if state in DONE:
            break
        time.sleep(0.2)
    return state


def raw_exchange(port: int, request: bytes,
                 timeout: float = RAW_TIMEOUT_SECONDS) -> tuple[int, bytes]:
    """One request written as bytes on a new socket: (status, the answer's start). It returns
    once the answer's head (and the body its Content-Length announces) is in, when the server
    closes, or after `timeout` seconds; status 0 says which of the last two it was."""
    deadline = time.monotonic() + timeout
    data = b""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(request)
            while True:
                head, separator, body = data.partition(b"\r\n\r\n")
                if separator:
                    length = re.search(rb"(?i)\r\ncontent-length:\s*(\d+)", head)
                    if length is None or len(body) >= int(length.group(1)):
                        break
                sock.settimeout(max(0.01, deadline - time.monotonic()))
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
    except TimeoutError:
        return 0, f"no answer within {timeout:g} s".encode()
    except OSError as error:
        return 0, f"{type(error).__name__}: {error}".encode()
    if not data.startswith(b"HTTP/"):
        return 0, b"closed without an answer" + (b": " + data[:100] if data else b"")
    return int(data.split(b" ", 2)[1]), data[:400]


# -- the probe ------------------------------------------------------------------------------------
class Probe(Victim):
    """Another user's client: hostile_http.Victim's requests and the JPEG preview of a page
    already processed; the first probe also uploads a one-page born-digital PDF into a new
    document each time round. One uploads, not each: a user's share of the PDF readers is one
    file read at a time and one more waiting (docs/limits.md), so the user's own parallel
    uploads would be refused by design (429), which is not what the probe measures."""

    def __init__(self, index: int, port: int, user: dict, preview_page: str):
        super().__init__(index, port, user)
        self.preview_page = preview_page
        self.document: str | None = None

    def operations(self):
        uploads = [("POST nodes (document)", self.create_document),
                   ("PUT upload (1-page PDF)", self.upload_pdf)] if self.index == 0 else []
        return [*super().operations(), *uploads,
                ("GET page preview (JPEG)", lambda: exchange(
                    self.client, "GET", f"/api/pages/{self.preview_page}/",
                    headers={"Accept": "image/jpeg"}))]

    def create_document(self) -> tuple[int, bytes]:
        self.created += 1
        reply = create_node(self.client, "documents", f"probe {self.created}.pdf", self.folder)
        data = data_of(reply)
        self.document = data["id"] if isinstance(data, dict) else None
        return reply

    def upload_pdf(self) -> tuple[int, bytes]:
        if self.document is None:
            return 0, b"no document to upload into (its creation was refused)"
        return exchange(self.client, "PUT", f"/api/documents/{self.document}/upload/probe.pdf",
                        PROBE_PDF, {"Content-Disposition": "attachment; filename=probe.pdf"})


def preview_page(client, home: str) -> str:
    """A page of a processed one-page PDF of the probe's user, its preview rendered once."""
    tally = Tally()
    document = new_document(client, tally, "preview.pdf", home)
    if document is None:
        raise RuntimeError("could not create the probe's preview document")
    data = data_of(upload(client, tally, document, "preview.pdf", PROBE_PDF))
    if not isinstance(data, dict):
        raise RuntimeError(f"could not upload the probe's preview document: {tally.examples}")
    page = data["attributes"]["versions"][-1]["pages"][0]["id"]
    wait_processed(client, document, 120)
    exchange(client, "GET", f"/api/pages/{page}/", headers={"Accept": "image/jpeg"})
    return page


# -- attacks --------------------------------------------------------------------------------------
@dataclass
class Round:
    """What every attack of the round shares: the server, the admin's token, the probe's user
    ("the victim": another user than every attacker) and the sizes asked for."""
    server: ServerProcess
    admin_token: str
    victim: dict
    seconds: float
    long_documents: int
    split_pages: int
    users: dict = field(default_factory=dict)

    @property
    def port(self) -> int:
        return self.server.port

    def user(self, name: str) -> dict:
        """An ordinary user made by the admin (each name once per server)."""
        if name not in self.users:
            self.users[name] = create_user(self.port, self.admin_token, name)
        return self.users[name]


class Attack:
    """One phase's attack: `prepare()` before the phase (not timed with the probe), `attack(stop)`
    during it (looping until `stop` is set), `report()` and `cleanup()` after it. Answers are
    tallied per thread (`tally()`) and merged in `answers()`."""

    label = "?"
    title = "an attack"

    def __init__(self, round_: Round):
        self.round = round_
        self.crash: str | None = None
        self._tallies: list[Tally] = []
        self._lock = threading.Lock()

    def prepare(self) -> None:
        pass

    def attack(self, stop: threading.Event) -> None:
        stop.wait()

    def report(self) -> None:
        pass

    def cleanup(self) -> None:
        pass

    # -- helpers ---------------------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        """hostile_http.run_phase's attacker thread."""
        self.guarded(self.attack, stop)

    def guarded(self, work, *args) -> None:
        try:
            work(*args)
        except Exception:  # a bug in the benchmark itself: shown, not hidden
            with self._lock:
                self.crash = (self.crash or "") + traceback.format_exc()

    def tally(self) -> Tally:
        with self._lock:
            self._tallies.append(Tally())
            return self._tallies[-1]

    def answers(self) -> Tally:
        """Every thread's answers so far, merged (a thread the phase did not wait for may still
        be recording: each of its dicts is copied at once, as the GIL copies a dict whole)."""
        merged = Tally()
        with self._lock:
            tallies = list(self._tallies)
        for tally in tallies:
            copy = Tally()
            copy.latencies.update((op, list(values)) for op, values in
                                  dict(tally.latencies).items())
            copy.statuses.update((op, Counter(dict(statuses))) for op, statuses in
                                 dict(tally.statuses).items())
            copy.examples.update(dict(tally.examples))
            merged.merge(copy)
        return merged

    def in_threads(self, stop: threading.Event, count: int, work) -> None:
        """`work(index, stop, tally)` in `count` threads until each returns (after `stop`)."""
        threads = [threading.Thread(target=self.guarded, args=(work, index, stop, self.tally()),
                                    daemon=True) for index in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def started(self, work, *args) -> threading.Thread:
        """`work(*args)` in a thread of its own that the phase does not wait for."""
        thread = threading.Thread(target=self.guarded, args=(work, *args), daemon=True)
        thread.start()
        return thread

    def json_api(self, client, tally: Tally, op: str, method: str, path: str,
                 body: dict | None = None) -> tuple[int, bytes]:
        return timed(tally, op, client, method, path, body,
                     {"Content-Type": VND} if body is not None else None)


def seconds_list(samples: list[float]) -> str:
    return ", ".join(f"{sample:.2f}" for sample in samples) or "none"


# -- the phases -----------------------------------------------------------------------------------
@dataclass
class Outcome:
    label: str
    title: str
    p99: float | None
    worst: float | None
    errors: int
    rss_peak: float
    rss_end: float


def probe_numbers(tally: Tally) -> tuple[float | None, float | None, int]:
    values = sorted(value for values in tally.latencies.values() for value in values)
    errors = sum(tally.errors(op) for op in tally.latencies)
    if not values:
        return None, None, errors
    return percentile(values, 0.99), values[-1], errors


def run_attack(round_: Round, output: OutputDrain, probes: list[Probe],
               attack: Attack | None, label: str, title: str) -> Outcome:
    """One phase: the attack prepared, then run for the round's seconds beside the probe."""
    print(f"\n{label}. {title}")
    if attack is not None:
        started = time.perf_counter()
        try:
            attack.prepare()
            print(f"(prepared in {time.perf_counter() - started:.1f} s)")
        except Exception:  # shown, and the phase runs without its attack
            print(f"the attack could not be prepared; the phase runs without it:\n"
                  f"{traceback.format_exc()}")
            attack.guarded(attack.cleanup)
            attack = None
    mark = output.snapshot()
    tally, wall, memory = run_phase(round_.server, probes, round_.seconds, attack)
    print("the probe (another user's requests):")
    print_latencies(tally, wall)
    memory.report()
    if attack is not None:
        print("the attacker's answers:")
        print_latencies(attack.answers(), wall, by_status=True)
        attack.guarded(attack.report)
        attack.guarded(attack.cleanup)
        if attack.crash:
            print(f"the attack crashed (a bug of the benchmark):\n{attack.crash}")
    output.report_since(mark)
    p99, worst, errors = probe_numbers(tally)
    shown = f"{p99:.1f}" if p99 is not None else "n/a"
    print(f"summary of {label}: probe p99 {shown} ms (target <= {PROBE_P99_TARGET_MS}), server "
          f"RSS peak {memory.server_peak:.0f} MiB (target <= {RSS_TARGET_MIB})")
    return Outcome(label, title, p99, worst, errors, memory.server_peak, memory.server_last)


def print_outcomes(outcomes: list[Outcome]) -> None:
    print(f"\nround 4, every phase (targets: probe p99 <= {PROBE_P99_TARGET_MS} ms, server RSS "
          f"<= {RSS_TARGET_MIB} MiB):")
    width = max(len(outcome.title.split(":")[0]) for outcome in outcomes)
    print(f"{'phase':<6}  {'':<{width}}  {'p99 ms':>8}  {'max ms':>8}  {'errors':>6}  "
          f"{'RSS peak':>8}  {'RSS end':>8}")
    for outcome in outcomes:
        p99 = f"{outcome.p99:8.1f}" if outcome.p99 is not None else f"{'n/a':>8}"
        worst = f"{outcome.worst:8.1f}" if outcome.worst is not None else f"{'n/a':>8}"
        met = "met" if (outcome.p99 is not None and outcome.p99 <= PROBE_P99_TARGET_MS
                        and outcome.rss_peak <= RSS_TARGET_MIB) else "MISSED"
        print(f"{outcome.label:<6}  {outcome.title.split(':')[0]:<{width}}  {p99}  {worst}  "
              f"{outcome.errors:6d}  {outcome.rss_peak:8.0f}  {outcome.rss_end:8.0f}  {met}")
