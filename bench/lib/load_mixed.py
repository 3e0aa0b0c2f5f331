"""bench/load.py's mixed load: client threads that each loop over reading, searching, creating
and uploading (scans too) as one of the users, for a given time."""

from __future__ import annotations

import json
import random
import threading
import time
import traceback

from bench.common import ServerProcess
from bench.lib.load_http import VND, Client, Tally, create_node_body
from tests.harness.samples import pdf, png  # the tests' tiny PDF writer and scans

SEARCH_WORDS = ["invoice", "electricity", "stadtwerke", "insurance", "folder", "contract", "inv",
                "report", "quarterly", "scan", "receipt", "zzzunknown"]
PDF_WORDS = ["Invoice", "Electricity", "Stadtwerke", "Insurance", "Contract", "Quarterly", "Report",
             "Receipt", "Garden", "Water", "Rent", "Tax"]


# -- the mixed load -------------------------------------------------------------------------------
class Worker:
    """One client of the mixed load: its own connection and folder, its own nodes."""

    OPS = [("list", 25), ("search", 15), ("me", 15), ("create folder", 15), ("move", 15),
           ("upload", 15)]

    def __init__(self, index: int, port: int, user: dict, scans: list[bytes], args,
                 stop: threading.Event):
        self.index, self.user, self.scans, self.args, self.stop = index, user, scans, args, stop
        self.client = Client(port, user["token"])
        self.random = random.Random(index)
        self.tally = Tally()
        self.nodes: list[tuple[str, str]] = []  # (id, parent id), oldest first
        self.uploads = 0
        self.folder = self.sides = None
        self.crash: str | None = None

    def setup(self) -> None:
        """The client's folder under .home, with two sub-folders the moves go between."""
        self.folder = self._create("folders", f"client {self.index:02d}", self.user["home"],
                                   "create folder")
        self.sides = [self._create("folders", side, self.folder, "create folder")
                      for side in ("A", "B")]
        if None in (self.folder, *self.sides):
            raise RuntimeError(f"client {self.index}: could not create its folders")

    def _create(self, kind: str, title: str, parent: str, op: str) -> str | None:
        started = time.perf_counter()
        reply = self.client.call("POST", "/api/nodes/", create_node_body(kind, title, parent),
                                 content_type=VND)
        if self.tally.record(op, started, reply):
            return json.loads(reply[1])["data"]["id"]
        return None

    def run(self) -> None:
        try:
            weights = [weight for _, weight in self.OPS]
            names = [name for name, _ in self.OPS]
            while not self.stop.is_set():
                op = self.random.choices(names, weights)[0]
                getattr(self, "op_" + op.replace(" ", "_"))()
                if len(self.nodes) > self.args.max_nodes:
                    self.op_delete()
                if self.args.think_ms:
                    self.stop.wait(self.args.think_ms / 1000)
        except Exception:  # a bug in the benchmark itself: shown, not hidden
            self.crash = traceback.format_exc()
        finally:
            self.client.close()

    def op_list(self) -> None:
        folder = self.random.choice([self.folder, *self.sides])
        started = time.perf_counter()
        self.tally.record("list folder", started, self.client.call("GET", f"/api/nodes/{folder}/"))

    def op_search(self) -> None:
        word = self.random.choice(SEARCH_WORDS)
        started = time.perf_counter()
        self.tally.record("search", started, self.client.call("GET", f"/api/search/?q={word}"))

    def op_me(self) -> None:
        started = time.perf_counter()
        self.tally.record("users/me", started, self.client.call("GET", "/api/users/me/"))

    def op_create_folder(self) -> None:
        parent = self.random.choice(self.sides)
        node = self._create("folders", f"folder {self.random.randrange(10**6)}", parent,
                            "create folder")
        if node:
            self.nodes.append((node, parent))

    def op_move(self) -> None:
        if not self.nodes:
            return self.op_create_folder()
        position = self.random.randrange(len(self.nodes))
        node, parent = self.nodes[position]
        target = self.sides[1] if parent == self.sides[0] else self.sides[0]
        started = time.perf_counter()
        reply = self.client.call("POST", "/api/nodes/move/", {"nodes": [{"id": node}],
                                                               "target_parent": {"id": target}})
        if self.tally.record("move", started, reply):
            self.nodes[position] = (node, target)

    def op_upload(self) -> None:
        parent = self.random.choice(self.sides)
        self.uploads += 1
        scan = self.args.png_every and self.uploads % self.args.png_every == 0
        number = self.random.randrange(10**6)
        document = self._create("documents", f"{'scan' if scan else 'invoice'} {number}", parent,
                                "create document")
        if document is None:
            return
        self.nodes.append((document, parent))
        if scan:
            body, name, op = self.random.choice(self.scans), f"scan-{number}.png", "upload png"
        else:
            words = self.random.sample(PDF_WORDS, 3)
            body = pdf([f"{' '.join(words)} invoice number {number} client {self.index}",
                        f"Page two: {words[0]} total {number % 997} EUR"])
            name, op = f"invoice-{number}.pdf", "upload pdf"
        started = time.perf_counter()
        self.tally.record(op, started, self.client.call(
            "PUT", f"/api/documents/{document}/upload/{name}", body,
            {"Content-Disposition": f"attachment; filename={name}"}))

    def op_delete(self) -> None:
        node, _ = self.nodes.pop(0)
        started = time.perf_counter()
        self.tally.record("delete", started, self.client.call("DELETE", f"/api/nodes/{node}/"))


def make_scans(count: int) -> list[bytes]:
    return [png(f"Receipt {index} Quarterly Report") for index in range(count)]


def run_mixed(server: ServerProcess, users: list[dict], args, seconds: float,
              on_tick=None) -> tuple[Tally, float, list[Worker]]:
    """args.clients workers for `seconds`; `on_tick(elapsed)` is called about every second."""
    scans = make_scans(6)
    stop = threading.Event()
    workers = [Worker(index, server.port, users[index % len(users)], scans, args, stop)
               for index in range(args.clients)]
    for worker in workers:
        worker.setup()
    threads = [threading.Thread(target=worker.run, daemon=True) for worker in workers]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    while (elapsed := time.perf_counter() - started) < seconds:
        time.sleep(min(1.0, seconds - elapsed))
        if on_tick:
            on_tick(time.perf_counter() - started)
    stop.set()
    for thread in threads:
        thread.join(timeout=180)
    wall = time.perf_counter() - started
    tally = Tally()
    for worker in workers:
        tally.merge(worker.tally)
        if worker.crash:
            print(f"client {worker.index} crashed:\n{worker.crash}")
    return tally, wall, workers
