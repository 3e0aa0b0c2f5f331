"""The floor of our own stack: a bare waitress app that answers every request with the same small
JSON body, as fast as waitress can serve anything. Benchmarks run it beside dms and report dms's
latencies as ratios to it, timed in the same run, interleaved (../shared/docs/targets.md).

    .venv/bin/python -m bench.floor      # prints "listening on <port>", serves until killed
"""

from __future__ import annotations

import sys

import waitress

BODY = b'{"data":{"type":"users","id":"00000000-0000-4000-8000-000000000000"}}'


def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "application/vnd.api+json"),
                              ("Content-Length", str(len(BODY)))])
    return [BODY]


def main() -> None:
    server = waitress.create_server(app, host="127.0.0.1", port=0, threads=8)
    print(f"listening on {server.effective_port}", flush=True)
    server.run()


if __name__ == "__main__":
    sys.exit(main())
