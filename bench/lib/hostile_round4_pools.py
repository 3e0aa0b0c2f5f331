"""bench/hostile4.py's attacks on the pools users share: attackers' mail accounts on tarpit IMAP
servers holding the mail-check threads, webhooks to a receiver that never answers holding the
senders, rule runs over long documents holding the run threads; each while the victim's own check,
delivery or run is timed (Sampler). Each is a hostile_round4 Attack."""

from __future__ import annotations

import socket
import threading
import time
from collections import Counter

from bench.lib.hostile_http import Tally, connect, create_node, exchange
from bench.lib.hostile_round4 import DONE, Attack, data_of, detail_of, seconds_list, timed
from bench.lib.hostile_round4_attacks import SECRET, WEBHOOKS, LongDocuments
from tests.harness.hostileimap import HostileImap, Message
from tests.harness.mail import message
from tests.harness.rules import rule_body
from tests.harness.samples import pdf
from tests.harness.webhooks import Receiver

FILLED_AFTER = 2.0  # seconds for the attackers to fill a pool before the victim's first sample
# The victim's samples go on after the phase, to at most this many seconds after their start:
# a victim left waiting shows as "still waiting", not as a hang of the benchmark.
SAMPLE_BOUND = 60.0
TARPIT_USERS, TARPIT_ACCOUNTS = 2, 2  # four checks: every mail-check thread of a node
VICTIM_TEXTS = ["Stadtwerke bill for March", "Invoice 7", "Dear Bob"]


def tarpit(released: threading.Event):
    """A message's body sent a byte a second (as hostileimap.trickle) until `released`, then the
    connection shut: the check ends soon after the phase instead of at its deadline."""
    def send_body(connection: socket.socket, uid: int, raw: bytes) -> None:
        try:
            connection.sendall(b"* %d FETCH (UID %d BODY[] {%d}\r\n" % (uid, uid, len(raw)))
            for byte in raw:
                if released.wait(1):
                    connection.shutdown(socket.SHUT_RDWR)
                    return
                connection.sendall(bytes([byte]))
        except OSError:
            return
    return send_body


