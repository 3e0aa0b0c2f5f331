"""One HTTP POST to a user's URL (a webhook's delivery) under the outbound rule
(dms.files.outbound.policy): the standard library's http.client on a socket connected by
Policy.connect, so the checked address is the one used; TLS verifies the certificate for the
URL's host name. Redirects are never followed (a 3xx is an answer like any other that is not
2xx). The whole exchange, from the lookup to the status line, ends after `timeout` seconds: a
watchdog shuts the socket down then, which ends a read that a server trickling bytes would
otherwise keep alive. Of the answer only its status is used; at most ANSWER_BYTES of its body are
read. The URL is written in ASCII first (dms.files.outbound.urls), as one stored before dms did that
may not be.

Failures are sentences for `last_error`, whatever the URL, the network or the receiver did.
Before a status line arrives, every failure to reach the receiver reads the same (refused,
silent, reset, not HTTP): which one it was would tell a user which ports of which hosts are
open."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from dms.files.outbound.policy import Policy, Refused, ResolveTimeout, normal_host
from dms.files.outbound.urls import BadUrl, ascii_url

ANSWER_BYTES = 64 * 1024
DEFAULT_PORTS = {"http": 80, "https": 443}
UNSENDABLE = ("The URL cannot be sent in an HTTP request; set it again, and dms says what is "
              "wrong with it.")


@dataclass(frozen=True)
class Answer:
    """What became of one POST: the status (None without one), and a sentence unless 2xx."""
    status: int | None
    error: str | None
    seconds: float

    @property
    def ok(self) -> bool:
        return self.error is None


def tls_context():
    """Certificate-checking TLS, imported only by a process that posts to an https address:
    the ssl module and OpenSSL's TLS state cost an idle server about 1 MiB."""
    import ssl

    return ssl.create_default_context()


def post(policy: Policy, url: str, body: bytes, headers: dict[str, str],
         timeout: float) -> Answer:
    """POST `body` to `url` with `headers`; never raises for what the URL, the network or the
    receiver is or does: each failure is an Answer with its sentence."""
    started = time.monotonic()

    def answer(status: int | None, error: str | None) -> Answer:
        return Answer(status, error, time.monotonic() - started)

    try:
        # A URL stored before dms wrote URLs in ASCII is written so here.
        parts = urlsplit(ascii_url(url))
        host, port = parts.hostname or "", parts.port or DEFAULT_PORTS.get(parts.scheme, 80)
        connection = http.client.HTTPConnection(host, port, timeout=timeout)
    except BadUrl as error:
        return answer(None, f"The URL cannot be used: {error}.")
    except (ValueError, http.client.HTTPException):
        return answer(None, UNSENDABLE)
    where = f"{normal_host(host)}:{port}"
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    tls = tls_context() if parts.scheme == "https" else None

    def checked_socket(address, wait, source=None) -> socket.socket:
        """The one place the socket is made: to an address the policy checked, within the time
        left; TLS here too (http.client's HTTPSConnection is missing in `dms serve`, which
        imports http.client without ssl: dms.cli), verifying the certificate for `host`."""
        sock = policy.connect(host, port, max(0.001, timeout - (time.monotonic() - started)))
        if tls is None:
            return sock
        try:
            return tls.wrap_socket(sock, server_hostname=host)
        except BaseException:
            sock.close()
            raise

    connection._create_connection = checked_socket
    def expire() -> None:
        sock = connection.sock
        if sock is not None:
            try:
                socket.socket.shutdown(sock, socket.SHUT_RDWR)
            except OSError:
                pass

    watchdog = threading.Timer(timeout, expire)
    watchdog.daemon = True
    watchdog.start()
    try:
        # Host as the URL names it: HTTPConnection alone would add :443 to an https one.
        shown = f"[{host}]" if ":" in host else host
        if port != DEFAULT_PORTS.get(parts.scheme):
            shown += f":{port}"
        connection.request("POST", target, body=body, headers={"Host": shown, **headers})
        response = connection.getresponse()
        status = response.status
        try:
            response.read(ANSWER_BYTES)
        except (OSError, http.client.HTTPException):
            pass  # the status is what counts
    except Refused as refused:
        return answer(None, str(refused))
    except (socket.gaierror, ResolveTimeout):
        return answer(None, f"The host name {normal_host(host)} could not be resolved.")
    except (OSError, http.client.HTTPException) as error:
        verify_message = getattr(error, "verify_message", None)  # ssl.SSLCertVerificationError
        if verify_message is not None:
            return answer(None, f"The certificate of {normal_host(host)} could not be verified: "
                                f"{str(verify_message).rstrip('.')}.")
        return answer(None, f"No HTTP answer from {where} within {timeout:g} s: the connection "
                            f"was refused, cut or not answered, or what answered was not an "
                            f"HTTP server.")
    except ValueError:  # a UnicodeError too: what http.client cannot write in a request
        return answer(None, UNSENDABLE)
    finally:
        watchdog.cancel()
        connection.close()
    if 200 <= status < 300:
        return answer(status, None)
    if 300 <= status < 400:
        return answer(status, f"The receiver answered {status}, a redirect (dms does not follow "
                              f"redirects: give the webhook its final URL).")
    return answer(status, f"The receiver answered {status}.")
