"""bench/scaleout.py's cluster (tests/harness/nodes.py's NodeGroup configured as a real
installation is) and its preparation: a warm-up scan and the text documents parts 1 and 2 read."""

from __future__ import annotations

import random
import time
from pathlib import Path

from bench.lib.scaleout_api import PASSWORD, WORDS, Api, status_text, texts_of, wait_processed
from tests.harness import samples
from tests.harness.nodes import NodeGroup


class Bench(NodeGroup):
    """The two web nodes and the workers of the runs, configured as a real installation is."""

    def __init__(self, root: Path, shared: Path, database_url: str, queue_url: str):
        super().__init__(root, {"DMS_DATABASE_URL": database_url, "DMS_QUEUE_URL": queue_url,
                                "DMS_FILES_DIR": str(shared), "DMS_ADMIN_PASSWORD": PASSWORD},
                         worker_args=("--concurrency", "1"), start_timeout=120, stop_timeout=90)
        self.shared = shared


def prepare(bench: Bench, apis: list[Api], home: str, seed: int) -> str:
    """One worker reads a warm-up scan and `seed` small text documents in `Listing`; its id."""
    started = time.perf_counter()
    rng = random.Random(1)
    [worker] = bench.start_workers(1)
    listing = apis[0].create("folders", "Listing", home)
    warm = apis[0].create("folders", "Warm-up", home)
    warm_doc = apis[0].create("documents", "warm-up scan", warm)
    apis[0].upload(warm_doc, "warm.tiff", samples.tiff(["Warm up page one", "Warm up page two"]))
    for number in range(seed):
        api = apis[number % 2]
        title = f"Letter {number:03d} {rng.choice(WORDS)} {rng.choice(WORDS)}"
        document = api.create("documents", title, listing)
        api.upload(document, f"letter-{number:03d}.txt", (texts_of(rng, 60) + "\n").encode())
    wait_processed(apis[0], warm, 1, 600)
    statuses = wait_processed(apis[0], listing, seed, 600)
    bench.stop_workers()
    print(f"prepared in {time.perf_counter() - started:.1f} s: a warm-up scan and {seed} text "
          f"documents in `Listing`, read by {worker.name} ({status_text(statuses)})", flush=True)
    return listing