class SilentReceiver:
    """A listener on loopback that accepts connections and never answers (reads nothing)."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=128)
        self.port = self.listener.getsockname()[1]
        self.connections: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                self.connections.append(self.listener.accept()[0])
            except OSError:
                return

    def stop(self) -> None:
        self.listener.close()
        for connection in self.connections:
            connection.close()


class Sampler:
    """The victim's samples of one thing taking its time (a check, a delivery, a run), one at a
    time until the phase's stop and then, for the one under way, to SAMPLE_BOUND. `start()`
    begins one: its time.perf_counter(), or None when it was refused (counted in `refused`);
    `done()` says whether it is over: None while it is not, else what it showed, or (seconds
    measured more closely, what it showed)."""

    def __init__(self):
        self.samples: list[tuple[float, str]] = []
        self.refused: Counter = Counter()
        self.waiting: float | None = None  # seconds the unfinished one had waited at the end

    def loop(self, stop: threading.Event, start, done) -> None:
        if stop.wait(FILLED_AFTER):
            return
        while not stop.is_set():
            began = start()
            if began is None:
                stop.wait(1)
                continue
            while True:
                over = done()
                if over is not None:
                    self.samples.append(over if isinstance(over, tuple) else
                                        (time.perf_counter() - began, over))
                    break
                if time.perf_counter() - began > SAMPLE_BOUND:
                    self.waiting = time.perf_counter() - began
                    return
                time.sleep(0.05)
            stop.wait(0.5)

    def report(self, what: str, idle: str) -> None:
        shown = f"{seconds_list([seconds for seconds, _ in self.samples])} s" if self.samples \
            else "none over"
        print(f"  the victim's {what}: {shown} ({idle})")
        for showed, count in Counter(showed for _, showed in self.samples).most_common(3):
            print(f"    {count} x {showed}")
        for refusal, count in self.refused.items():
            print(f"    {count} x refused: {refusal}")
        if self.waiting is not None:
            print(f"  one still not over after {self.waiting:.0f} s (the benchmark waits at most "
                  f"{SAMPLE_BOUND:.0f} s)")


class MailPools(Attack):
    label, title = "6a", (f"shared mail-check threads: {TARPIT_USERS} attackers with "
                          f"{TARPIT_ACCOUNTS} accounts each on tarpit IMAP servers (a byte a "
                          "second), checking again and again; the victim's check of one small "
                          "message timed")

    def prepare(self) -> None:
        self.released = threading.Event()
        self.accounts: list[tuple[object, str, HostileImap]] = []
        tally = self.tally()
        for user_number in range(TARPIT_USERS):
            client = connect(self.round.port,
                             self.round.user(f"tarpit{user_number + 1}")["token"])
            for _ in range(TARPIT_ACCOUNTS):
                server = HostileImap([Message(b"y" * 2000, send_body=tarpit(self.released))],
                                     "tarpit").start()
                self.accounts.append((client, self._account(client, tally, server), server))
        self.victim = connect(self.round.port, self.round.victim["token"])
        self.victim_server = HostileImap([], "victim").start()
        self.victim_account = self._account(self.victim, tally, self.victim_server)
        self.sampler = Sampler()

    def _account(self, client, tally: Tally, server: HostileImap) -> str:
        status, body = self.json_api(client, tally, "POST mail-accounts/", "POST",
                                     "/api/mail-accounts/", {"data": {
                                         "type": "mail-accounts", "attributes": {
                                             "host": "127.0.0.1", "port": server.port,
                                             "security": "none", "username": "a",
                                             "password": "b"}}})
        data = data_of((status, body))
        if not isinstance(data, dict):
            raise RuntimeError(f"a mail account was refused: {status} {detail_of(body)}")
        return data["id"]

    def attack(self, stop: threading.Event) -> None:
        self.victim_thread = self.started(self.sampler.loop, stop, self._victim_check,
                                          self._victim_done)
        tally = self.tally()
        while not stop.is_set():
            for client, account, _ in self.accounts:
                data = data_of(timed(tally, "GET mail-accounts/{id}/", client, "GET",
                                     f"/api/mail-accounts/{account}/"))
                if isinstance(data, dict) and not data["attributes"]["checking"]:
                    timed(tally, "POST mail-accounts/{id}/check/", client, "POST",
                          f"/api/mail-accounts/{account}/check/")
            stop.wait(0.5)

    def _victim_check(self) -> float | None:
        raw, _ = message("Invoice 4711", [("invoice-4711.pdf", pdf(["Invoice 4711 Stadtwerke"]),
                                           "application/pdf")])
        self.victim_server.messages.append(Message(raw))
        data = data_of(exchange(self.victim, "GET", f"/api/mail-accounts/{self.victim_account}/"))
        self.before = data["attributes"]["last_checked_at"] if isinstance(data, dict) else None
        began = time.perf_counter()
        status, body = exchange(self.victim, "POST",
                                f"/api/mail-accounts/{self.victim_account}/check/")
        if status != 202:
            self.sampler.refused[f"the check: {status} {detail_of(body)}"] += 1
            return None
        return began

    def _victim_done(self) -> str | None:
        data = data_of(exchange(self.victim, "GET", f"/api/mail-accounts/{self.victim_account}/"))
        if not isinstance(data, dict):
            return "the account could not be read"
        attributes = data["attributes"]
        if attributes["checking"] or attributes["last_checked_at"] == self.before:
            return None
        return f"imported {attributes['imported_count']}, last_error {attributes['last_error']!r}"

    def report(self) -> None:
        self.victim_thread.join(SAMPLE_BOUND)
        self.sampler.report("check, POST .../check/ to checking: false",
                            "about 1 s when nobody else checks")
        sessions = sum(len(server.sessions) for _, _, server in self.accounts)
        print(f"  the tarpits: {sessions} sessions opened by the server")

    def cleanup(self) -> None:
        self.released.set()  # every tarpit shuts its connection: the checks end
        for client, account, server in self.accounts:
            exchange(client, "DELETE", f"/api/mail-accounts/{account}/")
            server.stop()
        exchange(self.victim, "DELETE", f"/api/mail-accounts/{self.victim_account}/")
        self.victim_server.stop()


class WebhookPools(Attack):
    label, title = "6b", (f"shared webhook senders: the attacker's {WEBHOOKS} webhooks to a "
                          "receiver that never answers, the attacker making folders; the "
                          "victim's delivery to its own receiver timed")

    def prepare(self) -> None:
        self.user = self.round.user("hooks2")
        self.client = connect(self.round.port, self.user["token"])
        self.silent, self.receiver = SilentReceiver(), Receiver()
        tally = self.tally()
        self.hooks = [self._webhook(self.client, tally, f"http://127.0.0.1:{self.silent.port}"
                                                        f"/hook/{n}", "node.created")
                      for n in range(WEBHOOKS)]
        self.victim = connect(self.round.port, self.round.victim["token"])
        # An event the probe never makes: only these renames go to the victim's webhook.
        self.victim_hook = self._webhook(self.victim, tally, self.receiver.url("/victim"),
                                         "node.renamed")
        data = data_of(create_node(self.victim, "folders", "renamed 0", self.round.victim["home"]))
        if not isinstance(data, dict) or None in self.hooks or self.victim_hook is None:
            raise RuntimeError(f"a webhook or the victim's folder was refused: "
                               f"{self.answers().examples}")
        self.folder = data["id"]
        self.renames = 0
        self.sampler = Sampler()

    def _webhook(self, client, tally: Tally, url: str, event: str) -> str | None:
        data = data_of(self.json_api(client, tally, "POST webhooks/", "POST", "/api/webhooks/",
                                     {"data": {"type": "webhooks", "attributes": {
                                         "url": url, "events": [event], "secret": SECRET}}}))
        return data["id"] if isinstance(data, dict) else None

    def attack(self, stop: threading.Event) -> None:
        self.victim_thread = self.started(self.sampler.loop, stop, self._rename, self._delivered)
        tally, events = self.tally(), 0
        while not stop.is_set():
            events += 1
            started = time.perf_counter()
            tally.record("POST nodes (folder: an event)", started, create_node(
                self.client, "folders", f"event {events}", self.user["home"]))
            stop.wait(0.05)

    def _rename(self) -> float | None:
        self.renames += 1
        began = time.perf_counter()
        status, body = exchange(self.victim, "PATCH", f"/api/nodes/{self.folder}/", {"data": {
            "type": "folders", "id": self.folder,
            "attributes": {"title": f"renamed {self.renames}"}}},
            {"Content-Type": "application/vnd.api+json"})
        if status != 200:
            self.sampler.refused[f"the rename: {status}"] += 1
            return None
        self.sent_at = time.monotonic() - (time.perf_counter() - began)  # the receiver's clock
        return began

    def _delivered(self) -> tuple[float, str] | None:
        title = f"renamed {self.renames}"
        for delivery in list(self.receiver.deliveries):
            if (delivery.event.get("node") or {}).get("title") == title:
                return delivery.at - self.sent_at, "delivered"
        return None

    def report(self) -> None:
        self.victim_thread.join(SAMPLE_BOUND)
        self.sampler.report("delivery, the rename's PATCH to its POST at the receiver",
                            "0.07 s when nobody else's webhooks wait")
        data = data_of(exchange(self.client, "GET", "/api/webhooks/?page[size]=100")) or []
        errors = Counter((hook["attributes"]["last_error"] or "None")[:100] for hook in data)
        print(f"  the silent receiver accepted {len(self.silent.connections)} connections; the "
              f"attacker's webhooks' last_error: {dict(errors)}")

    def cleanup(self) -> None:
        for hook in self.hooks:
            exchange(self.client, "DELETE", f"/api/webhooks/{hook}/")
        exchange(self.victim, "DELETE", f"/api/webhooks/{self.victim_hook}/")
        self.silent.stop()
        self.receiver.stop()


class RulePools(Attack):
    label, title = "6c", ("shared rule-run threads: the attacker's two runs of its long fuzzy "
                          "rule over its long documents, started again as they end; the victim's "
                          "run over its few documents timed")

    def __init__(self, round_, documents: LongDocuments):
        super().__init__(round_)
        self.documents = documents

    def prepare(self) -> None:
        self.documents.prepare()
        self.client = connect(self.round.port, self.documents.user["token"])
        self.victim = connect(self.round.port, self.round.victim["token"])
        for number, text in enumerate(VICTIM_TEXTS):
            exchange(self.victim, "PUT", f"/api/document/upload/bill-{number}.txt",
                     text.encode(), {"Content-Type": "text/plain"})
        data = data_of(self.json_api(self.victim, self.tally(), "POST rules/ (the victim's)",
                                     "POST", "/api/rules/", rule_body(
                                         "Bills", "bill", actions={"add_tags": ["bill"]})))
        if not isinstance(data, dict):
            raise RuntimeError("the victim's rule was refused")
        self.victim_rule = data["id"]
        self.runs: list[str] = []
        self.sampler = Sampler()

    def attack(self, stop: threading.Event) -> None:
        self.victim_thread = self.started(self.sampler.loop, stop, self._apply, self._run_over)
        tally = self.tally()
        while not stop.is_set():
            under_way = 0
            for run in self.runs[-2:]:
                data = data_of(timed(tally, "GET rule-runs/{id}/", self.client, "GET",
                                     f"/api/rule-runs/{run}/"))
                under_way += isinstance(data, dict) and data["attributes"]["state"] not in DONE
            if under_way < 2:
                data = data_of(timed(tally, "POST rules/{id}/apply/", self.client, "POST",
                                     f"/api/rules/{self.documents.rule}/apply/"))
                if isinstance(data, dict):
                    self.runs.append(data["id"])
            stop.wait(0.5)

    def _apply(self) -> float | None:
        began = time.perf_counter()
        status, body = exchange(self.victim, "POST", f"/api/rules/{self.victim_rule}/apply/")
        data = data_of((status, body))
        if not isinstance(data, dict):
            self.sampler.refused[f"apply: {status} {detail_of(body)}"] += 1
            return None
        self.victim_run = data["id"]
        return began

    def _run_over(self) -> str | None:
        data = data_of(exchange(self.victim, "GET", f"/api/rule-runs/{self.victim_run}/"))
        if not isinstance(data, dict):
            return "the run could not be read"
        attributes = data["attributes"]
        if attributes["state"] not in DONE:
            return None
        return f"{attributes['state']}, examined {attributes['examined']}"

    def report(self) -> None:
        self.victim_thread.join(SAMPLE_BOUND)
        self.sampler.report("run, POST .../apply/ to succeeded",
                            "under a second when nobody else's runs wait")
        states = Counter()
        for run in self.runs:
            data = data_of(exchange(self.client, "GET", f"/api/rule-runs/{run}/"))
            states[data["attributes"]["state"] if isinstance(data, dict) else "?"] += 1
        print(f"  the attacker's runs: {dict(states)}")

    def cleanup(self) -> None:
        # Its runs fail at their next batch: they stop taking a thread from the next phases.
        exchange(self.client, "DELETE", f"/api/rules/{self.documents.rule}/")
