"""bench/search.py's queries: classes of queries made from the vocabulary, each timed on a
keep-alive connection after a warm-up."""

from __future__ import annotations

import itertools
import json
import math
import random
import statistics
import time
import urllib.parse
from collections import Counter

from bench.common import KeepAlive
from bench.lib.corpus import FUNCTION_WORDS

WARMUP = 20


# -- queries --------------------------------------------------------------------------------------
def make_queries(words: list[str], rare_counts: Counter, count: int,
                 rng: random.Random) -> dict[str, list[str]]:
    content = words[len(FUNCTION_WORDS):]
    present_rare = sorted(rare_counts)
    rare = rng.sample(present_rare, min(count, len(present_rare))) or ["zzzabsent"]
    queries = {
        "common word": words[:count],
        "rare word": rare,
        "two words": [f"{rng.choice(content[:300])} {rng.choice(content)}" for _ in range(count)],
    }
    for letters in (3, 4, 5):
        longer = [word for word in content if len(word) > letters]
        queries[f"prefix {letters}"] = [rng.choice(longer)[:letters] for _ in range(count)]
    return queries


def percentile(samples: list[float], fraction: float) -> float:
    """Nearest rank of sorted `samples`."""
    return samples[max(0, math.ceil(fraction * len(samples)) - 1)]


def run_class(http: KeepAlive, texts: list[str], runs: int) -> dict:
    paths = [(text, f"/api/search/?q={urllib.parse.quote(text)}") for text in texts]
    cycle = itertools.cycle(paths)
    for _ in range(WARMUP):
        http.get(next(cycle)[1])
    samples, bodies = [], {}
    for _ in range(runs):
        text, path = next(cycle)
        start = time.perf_counter()
        body = http.get(path)
        samples.append((time.perf_counter() - start) * 1000)
        bodies[text] = body
    samples.sort()
    results = [len(json.loads(body)) for body in bodies.values()]
    return {"results": statistics.median(results), "p50": statistics.median(samples),
            "p95": percentile(samples, 0.95), "p99": percentile(samples, 0.99)}
