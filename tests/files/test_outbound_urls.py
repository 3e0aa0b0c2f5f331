"""A user's URL in the ASCII form dms sends (dms.files.outbound.urls): host names in other scripts
in their IDNA form (so the outbound rule sees the address `127。0。0。1` is), the rest
percent-encoded as UTF-8; what has no such form refused. And the POST itself never raises for a URL:
one stored before (not ASCII) is sent in ASCII to a real server on loopback, one that cannot be sent
is a failure with its sentence; a host name the system's resolver cannot even encode does not end
the resolver's threads."""

from __future__ import annotations

import http.server
import socket
import threading

import pytest

from dms.files.outbound import BadUrl, Policy, ascii_url
from dms.files.outbound.http import post
from dms.files.outbound.policy import RESOLVER_THREADS

# Sockets (pytest-socket): names resolved, a receiver on loopback.
pytestmark = [pytest.mark.sqlite_only, pytest.mark.enable_socket]  # no database: once is enough

LONG = ".".join(["a" * 63] * 4)  # 255 characters: DNS carries 253
WRITTEN = [
    ("https://example.org/dms?key=1", "https://example.org/dms?key=1"),  # ASCII: as it is
    ("http://exa_mple.lan:8080/a%20b", "http://exa_mple.lan:8080/a%20b"),
    ("http://[::1]:8080/hook", "http://[::1]:8080/hook"),
    ("http://127。0。0。1:8080/hook", "http://127.0.0.1:8080/hook"),  # ideographic full stops
    ("http://１２７.０.０.１/hook", "http://127.0.0.1/hook"),  # full-width digits
    ("https://Bücher.Example/dokumente/über?name=Bücher&x=%C3%BC#teil-ü",
     "https://xn--bcher-kva.example/dokumente/%C3%BCber?name=B%C3%BCcher&x=%C3%BC"
     "#teil-%C3%BC"),
    ("https://example.org/%E2%82%AC/€", "https://example.org/%E2%82%AC/%E2%82%AC"),
    (f"http://{LONG[:-2]}./", f"http://{LONG[:-2]}./"),  # 253 and the root's dot
]
REFUSED = [
    ("http://☃.example/", "the host name ☃.example is not a valid domain name (IDNA, UTS #46)"),
    ("http://a..b/", "the host name a..b is not a valid domain name (empty labels, or longer "
                     "than DNS allows)"),
    (f"http://{'a' * 64}.org/", f"the host name {'a' * 64}.org is not a valid domain name "
                                "(empty labels, or longer than DNS allows)"),
    (f"http://{LONG}/", f"the host name {LONG} is not a valid domain name (empty labels, or "
                        "longer than DNS allows)"),
]


def test_urls_are_written_in_ascii():
    assert [ascii_url(url) for url, _ in WRITTEN] == [written for _, written in WRITTEN]
    for url, message in REFUSED:
        with pytest.raises(BadUrl) as refused:
            ascii_url(url)
        assert str(refused.value) == message


@pytest.fixture
def receiver():
    """An HTTP server on 127.0.0.1 recording each POST's path and Host."""
    seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            seen.append((self.path, self.headers["Host"]))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1], seen
    server.shutdown()
    server.server_close()


def test_a_url_that_is_not_ascii_is_sent_in_ascii_or_fails_with_a_sentence(receiver):
    port, seen = receiver
    policy = Policy(exempt=True)
    answer = post(policy, f"http://127。0。0。1:{port}/dokumente/über?name=Bücher", b"{}", {}, 5)
    assert (answer.status, answer.error) == (204, None)
    assert seen == [("/dokumente/%C3%BCber?name=B%C3%BCcher", f"127.0.0.1:{port}")]
    for url, message in REFUSED:
        failed = post(policy, url, b"{}", {}, 5)
        assert (failed.status, failed.error) == (None, f"The URL cannot be used: {message}.")
    for url in ("http://[::1/hook", "http://a\uff03b/"):  # urlsplit refuses them
        failed = post(policy, url, b"{}", {}, 5)
        assert (failed.status, failed.error) == (
            None, "The URL cannot be sent in an HTTP request; set it again, and dms says what is "
                  "wrong with it.")
    # An internal address in other digits is still one.
    refused = post(Policy(), f"http://１２７.０.０.１:{port}/hook", b"{}", {}, 5)
    assert refused.error.startswith("127.0.0.1 is an internal address")
    assert len(seen) == 1


def test_names_the_resolver_cannot_encode_leave_its_threads_alive(receiver):
    """The system's getaddrinfo raises UnicodeError, not an OSError, for an empty or overlong
    label; each such lookup is a name not found, and the threads live on."""
    port, seen = receiver
    policy = Policy(exempt=True)
    for host in ["a..b", "a" * 64 + ".org"] * RESOLVER_THREADS:
        with pytest.raises(socket.gaierror):
            policy.connect(host, port, 5)
    policy.connect("localhost", port, 5).close()
