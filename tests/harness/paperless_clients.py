"""The real Paperless-ngx clients, pypaperless and easypaperless, in a virtualenv of their own
(`.venv-paperless-clients` on Python 3.13, made by `scripts/setup.sh --test`): `run()` runs a
script of them against a live server and returns what it printed, with every HTTP request the
library made (recorded below httpx, the library itself unchanged), so that a failing test says
which request the server answered wrongly."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

VENV = Path(__file__).resolve().parents[2] / ".venv-paperless-clients"
PYTHON = VENV / "bin" / "python"

# Runs in the clients' Python before the script: the run's inputs, and a recorder of every
# request sent through httpx.AsyncClient (both libraries send through it). No token is recorded,
# only how the request authenticates; a password in a body is masked.
PRELUDE = r'''
import asyncio
import json
import os
import sys
import traceback
from urllib.parse import urlsplit

import httpx

URL = os.environ["PAPERLESS_CLIENTS_URL"]
TOKEN = os.environ.get("PAPERLESS_CLIENTS_TOKEN") or None
PARAMS = json.loads(os.environ["PAPERLESS_CLIENTS_PARAMS"])
REQUESTS = []


def _masked(value):
    if isinstance(value, dict):
        return {key: "***" if key == "password" else _masked(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_masked(item) for item in value]
    return value


def _body(request):
    fields = getattr(request.stream, "fields", None)
    if fields is not None:  # multipart: the form's fields, a file by its name
        return [[field.name, "<file %s>" % field.filename] if hasattr(field, "filename")
                else [field.name, field.value] for field in fields]
    content = request.content
    if not content:
        return None
    try:
        return _masked(json.loads(content))
    except ValueError:
        return "<%d bytes>" % len(content)


def _entry(request):
    url = urlsplit(str(request.url))
    headers = request.headers
    entry = {"method": request.method, "path": url.path, "query": url.query,
             "accept": headers.get("accept"),
             "auth": headers.get("authorization", "").partition(" ")[0] or None,
             "content_type": headers.get("content-type", "").partition(";")[0] or None,
             "body": _body(request)}
    return entry


_send = httpx.AsyncClient.send


async def _recording_send(self, request, **kwargs):
    entry = _entry(request)
    REQUESTS.append(entry)
    try:
        response = await _send(self, request, **kwargs)
    except Exception as error:
        entry["error"] = repr(error)
        raise
    entry["status"] = response.status_code
    entry["response_type"] = response.headers.get("content-type")
    if response.status_code >= 300 and not kwargs.get("stream"):
        entry["response"] = response.text[:600]
    return response


httpx.AsyncClient.send = _recording_send
'''

EPILOGUE = r'''
try:
    _result = asyncio.run(main())
except BaseException:
    traceback.print_exc()
    print(json.dumps({"error": traceback.format_exc(), "requests": REQUESTS}))
    sys.exit(1)
print(json.dumps({"result": _result, "requests": REQUESTS}))
'''


@dataclass
class Run:
    """A finished client script: what its `main()` returned, the requests it made in order."""

    result: Any
    requests: list[dict[str, Any]]

    def trace(self) -> str:
        return describe(self.requests)


class ClientFailed(AssertionError):
    """A client script that raised: the traceback and every request up to it."""


def describe(requests: list[dict[str, Any]]) -> str:
    """The requests one per line: method, path and query, the status, and the answer of a
    request that was not a success."""
    lines = []
    for entry in requests:
        target = entry["path"] + (f"?{entry['query']}" if entry["query"] else "")
        line = f"{entry['method']} {target} -> {entry.get('status', entry.get('error'))}"
        if "response" in entry:
            line += f" {entry['response']}"
        lines.append(line)
    return "\n".join(lines)


def run(script: str, url: str, token: str | None = None, params: dict | None = None,
        timeout: float = 180) -> Run:
    """Run `script` (it defines `async def main()` returning JSON-able values) with the clients'
    Python; it sees URL (the dialect's base, e.g. `<server>/paperless`), TOKEN and PARAMS."""
    if not PYTHON.exists():
        raise AssertionError(f"{PYTHON} is missing: run scripts/setup.sh --test")
    env = {**os.environ, "PAPERLESS_CLIENTS_URL": url, "PAPERLESS_CLIENTS_TOKEN": token or "",
           "PAPERLESS_CLIENTS_PARAMS": json.dumps(params or {})}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "client_script.py"
        path.write_text(PRELUDE + "\n" + script + "\n" + EPILOGUE)
        done = subprocess.run([str(PYTHON), str(path)], capture_output=True, text=True, env=env,
                              timeout=timeout)
    lines = done.stdout.strip().splitlines()
    try:
        report = json.loads(lines[-1])
    except (IndexError, ValueError):
        raise ClientFailed(f"the client script printed no report (exit {done.returncode}):\n"
                           f"{done.stdout}\n{done.stderr}") from None
    if done.returncode != 0 or "error" in report:
        raise ClientFailed(f"{report.get('error', done.stderr)}\nrequests:\n"
                           f"{describe(report['requests'])}")
    return Run(report["result"], report["requests"])
