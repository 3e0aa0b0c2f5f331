"""Requests leave no reference cycles behind (dms.web.router): what a request made, its body
included, is freed the moment its answer is sent, not whenever Python's cyclic garbage collector
next runs. `dms serve` lets the collector's youngest generation grow to 7,000 objects
(dms.web.server.YOUNG_GENERATION_THRESHOLD) on that ground."""

from __future__ import annotations

import contextlib
import gc
import subprocess
import sys

from tests.harness.client import error

MARK = "cycle-probe"
NOT_FOUND_ROUTE = error(404, "not_found", "Not found: there is no endpoint at this address.")


@contextlib.contextmanager
def garbage_found():
    """The objects the cyclic garbage collector finds unreachable after the block (requests
    made in it), kept for the test to look at."""
    found: list = []
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield found
        gc.collect()
        found.extend(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def marked_environs(objects: list) -> list[str]:
    """The paths of this test's requests whose WSGI environ is among `objects`."""
    return [item["PATH_INFO"] for item in objects
            if isinstance(item, dict) and MARK in str(item.get("QUERY_STRING", ""))]


def test_refused_and_answered_requests_leave_no_cycle_behind(anon, alice):
    etag = anon.get("/").headers["ETag"]
    with garbage_found() as found:
        answers = [
            anon.get(f"/api/no-such-route/?{MARK}"),
            anon.delete(f"/api/version/?{MARK}"),
            anon.request("POST", f"/api/no-such-route/?{MARK}", data=b"x" * 100_000,
                         headers={"Content-Type": "application/octet-stream"}),
            anon.get(f"/paperless/api/no-such-route/?{MARK}"),
            alice.delete(f"/paperless/api/documents/?{MARK}"),
            anon.get(f"/static/no-such-file.js?{MARK}"),
            anon.get(f"/?{MARK}", headers={"If-None-Match": etag}),
            alice.get(f"/api/nodes/{alice.home_id}/?{MARK}"),
        ]
        statuses = [answer.status_code for answer in answers]
        bodies = [answer.json() for answer in answers[:5]]
        del answers
    assert marked_environs(found) == []
    assert statuses == [404, 405, 404, 404, 405, 404, 304, 200]
    assert bodies == [
        NOT_FOUND_ROUTE,
        error(405, "method_not_allowed", "Method DELETE is not allowed here; allowed: GET."),
        NOT_FOUND_ROUTE,
        {"detail": "Not found."},
        {"detail": 'Method "DELETE" not allowed.'},
    ]


def test_dms_serve_tunes_the_interpreter_once_started():
    """What `dms serve` sets before it serves (dms.web.server.tune_interpreter): start-up's
    objects frozen out of the collector's walks, the young generation's threshold, the switch
    interval."""
    probe = ("import gc, sys\n"
             "from dms.web.server import tune_interpreter\n"
             "tune_interpreter()\n"
             "print(gc.get_threshold(), gc.get_freeze_count() > 1000, sys.getswitchinterval())")
    answer = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True, timeout=60)
    assert answer.stdout == "(7000, 10, 10) True 0.001\n"
