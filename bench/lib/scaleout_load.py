"""Parts 2 and 3 of bench/scaleout.py: concurrent clients of mixed requests on both web nodes,
and concurrent uploads of large files into the shared files dir."""

from __future__ import annotations

import hashlib
import math
import random
import threading
import time
import uuid

from bench.lib.cpu import CpuMeter
from bench.lib.scaleout_api import JSONAPI, WORDS, Api, percentile, texts_of
from bench.lib.scaleout_cluster import Bench

KINDS = ["GET /api/users/me/", "GET /api/nodes/{Listing}/ (25 of 100)", "GET /api/search/?q=word",
         "POST /api/nodes/ (new document)", "PUT upload (2 KiB text)"]


def part_mixed(bench: Bench, token: str, home: str, listing: str, seed: int, args) -> None:
    print(f"\n== 2. {args.clients} concurrent clients, mixed requests, {args.seconds:g} s, half "
          f"on each web node (no worker running)", flush=True)
    uploads_folder = Api(bench.web_nodes()[0].url, token).create("folders", "Mixed uploads", home)
    listing_pages = max(1, math.ceil(seed / 25))
    latencies: dict[str, list[float]] = {kind: [] for kind in KINDS}
    per_node = [0] * len(bench.web_nodes())
    errors: list[str] = []
    lock = threading.Lock()
    deadline = [0.0]
    barrier = threading.Barrier(args.clients + 1)

    def client(index: int) -> None:
        which = index % len(bench.web_nodes())
        api = Api(bench.web_nodes()[which].url, token)
        rng = random.Random(100 + index)
        mine: dict[str, list[float]] = {kind: [] for kind in KINDS}
        count, failures = 0, []
        barrier.wait()

        def timed(kind: str, method: str, path: str, expect: int, **kwargs):
            nonlocal count
            start = time.perf_counter()
            try:
                response = api.call(method, path, expect, **kwargs)
            except Exception as error:  # a non-2xx answer or a broken connection: counted
                failures.append(f"{kind}: {str(error)[:200]}")
                return None
            mine[kind].append((time.perf_counter() - start) * 1000)
            count += 1
            return response

        while time.monotonic() < deadline[0]:
            choice = rng.randrange(4)
            if choice == 0:
                timed(KINDS[0], "GET", "/api/users/me/", 200)
            elif choice == 1:
                page = rng.randint(1, listing_pages)
                timed(KINDS[1], "GET", f"/api/nodes/{listing}/?page[size]=25&page[number]={page}",
                      200)
            elif choice == 2:
                timed(KINDS[2], "GET", f"/api/search/?q={rng.choice(WORDS)}", 200)
            else:
                body = {"data": {"type": "documents", "attributes": {"title": f"note {index}"},
                                 "relationships": {"parent": {"data": {
                                     "type": "folders", "id": uploads_folder}}}}}
                response = timed(KINDS[3], "POST", "/api/nodes/", 201, json=body,
                                 headers={"Content-Type": JSONAPI})
                if response is not None:
                    document = response.json()["data"]["id"]
                    content = (f"note {uuid.uuid4()} " + texts_of(rng, 300) + "\n").encode()[:2048]
                    timed(KINDS[4], "PUT", f"/api/documents/{document}/upload/note.txt", 201,
                          data=content, headers={"Content-Type": "application/octet-stream",
                                                 "Content-Disposition":
                                                 "attachment; filename=note.txt"})
        api.close()
        with lock:
            for kind in KINDS:
                latencies[kind] += mine[kind]
            per_node[which] += count
            errors.extend(failures)

    threads = [threading.Thread(target=client, args=(n,), daemon=True)
               for n in range(args.clients)]
    for thread in threads:
        thread.start()
    deadline[0] = time.monotonic() + args.seconds
    meter = CpuMeter()
    started = time.monotonic()
    barrier.wait()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - started
    cpu = meter.stop()
    every = sorted(x for values in latencies.values() for x in values)
    print(f"{'request':<40} {'count':>7} {'p50 ms':>8} {'p99 ms':>8}")
    for kind in KINDS:
        ordered = sorted(latencies[kind])
        print(f"{kind:<40} {len(ordered):>7} {percentile(ordered, 0.5):8.1f} "
              f"{percentile(ordered, 0.99):8.1f}")
    print(f"{'all':<40} {len(every):>7} {percentile(every, 0.5):8.1f} "
          f"{percentile(every, 0.99):8.1f}")
    print(f"{len(every) / wall:.1f} requests/s ({' + '.join(f'{n / wall:.1f}' for n in per_node)}"
          f" on the two nodes), {len(errors)} error(s); cores busy {cpu['busy']:.0f}%, of which "
          f"this benchmark's clients {cpu['client']:.0f}%, other processes {cpu['other']:.0f}%",
          flush=True)
    for error in sorted(set(errors))[:5]:
        print(f"  error: {error}")
    print("all clients are the admin: dms serialises one owner's tree writes (POST, the PUT's "
          "commit) on a PostgreSQL advisory lock per owner, across both nodes")


