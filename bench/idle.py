"""Idle memory of the appliance (docs/performance.md, "Numbers"): the resident memory of `dms serve`
right after it starts and after one login (a token made, `GET /users/me/` answered), as a user gets
it from `scripts/run` — in a fresh virtualenv with only dms's own packages — and with the PostgreSQL
and Redis extras installed too (peewee imports psycopg when it is there, so the extras cost memory
even on SQLite). Also with the ssl trick of dms.cli switched off, to show what it saves.

Each variant is started ROUNDS times on a new data dir (SQLite, files under it, OCR in-process)
and its median is printed; "started again" is the second start on a data dir, as an appliance
runs after a reboot (its first start built the empty search index, which maps tantivy's native
library; a start that finds the index complete opens it only for a search or a change). The
virtualenvs are made in a temporary folder (pip needs the package index, or its cache) and
removed at the end.

    .venv/bin/python -m bench.idle [--rounds 3]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "idle-bench-password"
SETTLE_SECONDS = 8
LISTENING = re.compile(r"dms listening on (http://\S+)")
# `dms serve` as scripts/run starts it, or with the ssl trick of dms.cli switched off.
SERVE = "import sys; from dms.cli import main; sys.exit(main())"
SERVE_WITHOUT_TRICK = ("import sys, dms.cli as cli; "
                       "cli._import_http_client_without_tls = lambda: None; sys.exit(cli.main())")


def make_venv(where: Path, extras: str) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    python = where / "bin" / "python"
    target = f"{ROOT}[{extras}]" if extras else str(ROOT)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    target], check=True, capture_output=True)
    return python


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def one_run(python: Path, code: str, data_dir: Path) -> tuple[float, float]:
    """(RSS after start, RSS after a login) of one `dms serve`, in MiB."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("DMS_") and k != "PYTHONPATH"}
    env["DMS_ADMIN_PASSWORD"] = PASSWORD
    process = subprocess.Popen([str(python), "-c", code, "serve", "--port", "0", "--data-dir",
                                str(data_dir)], env=env, cwd=data_dir.parent,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url = None
        for line in process.stdout:
            match = LISTENING.search(line)
            if match:
                url = match.group(1)
                break
        if url is None:
            raise RuntimeError("dms serve did not start")
        # Idle: the search index built and its writer let go (dms.search.indexer closes it
        # after IDLE_CLOSE_SECONDS without changes), the workers waiting.
        time.sleep(SETTLE_SECONDS)
        started = rss_mib(process.pid)
        login = urllib.request.Request(
            url + "/api/auth/login/", headers={"Content-Type": "application/json"},
            data=json.dumps({"username": "admin", "password": PASSWORD}).encode())
        token = json.load(urllib.request.urlopen(login))["token"]
        me = urllib.request.Request(url + "/api/users/me/",
                                    headers={"Authorization": f"Token {token}"})
        urllib.request.urlopen(me).read()
        time.sleep(1)
        return started, rss_mib(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, {platform.platform()}")
    print(f"{'installation':<40} {'after start MiB':>16} {'after a login MiB':>18}")
    with tempfile.TemporaryDirectory(prefix="dms-bench-idle-") as tmp:
        work = Path(tmp)
        variants = [("dms alone (scripts/run)", "", SERVE, False),
                    ("dms alone, started again on its data", "", SERVE, True),
                    ("dms alone, without the ssl trick", "", SERVE_WITHOUT_TRICK, False),
                    ("dms[postgres,redis], on SQLite", "postgres,redis", SERVE, False)]
        venvs: dict[str, Path] = {}
        counter = itertools.count()
        for name, extras, code, again in variants:
            if extras not in venvs:
                venvs[extras] = make_venv(work / f"venv-{extras or 'plain'}", extras)
            runs = []
            for _ in range(args.rounds):
                data_dir = work / f"data-{next(counter)}"
                if again:  # its first start built the search index: a restart finds it there
                    one_run(venvs[extras], code, data_dir)
                runs.append(one_run(venvs[extras], code, data_dir))
            started = statistics.median(run[0] for run in runs)
            logged_in = statistics.median(run[1] for run in runs)
            print(f"{name:<40} {started:>16.1f} {logged_in:>18.1f}", flush=True)


if __name__ == "__main__":
    main()
