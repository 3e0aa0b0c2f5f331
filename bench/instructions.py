"""Instructions a request costs, counted by valgrind's cachegrind: dms's whole WSGI app called
in-process, no socket and no server threads, `dms serve`'s interpreter settings. On a machine
whose speed moves from one minute to the next (2× on the 2-core machines of bench/RESULTS.md), a
change of a few per cent cannot be timed; its instructions can be counted, the same whatever else
the machine does (two rounds agree within ~0.5 %). A profile probe, not a target row: it prints
instructions per request and never asserts.

Each request kind (`--kinds`) is made N1 and N2 times in two processes under valgrind; start-up
cancels out of the difference: (I(N2) − I(N1)) / (N2 − N1). One base process makes every kind
N1 times, and one process per kind makes it N2 times and the others N1 times (1 + kinds
processes a round, each ~30–60 s under valgrind). `--against DIR` counts another checkout of
dms too (its `dms/` imported from DIR, e.g. a `git worktree` of the commit before), alternated
with this one, so that a change is told from what it changed.

    scripts/setup.sh --bench     # valgrind among what it installs
    .venv/bin/python -m bench.instructions [--rounds 2] [--kinds me,page10,page100]
        [--against /tmp/before]

The data: a folder of 100 documents made through the API (no files); `me` is `GET
/api/users/me/`, `page10` / `page100` its default page / a page of 100, `titles100` /
`five100` a page of 100 with `fields[...]` (docs/api.md "Fewer fields"). An answer's bytes are
printed beside its instructions.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import ADMIN_PASSWORD, machine

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = 100
FIVE_FIELDS = "title,tags,updated_at,size,ocr_status"
# kind: (path below the folder's, or "me"; query string)
KINDS = {
    "me": ("me", ""),
    "page10": ("folder", ""),
    "page100": ("folder", "page[size]=100"),
    "titles100": ("folder", "page[size]=100&fields[documents]=title&fields[folders]=title"),
    "five100": ("folder", f"page[size]=100&fields[documents]={FIVE_FIELDS}"),
}
REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--kinds", default="me,page10,page100,titles100,five100",
                        help=f"comma-separated, of: {', '.join(KINDS)}")
    parser.add_argument("--calls", default="20,120", help="N1,N2: requests of a kind in the "
                        "base process and in the kind's own")
    parser.add_argument("--against", type=Path, help="another checkout of dms, counted too")
    parser.add_argument("--run", help=argparse.SUPPRESS)  # the process under valgrind
    args = parser.parse_args()
    kinds = [kind.strip() for kind in args.kinds.split(",") if kind.strip()]
    unknown = [kind for kind in kinds if kind not in KINDS]
    if unknown:
        parser.error(f"unknown kinds: {', '.join(unknown)}")
    if args.run is not None:
        run_requests(json.loads(args.run))
        return
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed: scripts/setup.sh --bench installs it")
    low, high = (int(number) for number in args.calls.split(","))
    checkouts = {"this checkout": ROOT}
    if args.against is not None:
        checkouts[f"--against {args.against}"] = args.against.resolve()
    print(f"machine: {machine()}")
    print(f"instructions a request (valgrind cachegrind, ({high} - {low}) requests of a kind; "
          f"{args.rounds} round(s), alternated)")
    counted: dict[tuple[str, str], list[float]] = {}
    sizes: dict[tuple[str, str], int] = {}
    for _ in range(args.rounds):
        for name, checkout in checkouts.items():
            base, _ = counted_run(checkout, {kind: low for kind in kinds})
            for kind in kinds:
                total, answer_sizes = counted_run(checkout, {**{k: low for k in kinds},
                                                             kind: high})
                counted.setdefault((name, kind), []).append((total - base) / (high - low))
                sizes[(name, kind)] = answer_sizes[kind]
    print(f"{'checkout':<34} {'request':<10} {'bytes':>8} {'instructions (median)':>22}  rounds")
    for (name, kind), values in counted.items():
        rounds = " ".join(f"{value:,.0f}" for value in values)
        print(f"{name:<34} {kind:<10} {sizes[(name, kind)]:>8,} "
              f"{statistics.median(values):>22,.0f}  {rounds}")


def counted_run(checkout: Path, calls: dict[str, int]) -> tuple[int, dict[str, int]]:
    """Instructions of one process making `calls` requests of each kind, and each kind's answer
    size."""
    command = ["valgrind", "--tool=cachegrind", "--cache-sim=no",
               "--cachegrind-out-file=/dev/null", sys.executable, "-m", "bench.instructions",
               "--run", json.dumps({"checkout": str(checkout), "calls": calls})]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
    found = REFS.search(result.stderr)
    if result.returncode != 0 or found is None:
        raise RuntimeError(f"the counted run failed:\n{result.stdout}\n{result.stderr[-3000:]}")
    answer = json.loads(result.stdout.splitlines()[-1])
    if not Path(answer["dms"]).is_relative_to(checkout):
        raise RuntimeError(f"the counted run imported {answer['dms']}, not {checkout}'s dms")
    return int(found.group(1).replace(",", "")), answer["sizes"]


def run_requests(spec: dict) -> None:
    """Under valgrind: a new server's app, its data made, then the requests; prints where dms
    came from and the answers' sizes as JSON, and leaves at once (no clean-up counted)."""
    sys.path.insert(0, spec["checkout"])  # before the bench's own checkout, which -m put first
    import dms
    from dms.config import Config
    from dms.web.server import Server, tune_interpreter

    data_dir = Path(tempfile.mkdtemp(prefix="dms-bench-instructions-")) / "data"
    config = Config(host="127.0.0.1", port=0, data_dir=data_dir, threads=4,
                    events_max_streams=8, admin_username="admin",
                    admin_password=ADMIN_PASSWORD, ocr_workers=0, no_worker=True,
                    ocr_lang="eng")
    app = Server(config).wsgi_app
    token = json.loads(call(app, "POST", "/api/auth/login/", body={
        "username": "admin", "password": ADMIN_PASSWORD}, media="application/json"))["token"]
    me = json.loads(call(app, "GET", "/api/users/me/", token=token))["data"]
    folder = make_node(app, token, "folders", "Bills",
                       me["relationships"]["home_folder"]["data"]["id"])
    for number in range(DOCUMENTS):
        make_node(app, token, "documents", f"Invoice {number}", folder)
    paths = {"me": "/api/users/me/", "folder": f"/api/nodes/{folder}/"}
    sizes = {kind: len(call(app, "GET", paths[KINDS[kind][0]], KINDS[kind][1], token=token))
             for kind in spec["calls"]}
    tune_interpreter()
    for kind, count in spec["calls"].items():
        path, query = paths[KINDS[kind][0]], KINDS[kind][1]
        for _ in range(count):
            call(app, "GET", path, query, token=token)
    print(json.dumps({"dms": dms.__file__, "sizes": sizes}), flush=True)
    shutil.rmtree(data_dir.parent, ignore_errors=True)
    os._exit(0)