def part_uploads(bench: Bench, token: str, home: str, args) -> None:
    size = args.upload_mib * 2**20
    print(f"\n== 3. upload throughput into the shared files dir: {args.upload_clients} clients, "
          f"{args.upload_mib} MiB text files (each a new document), {args.seconds:g} s, half on "
          f"each web node (no worker running)", flush=True)
    folder = Api(bench.web_nodes()[0].url, token).create("folders", "Big uploads", home)
    rng = random.Random(3)
    alphabet = b"abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789\n"
    blob = bytes(rng.choice(alphabet) for _ in range(2**16)) * (size // 2**16 + 1)
    latencies: list[float] = []
    finished: list[float] = []  # time.monotonic() of each acknowledged upload
    uploaded: list[tuple[str, str, int]] = []  # (document id, sha256, web node index)
    errors: list[str] = []
    lock = threading.Lock()
    deadline = [0.0]
    barrier = threading.Barrier(args.upload_clients + 1)

    def client(index: int) -> None:
        which = index % len(bench.web_nodes())
        api = Api(bench.web_nodes()[which].url, token)
        barrier.wait()
        number = 0
        while time.monotonic() < deadline[0]:
            number += 1
            prefix = f"upload {index}-{number} {uuid.uuid4()}\n".encode()
            content = prefix + blob[:size - len(prefix)]
            try:
                document = api.create("documents", f"big {index}-{number}", folder)
                start = time.perf_counter()
                api.upload(document, f"big-{index}-{number}.txt", content)
                elapsed = (time.perf_counter() - start) * 1000
            except Exception as error:  # counted
                with lock:
                    errors.append(str(error)[:200])
                continue
            with lock:
                latencies.append(elapsed)
                finished.append(time.monotonic())
                if len(uploaded) < 3 or rng.random() < 0.05:
                    uploaded.append((document, hashlib.sha256(content).hexdigest(), which))
        api.close()

    threads = [threading.Thread(target=client, args=(n,), daemon=True)
               for n in range(args.upload_clients)]
    for thread in threads:
        thread.start()
    deadline[0] = time.monotonic() + args.seconds
    meter = CpuMeter()
    started = time.monotonic()
    barrier.wait()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - started
    cpu = meter.stop()
    latencies.sort()
    step = args.seconds / 4
    buckets = [0] * 4
    for moment in finished:
        buckets[min(3, int((moment - started) / step))] += 1
    mib = len(latencies) * size / 2**20
    print(f"{len(latencies)} uploads, {mib:,.0f} MiB in {wall:.1f} s: {mib / wall:.1f} MiB/s "
          f"({mib * 2**20 / 1e6 / wall:.1f} MB/s), {len(latencies) / wall:.2f} uploads/s; PUT "
          f"latency p50 {percentile(latencies, 0.5):.0f} ms, p99 {percentile(latencies, 0.99):.0f}"
          f" ms; {len(errors)} error(s); cores busy {cpu['busy']:.0f}%, of which this benchmark's "
          f"clients {cpu['client']:.0f}%, other processes {cpu['other']:.0f}%", flush=True)
    print(f"MiB/s in each quarter of the run ({step:g} s each): "
          + ", ".join(f"{count * size / 2**20 / step:.0f}" for count in buckets))
    for error in sorted(set(errors))[:5]:
        print(f"  error: {error}")
    # Where the files are, and that they download intact through the other node.
    stored = [p for p in bench.shared.rglob("*") if p.is_file() and ".previews" not in p.parts]
    big = [p for p in stored if p.stat().st_size == size]
    leftovers = [p for node in bench.web_nodes() for p in (node.data_dir / "tmp").rglob("*")
                 if p.is_file()]
    checked = bad = 0
    for document, digest, which in uploaded[:10]:
        other = Api(bench.web_nodes()[1 - which].url, token)
        try:
            body = other.call("GET", f"/api/documents/{document}/download/").content
            checked += 1
            bad += hashlib.sha256(body).hexdigest() != digest
        finally:
            other.close()
    print(f"shared files dir ({bench.shared}): {len(big)} files of {args.upload_mib} MiB "
          f"(uploads acknowledged: {len(latencies)}); files left in the web nodes' tmp dirs: "
          f"{len(leftovers)}; {checked} uploads downloaded through the other node, "
          f"{checked - bad} intact")
    print("the shared dir is tmpfs (memory, not a network mount): what is measured is dms "
          "receiving each body into the node's own tmp/ (on the disk, in its data dir) and "
          "copying it onto another filesystem")
