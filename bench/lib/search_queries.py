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
from bench.lib.search_db import CORRESPONDENTS, FIRST_YEAR, LAST_YEAR, TYPES

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
    queries["inside a word"] = inner_words(words, count, rng)
    return queries


def inner_words(words: list[str], count: int, rng: random.Random) -> list[str]:
    """Pieces of 6 letters from inside the vocabulary's compound words that begin no word of it
    (api.md §22: found only inside words, `bescheid` in `Steuerbescheid`): the second tier of
    every search, the first finding nothing."""
    folded = sorted(word.lower() for word in words)
    compounds = [word.lower() for word in words if len(word) >= 12 and word.isalpha()]
    pieces: dict[str, None] = {}
    for _ in range(50 * count):
        if len(pieces) >= count or not compounds:
            break
        word = rng.choice(compounds)
        start = rng.randrange(3, len(word) - 6)
        piece = word[start:start + 6]
        if not any(other.startswith(piece) for other in folded):
            pieces[piece] = None
    return list(pieces) or ["zzzabsent"]


def make_field_queries(words: list[str], count: int,
                       rng: random.Random) -> dict[str, tuple[list[str], list[str]]]:
    """The query language's classes (api.md §20), each beside the same words without fields:
    {class: (queries, the same words alone)}. A word among the 300 most frequent content words
    (in a good part of the documents) with a correspondent (1 in 20 documents), a year (1 in 12),
    a type and half a year, a serial number range, a NOT of a correspondent; and a phrase of two of
    the most frequent words against the two words unquoted."""
    content = words[len(FUNCTION_WORDS):][:300]
    chosen = [rng.choice(content) for _ in range(count)]
    senders = [f'"{rng.choice(CORRESPONDENTS)}"' for _ in range(count)]
    years = [rng.randrange(FIRST_YEAR, LAST_YEAR + 1) for _ in range(count)]
    kinds = [rng.choice(TYPES) for _ in range(count)]
    # Two of the most frequent words: next to each other in many documents, apart in more.
    pairs = [" ".join(rng.sample(words[:12], 2)) for _ in range(count)]
    return {
        "+correspondent": ([f"{word} correspondent:{sender}"
                            for word, sender in zip(chosen, senders, strict=True)], chosen),
        "+created year": ([f"{word} created:{year}"
                           for word, year in zip(chosen, years, strict=True)], chosen),
        "+type, range": ([f"{word} type:{kind} created:[{year}-01-01 to {year}-06-30]"
                          for word, kind, year in zip(chosen, kinds, years, strict=True)],
                         chosen),
        "+asn range": ([f"{word} asn:[{low} to {low + 999}]"
                        for word, low in zip(chosen, (rng.randrange(0, 9000) for _ in chosen),
                                             strict=True)], chosen),
        "-correspondent": ([f"{word} -correspondent:{sender}"
                            for word, sender in zip(chosen, senders, strict=True)], chosen),
        "phrase": ([f'"{pair}"' for pair in pairs], pairs),
    }


def percentile(samples: list[float], fraction: float) -> float:
    """Nearest rank of sorted `samples`."""
    return samples[max(0, math.ceil(fraction * len(samples)) - 1)]


def run_class(http: KeepAlive, texts: list[str], runs: int, extra: str = "") -> dict:
    """Timed requests of `texts` in turn; `extra`: more of the query (`&page=1`). With a page,
    "results" is the median total (`count`)."""
    paths = [(text, f"/api/search/?q={urllib.parse.quote(text)}{extra}") for text in texts]
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
    answers = [json.loads(body) for body in bodies.values()]
    results = [answer["count"] if isinstance(answer, dict) else len(answer)
               for answer in answers]
    return {"results": statistics.median(results), "p50": statistics.median(samples),
            "p95": percentile(samples, 0.95), "p99": percentile(samples, 0.99)}