def make_node(app, token: str, kind: str, title: str, parent: str) -> str:
    body = {"data": {"type": kind, "attributes": {"title": title}, "relationships": {
        "parent": {"data": {"type": "folders", "id": parent}}}}}
    return json.loads(call(app, "POST", "/api/nodes/", body=body, token=token))["data"]["id"]


def call(app, method: str, path: str, query: str = "", body: dict | None = None,
         token: str | None = None, media: str = "application/vnd.api+json") -> bytes:
    """One WSGI call of `app`; the answer's body (an error answer stops the run)."""
    raw = json.dumps(body).encode() if body is not None else b""
    environ = {"REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": query,
               "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8000",
               "SERVER_PROTOCOL": "HTTP/1.1", "wsgi.url_scheme": "http",
               "HTTP_HOST": "127.0.0.1:8000", "REMOTE_ADDR": "127.0.0.1",
               "wsgi.input": io.BytesIO(raw), "CONTENT_LENGTH": str(len(raw))}
    if body is not None:
        environ["CONTENT_TYPE"] = media
    if token is not None:
        environ["HTTP_AUTHORIZATION"] = f"Token {token}"
    status: list[str] = []
    answer = app(environ, lambda line, headers, *_: status.append(line))
    content = b"".join(answer)
    if hasattr(answer, "close"):
        answer.close()
    if not status[0].startswith("2"):
        raise RuntimeError(f"{method} {path}?{query}: {status[0]} {content[:300]!r}")
    return content


if __name__ == "__main__":
    main()
