"""The HTTP server stays up (dms/web/httpserver.py): idle and slow connections cannot lock real
clients out, slow headers are cut off, waitress' own errors are the JSON:API envelope, and every
answer carries X-Content-Type-Options: nosniff. Raw sockets, against a real server."""

from __future__ import annotations

import contextlib
import json
import logging
import select
import socket
import threading
import time

import pytest
from waitress import wasyncore

from dms import __version__
from dms.config import Config
from dms.web.httpserver import MAX_CHUNK_LINE, create_server, fit_connection_limit
from tests.harness.client import VND, Client, error
from tests.harness.database import snapshot
from tests.harness.documents import make_folder, new_document, upload
from tests.harness.waiting import WaitTimeout, wait_for

pytestmark = pytest.mark.socket  # waitress itself: connections, limits, its own errors

VERSION = {"version": __version__}
GET_VERSION = b"GET /api/version/ HTTP/1.1\r\nHost: test\r\n\r\n"


def connect(port: int, timeout: float = 5.0) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=timeout)


def read_response(sock: socket.socket) -> tuple[str, dict, bytes]:
    """One HTTP response with a Content-Length: (status line, headers, body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed before a whole response: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines)
    while len(body) < int(headers["Content-Length"]):
        chunk = sock.recv(65536)
        assert chunk, "connection closed in the middle of the body"
        body += chunk
    return status, headers, body


def exchange(port: int, request: bytes) -> tuple[str, dict, bytes]:
    """Send `request` and read the answer. A server that refuses a body answers before the body
    ends and closes: the rest is not sent once an answer is there (sending on would make the
    kernel reset the connection and could drop the answer unread, as a loaded machine showed)."""
    with connect(port) as sock:
        for start in range(0, len(request), 65536):
            if select.select([sock], [], [], 0)[0]:
                break
            try:
                sock.sendall(request[start:start + 65536])
            except (ConnectionResetError, BrokenPipeError):
                break
        return read_response(sock)


def closed_by_server(sock: socket.socket, timeout: float) -> bool:
    """True if the server closes the connection (FIN or reset) within `timeout` seconds."""
    ready, _, _ = select.select([sock], [], [], timeout)
    if not ready:
        return False
    try:
        return sock.recv(65536) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True


def assert_json_error(response, status_line: str, body: dict) -> None:
    """A waitress error: the envelope, nosniff, and the connection closed after it."""
    status, headers, raw = response
    assert status == status_line
    assert headers["Content-Type"] == VND
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Connection"] == "close"
    assert json.loads(raw) == body


# -- connection limit and timeouts ------------------------------------------------------------

@pytest.mark.config(connection_limit=20, header_timeout=60)
def test_forty_idle_and_slow_connections_do_not_lock_out_a_real_client(server, anon, caplog):
    caplog.set_level(logging.WARNING, logger="dms.httpserver")
    idle = [connect(server.port) for _ in range(25)]
    slow = [connect(server.port) for _ in range(15)]
    stop = threading.Event()

    def trickle():  # one header line per second each: never idle, never finished
        line = 0
        while True:
            for sock in slow:
                try:
                    sock.sendall(b"GET /api/version/ HTTP/1.1\r\n" if line == 0
                                 else b"X-Slow-%d: 1\r\n" % line)
                except OSError:
                    pass
            line += 1
            if stop.wait(1.0):
                return

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    try:
        time.sleep(0.2)
        started = time.monotonic()
        status, headers, body = exchange(server.port, GET_VERSION)
        assert (status, json.loads(body)) == ("HTTP/1.1 200 OK", VERSION)
        assert time.monotonic() - started < 3
        assert len(server._wsgi.active_channels) <= 20
        time.sleep(0.2)  # the evicted ones were closed at once; let their ends arrive
        closed = sum(closed_by_server(sock, 0) for sock in idle + slow)
        assert closed >= 21  # 41 clients, room for 20
        response = anon.get("/health")
        assert (response.status_code, response.json()) == (200, {"status": "ok"})
        assert exchange(server.port, GET_VERSION)[0] == "HTTP/1.1 200 OK"
    finally:
        stop.set()
        thread.join()
        for sock in idle + slow:
            sock.close()
    warnings = [r.getMessage() for r in caplog.records
                if r.name == "dms.httpserver" and r.levelno == logging.WARNING]
    assert warnings == ["20 connections open, the limit (DMS_CONNECTION_LIMIT): closing the idle "
                        "and slow ones to accept new clients"]


@pytest.mark.config(header_timeout=1)
def test_slow_headers_are_cut_off_while_an_idle_keep_alive_connection_stays(server):
    keep = connect(server.port)
    keep.sendall(GET_VERSION)
    assert read_response(keep)[0] == "HTTP/1.1 200 OK"
    slow = connect(server.port)
    slow.sendall(b"GET /api/version/ HTTP/1.1\r\n")
    started = time.monotonic()
    try:
        while not closed_by_server(slow, 0.25):  # a header line every 0.25 s: busy, never done
            assert time.monotonic() - started < 5, "the slow connection was never closed"
            try:
                slow.sendall(b"X-Trickle: 1\r\n")
            except (BrokenPipeError, ConnectionResetError):
                break
        assert 1.0 <= time.monotonic() - started < 4.0
        # Idle longer than header_timeout, far less than channel_timeout: still usable.
        keep.sendall(GET_VERSION)
        status, _, body = read_response(keep)
        assert (status, json.loads(body)) == ("HTTP/1.1 200 OK", VERSION)
    finally:
        keep.close()
        slow.close()


@pytest.mark.config(channel_timeout=1)
def test_an_idle_keep_alive_connection_closes_after_channel_timeout(server):
    with connect(server.port) as sock:
        sock.sendall(GET_VERSION)
        assert read_response(sock)[0] == "HTTP/1.1 200 OK"
        started = time.monotonic()
        assert closed_by_server(sock, 4.0)
        # The server counts from when it sent the answer, a moment before this test read it.
        assert 0.9 <= time.monotonic() - started < 4.0


def test_the_settings_reach_waitress(server):
    adj = server._wsgi.adj
    assert (adj.connection_limit, adj.channel_timeout, adj.cleanup_interval) == (500, 60, 1)
    assert server._wsgi.header_timeout == 15
    # environ["waitress.client_disconnected"] only ever turns True with lookahead.
    assert adj.channel_request_lookahead == 1


def test_the_settings_come_from_the_environment():
    config = Config.load({}, {"DMS_CONNECTION_LIMIT": "1000", "DMS_HEADER_TIMEOUT": "5",
                              "DMS_CHANNEL_TIMEOUT": "30"})
    assert (config.connection_limit, config.header_timeout, config.channel_timeout) == (1000, 5, 30)
    defaults = Config.load({}, {})
    assert (defaults.connection_limit, defaults.header_timeout, defaults.channel_timeout) == \
        (500, 15, 60)


@pytest.mark.parametrize("soft, hard, expected_limit, expected_soft", [
    (1024, 1024, 500, 1024),      # fits already: nothing changes
    (256, 4096, 500, 600),        # raised as far as needed, no further
    (256, 400, 300, 400),         # raised to the hard limit, still too small: fewer connections
])
def test_the_open_files_limit_is_raised_to_fit_the_connections(monkeypatch, caplog, soft, hard,
                                                                expected_limit, expected_soft):
    resource = pytest.importorskip("resource")
    limits = {"now": (soft, hard)}
    monkeypatch.setattr(resource, "getrlimit", lambda which: limits["now"])
    monkeypatch.setattr(resource, "setrlimit", lambda which, value: limits.update(now=value))
    caplog.set_level(logging.WARNING, logger="dms.httpserver")
    assert fit_connection_limit(500, reserve=100) == expected_limit
    assert limits["now"] == (expected_soft, hard)
    warnings = [r.getMessage() for r in caplog.records if r.name == "dms.httpserver"]
    assert warnings == ([] if expected_limit == 500 else [
        "DMS_CONNECTION_LIMIT=500 does not fit this process' limit of 400 open files "
        "(hard limit 400); serving at most 300 connections"])


# -- the server on its own, with a tiny application -------------------------------------------

@pytest.fixture
def tiny():
    """tiny(app, **waitress_settings) -> a dms.web.httpserver server running `app` in a thread."""
    started = []

    def start(app, **settings):
        server = create_server(app, host="127.0.0.1", port=0, header_timeout=60,
                               cleanup_interval=1, **{"threads": 2, **settings})
        stop = threading.Event()

        def run():
            while not stop.is_set():
                wasyncore.loop(timeout=0.2, use_poll=True, map=server._map, count=1)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        started.append((server, stop, thread))
        return server

    yield start
    for server, stop, thread in started:
        stop.set()
        thread.join(timeout=5)
        server.task_dispatcher.shutdown(timeout=5)
        wasyncore.close_all(server._map)


def test_a_request_in_flight_is_never_closed_to_make_room(tiny):
    release = threading.Event()

    def app(environ, start_response):
        if environ["PATH_INFO"] == "/block":
            release.wait(10)
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
        return [b"ok"]

    server = tiny(app, connection_limit=20)
    busy = connect(server.effective_port)
    busy.sendall(b"GET /block HTTP/1.1\r\nHost: test\r\n\r\n")
    time.sleep(0.2)  # served by a worker now: the oldest connection, yet never evicted
    crowd = [connect(server.effective_port) for _ in range(40)]
    try:
        status, _, body = exchange(server.effective_port, b"GET /fast HTTP/1.1\r\nHost: t\r\n\r\n")
        assert (status, body) == ("HTTP/1.1 200 OK", b"ok")
        release.set()
        status, _, body = read_response(busy)
        assert (status, body) == ("HTTP/1.1 200 OK", b"ok")
    finally:
        release.set()
        busy.close()
        for sock in crowd:
            sock.close()


def test_a_request_learns_that_its_client_left(tiny):
    seen = []

    def app(environ, start_response):
        left = environ["waitress.client_disconnected"]
        with contextlib.suppress(WaitTimeout):  # what it learnt in 5 s is asserted below
            wait_for(left, timeout=5, interval=0.05)
        seen.append(left())
        start_response("200 OK", [("Content-Length", "0")])
        return [b""]

    server = tiny(app, channel_request_lookahead=1)
    with connect(server.effective_port) as sock:
        sock.sendall(b"GET /search HTTP/1.1\r\nHost: test\r\n\r\n")
        time.sleep(0.2)
    wait_for(lambda: seen, timeout=5, interval=0.05, message="the request did not end")
    assert seen == [True]


# -- waitress' own errors ---------------------------------------------------------------------

def test_headers_over_64_kib_are_431_json(server):
    pad = b"".join(b"X-Pad-%04d: %s\r\n" % (i, b"a" * 1000) for i in range(70))
    request = b"GET /api/version/ HTTP/1.1\r\nHost: test\r\n" + pad + b"\r\n"
    response = exchange(server.port, request)
    assert_json_error(response, "HTTP/1.0 431 Request Header Fields Too Large",
                      error(431, "too_large", "The request headers are larger than 64 KiB."))


def test_a_malformed_request_line_is_400_json(server):
    response = exchange(server.port, b"G@T /api/version/ HTTP/1.1\r\nHost: test\r\n\r\n")
    assert_json_error(response, "HTTP/1.0 400 Bad Request",  # waitress read no version: 1.0
                      error(400, "parse_error",
                            "The request could not be understood: Start line is invalid."))


@pytest.mark.config(max_upload_mb=1)
def test_a_chunked_body_over_the_limit_is_413_json(server, config):
    size = config.max_upload_bytes + 1024 * 1024  # waitress' limit: the app's plus 1 MiB
    head = (b"PUT /api/documents/x/upload/big.pdf HTTP/1.1\r\nHost: test\r\n"
            b"Transfer-Encoding: chunked\r\nContent-Disposition: attachment; filename=big.pdf\r\n"
            b"\r\n%x\r\n" % size)
    response = exchange(server.port, head + b"0" * size)
    assert_json_error(response, "HTTP/1.1 413 Request Entity Too Large",
                      error(413, "too_large", "The request body is larger than the maximum of "
                                              "1 MiB."))


def test_content_length_beside_chunked_is_refused_and_the_connection_closed(server, config):
    """RFC 9112 §6.1: such a request may be read two ways (request smuggling through a proxy)."""
    before = snapshot(config)
    body = b'{"data": {"type": "folders", "attributes": {"title": "smuggled"}}}'
    with connect(server.port) as sock:
        sock.sendall(b"POST /api/nodes/ HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\n"
                     b"Transfer-Encoding: chunked\r\nContent-Type: application/vnd.api+json\r\n"
                     b"\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))
        response = read_response(sock)
        assert closed_by_server(sock, 5)
    assert_json_error(response, "HTTP/1.1 400 Bad Request", error(
        400, "parse_error", "The request could not be understood: Content-Length and "
                            "Transfer-Encoding must not be sent together."))
    assert snapshot(config) == before


@pytest.mark.parametrize("size_line, status, detail", [
    (b"zz", "HTTP/1.1 400 Bad Request", "The request could not be understood: Invalid chunk "
                                        "size."),
    (b"0" * 2000, "HTTP/1.1 400 Bad Request", "The request could not be understood: Chunk "
                                              "size line longer than 1024 bytes."),
    (b"9" * 20, "HTTP/1.1 413 Request Entity Too Large", "The request body is larger than the "
                                                         "maximum of 1 MiB."),
])
@pytest.mark.config(max_upload_mb=1)
def test_a_malformed_or_huge_chunk_size_is_answered_at_once(server, size_line, status, detail):
    """A chunk size of 20 nines (valid hex) got no answer for 60 s: waitress waited for it."""
    with connect(server.port, timeout=10) as sock:
        sock.sendall(b"PUT /api/document/upload/x.pdf HTTP/1.1\r\nHost: test\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n" + size_line
                     + (b"" if len(size_line) > 1024 else b"\r\n"))
        started = time.monotonic()
        response = read_response(sock)
        assert time.monotonic() - started < 5
        assert closed_by_server(sock, 5)
    assert_json_error(response, status, error(int(status.split()[1]),
                                              "parse_error" if "400" in status else "too_large",
                                              detail))


def chunked_folder(token: str, parent: str, title: str, framing: bytes) -> bytes:
    """A chunked POST /api/nodes/ making folder `title` in `parent`, its body framed by
    `framing % (size, body)` (the size in hex)."""
    body = json.dumps({"data": {"type": "folders", "attributes": {"title": title},
                                "relationships": {"parent": {"data": {
                                    "type": "folders", "id": parent}}}}}).encode()
    return (b"POST /api/nodes/ HTTP/1.1\r\nHost: test\r\nAuthorization: Token %s\r\n"
            b"Content-Type: application/vnd.api+json\r\nTransfer-Encoding: chunked\r\n\r\n"
            % token.encode() + framing % (b"%x" % len(body), body))


def titles(client, folder_id: str) -> list[str]:
    children = client.get(f"/api/nodes/{folder_id}/").json()["data"]
    return sorted(child["attributes"]["title"] for child in children)


def assert_refused_at_once(server, config, request: bytes, detail: str) -> None:
    """`request` gets a 400 envelope with `detail` while the client waits for it (within the
    socket's 10 s, far below channel_timeout), the connection is closed, nothing changed, and
    the server serves the next client."""
    before = snapshot(config)
    with connect(server.port, timeout=10) as sock:
        sock.sendall(request)
        response = read_response(sock)
        assert closed_by_server(sock, 10)
    assert_json_error(response, "HTTP/1.1 400 Bad Request", error(
        400, "parse_error", f"The request could not be understood: {detail}."))
    assert snapshot(config) == before
    status, _, body = exchange(server.port, GET_VERSION)
    assert (status, json.loads(body)) == ("HTTP/1.1 200 OK", VERSION)


def test_a_chunk_size_line_over_1_kib_is_refused_even_when_it_arrives_whole(server, config,
                                                                               alice):
    """A 5,000-byte extension arriving in one read was served: waitress' line bound only held
    for a line still arriving."""
    parent = make_folder(alice, "chunked", alice.home_id)
    longest = b"%s;x=" + b"e" * (MAX_CHUNK_LINE - 5)  # a 2-digit size: 1,024 bytes in all
    request = chunked_folder(alice.token, parent, "edge", longest + b"\r\n%s\r\n0\r\n\r\n")
    status, _, body = exchange(server.port, request)
    assert status == "HTTP/1.1 201 Created", body
    assert titles(alice, parent) == ["edge"]
    for extension in (b"e" * (MAX_CHUNK_LINE - 4), b"e" * 5000):  # 1,025 bytes; 5,000 bytes
        assert_refused_at_once(server, config, chunked_folder(
            alice.token, parent, "long", b"%s;x=" + extension + b"\r\n%s\r\n0\r\n\r\n"),
            "Chunk size line longer than 1024 bytes")
    assert titles(alice, parent) == ["edge"]


@pytest.mark.parametrize("framing", [
    b"%s\n%s\n0\n\n",              # every line with a bare LF
    b"%s\r\n%s\n",                  # the chunk's end, and nothing after it yet
    b"%s\r\n%s\r\n0\n",             # the last size line
    b"%s\r\n%s\r\n0\r\n\n",         # the trailer's end
    b"%s\r\n%s\r\n0\r\nX-T: 1\n\r\n",  # a trailer field
], ids=["all", "chunk-end", "last-size", "trailer-end", "trailer-field"])
def test_bare_lf_line_ends_in_a_chunked_body_are_400_at_once(server, config, alice, framing):
    """A body chunked with bare LFs got no answer; the connection closed after 62 s."""
    parent = make_folder(alice, "chunked", alice.home_id)
    assert_refused_at_once(server, config, chunked_folder(alice.token, parent, "lf",
                                                          framing),
                           "Chunked body line not ended by CRLF")
    assert titles(alice, parent) == []


def test_a_trailer_over_the_header_limit_is_refused(server, config, alice):
    """waitress kept a chunked body's trailer in memory without bound."""
    parent = make_folder(alice, "chunked", alice.home_id)
    trailer = b"".join(b"X-Pad-%04d: %s\r\n" % (i, b"a" * 1000) for i in range(70))
    assert_refused_at_once(server, config, chunked_folder(
        alice.token, parent, "pad", b"%s\r\n%s\r\n0\r\n" + trailer + b"\r\n"),
        "Chunked trailer longer than 65536 bytes")
    request = chunked_folder(alice.token, parent, "trailed",
                             b"%s;a=1;b=\"q\"\r\n%s\r\n0\r\nX-Checksum: 1\r\n\r\n")
    status, _, body = exchange(server.port, request)
    assert status == "HTTP/1.1 201 Created", body
    assert titles(alice, parent) == ["trailed"]


def test_many_small_chunks_in_one_read_are_served(server, alice):
    """The body in one-byte chunks, all sent at once: each framing line checked in turn."""
    parent = make_folder(alice, "chunked", alice.home_id)
    body = json.dumps({"data": {"type": "folders", "attributes": {"title": "bytes"},
                                "relationships": {"parent": {"data": {
                                    "type": "folders", "id": parent}}}}}).encode()
    chunks = b"".join(b"1\r\n%c\r\n" % byte for byte in body)
    request = chunked_folder(alice.token, parent, "x", b"%.0s%.0s") + chunks + b"0\r\n\r\n"
    status, _, answer = exchange(server.port, request)
    assert status == "HTTP/1.1 201 Created", answer
    assert titles(alice, parent) == ["bytes"]


# -- nosniff everywhere -----------------------------------------------------------------------

def test_nosniff_on_json_errors_downloads_and_the_page(server, anon, alice):
    version = anon.get("/api/version/")
    assert (version.status_code, version.json()) == (200, VERSION)
    missing = anon.get("/api/no-such-thing/")
    assert (missing.status_code, missing.json()) == (
        404, error(404, "not_found", "Not found: there is no endpoint at this address."))
    document_id = new_document(alice)
    assert upload(alice, document_id, "notes.txt", b"plain words").status_code == 201
    download = alice.get(f"/api/documents/{document_id}/download/")
    assert (download.status_code, download.content) == (200, b"plain words")
    page = anon.get("/")
    assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/html")
    for response in (version, missing, download, page):
        assert response.headers["X-Content-Type-Options"] == "nosniff", response.url
    # once, not twice, where the application set it itself
    assert page.raw.headers.getlist("X-Content-Type-Options") == ["nosniff"]


@pytest.mark.config(cors_origins=("https://app.example.org",))
def test_nosniff_on_cors_preflights(server):
    response = Client(server.url).request(
        "OPTIONS", "/api/nodes/", headers={"Origin": "https://app.example.org",
                                           "Access-Control-Request-Method": "POST"})
    assert response.status_code == 204
    assert response.headers["Access-Control-Allow-Origin"] == "https://app.example.org"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
