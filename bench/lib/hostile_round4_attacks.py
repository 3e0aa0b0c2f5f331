"""bench/hostile4.py's attacks of one user on everyone: webhooks with URLs in other scripts,
parallel Flate bombs, a storm of rule dry runs, and a split into thousands of documents (the mail
bomb is hostile_round4_mail's). Each is a hostile_round4 Attack: prepared before its phase, looping
during it, reporting what it left behind."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter

from bench.lib.hostile_http import Tally, connect, create_node, exchange, node_body
from bench.lib.hostile_round4 import (
    DONE,
    Attack,
    data_of,
    detail_of,
    new_document,
    timed,
    upload,
    wait_processed,
)
from tests.harness.rules import rule_body
from tests.harness.samples import pdf, pdf_content_bomb
from tests.harness.webhooks import Receiver

SECRET = "a-secret-of-the-benchmark"
WEBHOOKS = 20  # a user's most (api.md, "Webhooks")
EVENT_PAUSE = 0.05  # between the attacker's events: steady, not a flood of its own
# The URL forms of phase 1: a path, a query, a host in ideographic full stops (UTS #46 maps
# them to 127.0.0.1: loopback, never a name sent to a resolver).
URL_FORMS = {"path /dokumente/über": "http://127.0.0.1:{port}/dokumente/über/{n}",
             "query ?name=Bücher": "http://127.0.0.1:{port}/hook?name=Bücher&n={n}",
             "host 127。0。0。1": "http://127。0。0。1:{port}/hook/{n}",
             "path and query /grüße?q=Straße": "http://127.0.0.1:{port}/grüße/{n}?q=Straße"}
BOMB_THREADS = 8
DRY_RUN_THREADS = 16
FLOOD_THREADS = 16
FLOOD_CHILDREN = 100
# Long letters (about 100,000 characters: what a rule reads of a document) and a long fuzzy
# pattern scored against every run of their words (tests/domain/test_rules_fairness.py).
LETTER = " ".join(f"Sehr geehrte Kundin, Ihre Rechnung Nummer {n} vom Stadtwerk Musterstadt"
                  for n in range(1400))
PATTERN = ("Krankenversicherung Beitragsrechnung Mitgliedsnummer Versichertennummer Zahlung "
           "Lastschrift Erinnerung Kontoauszug")
SPLIT_MAX_PAGES = 1000  # DMS_SPLIT_MAX_PAGES' default


class NonAsciiWebhooks(Attack):
    label, title = "1", ("webhooks with non-ASCII URLs: 20 webhooks to a receiver on loopback, "
                         "the attacker making folders (events) meanwhile")

    def prepare(self) -> None:
        self.user = self.round.user("hooks")
        self.client = connect(self.round.port, self.user["token"])
        self.receiver = Receiver()
        tally = self.tally()
        self.made: dict[str, Counter] = {form: Counter() for form in URL_FORMS}
        self.stored: dict[str, str] = {}  # form: the URL as stored, or the refusal
        self.hooks: dict[str, str] = {}  # id: form
        forms = list(URL_FORMS.items())
        for number in range(WEBHOOKS):
            form, pattern = forms[number % len(forms)]
            attributes = {"url": pattern.format(port=self.receiver.port, n=number),
                          "events": ["node.created"], "secret": SECRET}
            status, body = self.json_api(self.client, tally, "POST webhooks/", "POST",
                                         "/api/webhooks/",
                                         {"data": {"type": "webhooks", "attributes": attributes}})
            self.made[form][status] += 1
            data = data_of((status, body))
            if isinstance(data, dict):
                self.hooks[data["id"]] = form
                self.stored.setdefault(form, f"stored as {data['attributes']['url']}")
            else:
                self.stored.setdefault(form, f"{status}: {detail_of(body)}")
        self.events = 0

    def attack(self, stop: threading.Event) -> None:
        tally = self.tally()
        tested: set[str] = set()
        for hook, form in self.hooks.items():  # one test delivery per form (it answered 500)
            if form not in tested:
                tested.add(form)
                timed(tally, f"POST webhooks/{{id}}/test/ ({form})", self.client, "POST",
                      f"/api/webhooks/{hook}/test/")
        while not stop.is_set():
            self.events += 1
            started = time.perf_counter()
            tally.record("POST nodes (folder: an event)", started, create_node(
                self.client, "folders", f"event {self.events}", self.user["home"]))
            stop.wait(EVENT_PAUSE)

    def report(self) -> None:
        for form, statuses in self.made.items():
            shown = ", ".join(f"{status} x{count}" for status, count in sorted(statuses.items()))
            print(f"  webhook URL form '{form}': created {shown}; {self.stored.get(form)}")
        data = data_of(exchange(self.client, "GET", "/api/webhooks/?page[size]=100")) or []
        states: Counter = Counter()
        for hook in data:
            attributes = hook["attributes"]
            states[(self.hooks.get(hook["id"], "?"), attributes["enabled"],
                    attributes["last_status"], attributes["failures_in_a_row"],
                    (attributes["last_error"] or "")[:120])] += 1
        print("  the webhooks at the end (form, enabled, last_status, failures_in_a_row, "
              "last_error):")
        for (form, enabled, status, failures, error), count in sorted(states.items(), key=str):
            print(f"    {count} x '{form}': enabled {enabled}, last_status {status}, "
                  f"failures {failures}, last_error {error or None!r}")
        paths = Counter(delivery.path.split("/")[1].split("?")[0]
                        for delivery in list(self.receiver.deliveries))
        print(f"  the receiver got {len(self.receiver.deliveries)} deliveries (pings included; "
              f"{self.events} events x {len(self.hooks)} webhooks made), by first path segment: "
              f"{dict(paths)}")

    def cleanup(self) -> None:
        for hook in self.hooks:
            exchange(self.client, "DELETE", f"/api/webhooks/{hook}/")
        self.receiver.stop()


class FlateBombs(Attack):
    label, title = "2", (f"parallel Flate bombs: {BOMB_THREADS} attacker threads uploading PDF "
                         "content bombs (1 GiB inflated; 200 pages sharing 300 MiB) into new "
                         "documents, back to back")

    def prepare(self) -> None:
        self.user = self.round.user("bomber")
        self.bombs = {"content-bomb-1GiB.pdf": pdf_content_bomb(1024),
                      "shared-300MiB-x200.pdf": pdf_content_bomb(300, pages=200)}

    def attack(self, stop: threading.Event) -> None:
        self.in_threads(stop, BOMB_THREADS, self._bomb)

    def _bomb(self, index: int, stop: threading.Event, tally: Tally) -> None:
        client = connect(self.round.port, self.user["token"])
        names = list(self.bombs)
        count = index
        while not stop.is_set():
            name = names[count % len(names)]
            count += 1
            document = new_document(client, tally, f"{name} {index}-{count}", self.user["home"])
            if document is not None:
                upload(client, tally, document, name, self.bombs[name])


class LongDocuments:
    """The dry-run attacker's user, its long text documents and its rule with a long fuzzy
    pattern (phase 3's dry runs and phase 6c's runs)."""

    def __init__(self, round_, count: int):
        self.round, self.count = round_, count
        self.user: dict | None = None
        self.rule: str | None = None

    def prepare(self) -> None:
        if self.user is not None:
            return
        self.user = self.round.user("dreamer")
        client = connect(self.round.port, self.user["token"])
        ids = []
        for number in range(self.count):
            status, body = exchange(client, "PUT", f"/api/document/upload/letter-{number:04d}.txt",
                                    f"Schreiben {number}: {LETTER}".encode(),
                                    {"Content-Type": "text/plain"})
            if status == 201:
                ids.append(json.loads(body)["id"])
        deadline = time.monotonic() + 60 + self.count
        ended: set[str] = set()
        while time.monotonic() < deadline and len(ended) < len(ids):
            status, body = exchange(client, "GET", "/api/documents")
            if status == 200:
                ended = {item["id"] for item in json.loads(body) if item["ocr_status"] in DONE}
            time.sleep(0.5)
        print(f"  the attacker has {len(ids)} text documents of {len(LETTER) // 1000}k "
              f"characters ({len(ended & set(ids))} read)")
        data = data_of(exchange(client, "POST", "/api/rules/", rule_body(
            "Insurance", PATTERN, algorithm="fuzzy", actions={"add_tags": ["insurance"]}),
            {"Content-Type": "application/vnd.api+json"}))
        self.rule = data["id"] if isinstance(data, dict) else None
        if self.rule is None:
            raise RuntimeError("the attacker's rule was refused")


class DryRuns(Attack):
    label, title = "3", (f"{DRY_RUN_THREADS} parallel dry runs: the attacker's rule with a "
                         f"long fuzzy pattern over its long text documents, "
                         f"GET /api/rules/{{id}}/matches/ in {DRY_RUN_THREADS} threads")

    def __init__(self, round_, documents: LongDocuments):
        super().__init__(round_)
        self.documents = documents
        self.meta: dict | None = None

    def prepare(self) -> None:
        self.documents.prepare()

    def attack(self, stop: threading.Event) -> None:
        self.in_threads(stop, DRY_RUN_THREADS, self._dry_run)

    def _dry_run(self, index: int, stop: threading.Event, tally: Tally) -> None:
        client = connect(self.round.port, self.documents.user["token"])
        while not stop.is_set():
            status, body = timed(tally, "GET rules/{id}/matches/", client, "GET",
                                 f"/api/rules/{self.documents.rule}/matches/")
            if status == 200:
                self.meta = json.loads(body).get("meta")
            elif status == 429:
                stop.wait(0.05)  # told to come back: at once again, as a hostile client would

    def report(self) -> None:
        print(f"  the last dry run answered: meta {self.meta}")


class Flood(Attack):
    label, title = "8", (f"a flood of ordinary requests: {FLOOD_THREADS} connections of one user, "
                         f"each asking for its folder of {FLOOD_CHILDREN} children (a page of "
                         f"100) back to back")

    def prepare(self) -> None:
        self.user = self.round.user("flood")
        client, tally = connect(self.round.port, self.user["token"]), self.tally()
        self.folder = data_of(self.json_api(client, tally, "POST nodes/", "POST", "/api/nodes/",
                                            node_body("folders", "flood", self.user["home"])))
        if not isinstance(self.folder, dict):
            raise RuntimeError("the attacker's folder was refused")
        for number in range(FLOOD_CHILDREN):
            create_node(client, "folders", f"child {number}", self.folder["id"])

    def attack(self, stop: threading.Event) -> None:
        self.in_threads(stop, FLOOD_THREADS, self._ask)

    def _ask(self, index: int, stop: threading.Event, tally: Tally) -> None:
        client = connect(self.round.port, self.user["token"])
        while not stop.is_set():
            timed(tally, "GET nodes/{folder}/?page[size]=100", client, "GET",
                  f"/api/nodes/{self.folder['id']}/?page[size]=100")


class SplitIntoThousands(Attack):
    """The split of --split-pages pages after every page; when that is refused (a document over
    DMS_SPLIT_MAX_PAGES), the largest split the default limit allows, so that a split into
    many parts is measured either way."""

    label = "5"

    def __init__(self, round_):
        super().__init__(round_)
        self.sizes = sorted({round_.split_pages, min(round_.split_pages, SPLIT_MAX_PAGES)},
                            reverse=True)
        also = (f" (refused: then one of {SPLIT_MAX_PAGES:,}, DMS_SPLIT_MAX_PAGES' default)"
                if len(self.sizes) > 1 else "")
        self.title = (f"a split into thousands: the attacker's processed born-digital PDF of "
                      f"{round_.split_pages:,} pages split after every page{also} "
                      f"(POST /api/documents/{{id}}/split/)")
        self.answers_: list[tuple[int, int, bytes, float]] = []  # (pages, status, body, seconds)
        self.run_id: str | None = None
        self.run_state: dict = {}
        self.posted_at = time.perf_counter()

    def prepare(self) -> None:
        self.user = self.round.user("splitter")
        self.client = connect(self.round.port, self.user["token"])
        tally = self.tally()
        self.documents: list[tuple[int, str]] = []
        for pages in self.sizes:
            content = pdf([f"Page {n} of the long report: Stadtwerke Musterstadt, line {n}"
                           for n in range(1, pages + 1)])
            document = new_document(self.client, tally, f"report of {pages} pages.pdf",
                                    self.user["home"])
            if document is None:
                raise RuntimeError(f"the attacker's document was refused: {tally.examples}")
            started = time.perf_counter()
            status, _ = upload(self.client, tally, document, "report.pdf", content)
            state = wait_processed(self.client, document, 600) if status == 201 else "refused"
            print(f"  the attacker's {pages:,}-page PDF ({len(content) // 1024} KiB): upload "
                  f"{status}, {state} after {time.perf_counter() - started:.1f} s")
            self.documents.append((pages, document))

    def attack(self, stop: threading.Event) -> None:
        self.thread = self.started(self._split, stop)
        stop.wait()

    def _split(self, stop: threading.Event) -> None:
        tally = self.tally()
        client = connect(self.round.port, self.user["token"])
        for pages, document in self.documents:
            self.posted_at = time.perf_counter()
            status, body = timed(tally, f"POST documents/{{id}}/split/ ({pages:,} pages)",
                                 client, "POST", f"/api/documents/{document}/split/",
                                 {"after_pages": list(range(1, pages))})
            self.answers_.append((pages, status, body, time.perf_counter() - self.posted_at))
            if 200 <= status < 300:
                data = data_of((status, body))
                if status == 202 and isinstance(data, dict):
                    self.run_id = data.get("id")
                    self._follow(client, tally, stop)
                return

    def _follow(self, client, tally: Tally, stop: threading.Event) -> None:
        """GET /api/split-runs/{id}/ until the run ended or `stop` is set."""
        while not stop.is_set():
            status, body = timed(tally, "GET split-runs/{id}/", client, "GET",
                                 f"/api/split-runs/{self.run_id}/")
            data = data_of((status, body))
            if not isinstance(data, dict):
                self.run_state = {"answer": status, "detail": detail_of(body)}
                return
            self.run_state = dict(data.get("attributes", {}),
                                  seen_after=round(time.perf_counter() - self.posted_at, 1))
            if self.run_state.get("state") in DONE:
                return
            stop.wait(0.5)

    def report(self) -> None:
        bound = max(60, 3 * self.round.seconds)
        self.thread.join(bound)
        for pages, status, body, seconds in self.answers_:
            shown = "" if 200 <= status < 300 else f": {detail_of(body)}"
            print(f"  the split of {pages:,} pages answered {status} after {seconds:.2f} s "
                  f"(expected 202 and a run to follow, or 400 past DMS_SPLIT_MAX_PAGES){shown}")
        if self.thread.is_alive():
            print(f"  a split has had no answer after {time.perf_counter() - self.posted_at:.1f} "
                  f"s (the phase goes on without it)")
        elif self.run_id:
            until = threading.Event()
            timer = threading.Timer(bound, until.set)
            timer.start()
            self._follow(self.client, self.tally(), until)
            timer.cancel()
            print(f"  its run {self.run_id}: {self.run_state}")
