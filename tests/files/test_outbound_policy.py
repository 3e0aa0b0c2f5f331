"""The outbound rule (dms.files.outbound, api.md, "Outbound connections") on its own: which
addresses are internal, the allow-list, a name checked on what it resolves to and connected to
exactly that address (a second answer of the resolver is never asked for), name resolution with a
time limit, and a POST over TLS that checks the certificate for the URL's host name while connecting
to the checked address. The resolver is the system's (socket.getaddrinfo), replaced in two tests by
one that answers as a rebinding or a dead DNS server would."""

from __future__ import annotations

import http.client
import http.server
import ipaddress
import socket
import ssl
import subprocess
import threading
import time

import pytest

from dms.config import Config, ConfigError
from dms.files.outbound import Policy, Refused, parse_allowed
from dms.files.outbound.http import post
from dms.files.outbound.policy import ResolveTimeout, is_internal

# Sockets (pytest-socket): names resolved, a TLS server on loopback.
pytestmark = [pytest.mark.sqlite_only, pytest.mark.enable_socket]  # no database: once is enough

INTERNAL = ["127.0.0.1", "127.1.2.3", "::1", "10.0.0.1", "172.16.5.4", "192.168.0.1",
            "169.254.169.254", "169.254.1.1", "fd00:ec2::254", "fc00::1", "fe80::1", "100.64.0.1",
            "100.100.100.200", "168.63.129.16", "0.0.0.0", "::", "224.0.0.1", "239.1.2.3",
            "ff02::1", "255.255.255.255", "192.0.2.1", "198.51.100.1", "fec0::1",
            "::ffff:10.0.0.1", "64:ff9b::a00:1", "2002:a00:1::1", "240.0.0.1",
            # IPv4-compatible (::127.0.0.1), IPv4-translated, NAT64's local-use prefix
            "::127.0.0.1", "::a00:1", "::2", "::ffff:0:7f00:1", "64:ff9b:1::a9fe:a9fe"]
PUBLIC = ["8.8.8.8", "1.1.1.1", "2001:4860:4860::8888", "64:ff9b::808:808", "2002:808:808::1",
          "::808:808", "::ffff:0:808:808", "64:ff9b:1::808:808"]


def test_internal_and_public_addresses():
    assert [a for a in INTERNAL if not is_internal(ipaddress.ip_address(a))] == []
    assert [a for a in PUBLIC if is_internal(ipaddress.ip_address(a))] == []


def test_the_allow_list_takes_names_addresses_and_networks():
    allowed = parse_allowed(["Hooks.Example.ORG.", "127.0.0.1", "10.0.0.0/8", "[fd00::1]"])
    policy = Policy(allowed)
    for host, address in (("hooks.example.org", "10.9.9.9"), ("x", "10.1.1.1"),
                          ("x", "127.0.0.1"), ("x", "::ffff:127.0.0.1"), ("x", "fd00::1")):
        assert policy.permits(host, ipaddress.ip_address(address)), (host, address)
    for host, address in (("other.example.org", "192.168.1.1"), ("x", "127.0.0.2")):
        assert not policy.permits(host, ipaddress.ip_address(address)), (host, address)
    assert Policy(allowed, exempt=True).permits("x", ipaddress.ip_address("127.0.0.2"))
    for bad in ("exa mple.org", "-x.org", "a..b", "10.0.0.0/33"):
        with pytest.raises(ValueError):
            parse_allowed([bad])
    assert Config.load({}, {"DMS_OUTBOUND_ALLOW": "hooks.lan, 10.0.0.0/8"}).outbound_allow == (
        "hooks.lan", "10.0.0.0/8")
    with pytest.raises(ConfigError) as refused:
        Config.load({}, {"DMS_OUTBOUND_ALLOW": "10.0.0.0/8,not_a_host!"})
    assert str(refused.value) == ("DMS_OUTBOUND_ALLOW: 'not_a_host!' is neither a host name, an "
                                  "address nor a network such as 10.0.0.0/8.")


@pytest.fixture
def listener():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    yield sock
    sock.close()


def test_a_name_is_checked_on_what_it_resolves_to(listener):
    port = listener.getsockname()[1]
    with pytest.raises(Refused) as refused:
        Policy().connect("localhost", port, 5)
    assert str(refused.value).startswith("localhost resolves to 127.0.0.1, which is an internal "
                                         "address")
    for policy in (Policy(exempt=True), Policy(parse_allowed(["localhost"])),
                   Policy(parse_allowed(["127.0.0.0/8"]))):
        policy.connect("localhost", port, 5).close()
    with pytest.raises(socket.gaierror):
        Policy().connect("no-such-host.invalid", port, 5)


def test_the_connection_goes_to_the_address_that_was_checked(monkeypatch):
    """A resolver that answers an allowed address first and loopback after (DNS rebinding): the
    one lookup's answer is where the connection goes."""
    first, second = socket.socket(), socket.socket()
    first.bind(("127.0.0.2", 0))
    port = first.getsockname()[1]
    second.bind(("127.0.0.1", port))
    first.listen(1)
    second.listen(1)
    answers = iter(["127.0.0.2", "127.0.0.1", "127.0.0.1"])
    real = socket.getaddrinfo
    asked = []

    def rebinding(host, *args, **kwargs):
        if host != "rebind.test":
            return real(host, *args, **kwargs)
        asked.append(host)
        return real(next(answers), *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    try:
        Policy(parse_allowed(["127.0.0.2"])).connect("rebind.test", port, 5).close()
        first.settimeout(5)
        first.accept()[0].close()
        assert asked == ["rebind.test"]
    finally:
        first.close()
        second.close()


def test_a_name_that_does_not_resolve_in_time_is_given_up(monkeypatch):
    real = socket.getaddrinfo

    def silent(host, *args, **kwargs):
        if host == "slow.test":
            time.sleep(3)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", silent)
    started = time.monotonic()
    with pytest.raises(ResolveTimeout):
        Policy(exempt=True).connect("slow.test", 80, 0.5)
    assert time.monotonic() - started < 2.5  # it did not wait for the resolver


@pytest.fixture
def tls_receiver(tmp_path):
    """An HTTPS server on 127.0.0.1 whose self-signed certificate names only `localhost`."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj",
                    "/CN=localhost", "-addext", "subjectAltName=DNS:localhost", "-keyout",
                    str(key), "-out", str(cert)], check=True, capture_output=True, timeout=60)
    seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            seen.append((self.headers["Host"], self.rfile.read(int(self.headers[
                "Content-Length"]))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1], cert, seen
    server.shutdown()
    server.server_close()


def test_tls_checks_the_certificate_for_the_host_name(tls_receiver, monkeypatch):
    port, cert, seen = tls_receiver
    # As in `dms serve`, whose http.client was imported without ssl (dms.cli).
    monkeypatch.delattr(http.client, "HTTPSConnection")
    policy = Policy(exempt=True)
    untrusted = post(policy, f"https://localhost:{port}/hook", b"{}", {}, 5)
    assert (untrusted.status, untrusted.error) == (
        None, "The certificate of localhost could not be verified: self-signed certificate.")
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # now trusted
    answer = post(policy, f"https://localhost:{port}/hook", b'{"a":1}', {}, 5)
    assert (answer.status, answer.error) == (204, None)
    assert seen == [(f"localhost:{port}", b'{"a":1}')]  # Host as the URL names it
    wrong_name = post(policy, f"https://127.0.0.1:{port}/hook", b"{}", {}, 5)
    assert wrong_name.error == ("The certificate of 127.0.0.1 could not be verified: IP address "
                                "mismatch, certificate is not valid for '127.0.0.1'.")
