"""Where dms may connect for a user, and connecting exactly there (api.md, "Outbound connections",
DMS_OUTBOUND_ALLOW).

dms connects out for its users: webhooks' URLs (dms.notify) and mail accounts' IMAP servers
(dms.intake). Without a rule, a user could make the server reach what only the server can reach
(its own loopback services, the office network, a cloud's metadata service that hands out
credentials) and read the answers or the failures. So, for a user who is not a superuser:

- An address is refused when it is not a public one: loopback, private (RFC 1918, IPv6 ULA),
  link-local, shared (CGNAT, 100.64.0.0/10), multicast, unspecified, reserved or documentation
  ranges, IPv6 site-local, the cloud metadata services (METADATA), and IPv6 addresses that carry
  such an IPv4 address (mapped, IPv4-compatible, translated, 6to4, Teredo, NAT64) — unless the
  administrator allows it: `DMS_OUTBOUND_ALLOW` lists host names (the name as the user wrote it,
  any address it resolves to), addresses and networks (CIDR).
- The check is made on the addresses the name resolves to at connection time, and the connection
  goes to exactly such a checked address (no second lookup a rebinding DNS server could answer
  differently). TLS still verifies the certificate for the host name and sends it as SNI: the
  callers wrap the socket with `server_hostname=host`.
- Name resolution has a time limit (RESOLVE_SECONDS): getaddrinfo runs in one of a few daemon
  threads, and a caller stops waiting for it.

A superuser is exempt (the administrator may point a webhook at a service on the same machine).
"""

from __future__ import annotations

import ipaddress
import queue
import socket
import threading
import time
from dataclasses import dataclass

from dms.config import Address, Allowed, normal_host, plain_address

RESOLVE_SECONDS = 5.0  # a name that takes longer to resolve is taken as not found
RESOLVER_THREADS = 4  # lookups at once; more callers wait their turn (within their time limit)
MAX_ADDRESSES = 8  # addresses of one name tried, in the resolver's order
# Cloud metadata services, refused even where a rule would let their range through: AWS, GCP and
# others (169.254.169.254, link-local anyway), AWS over IPv6 (a ULA), Azure's wire server (a
# public address) and Alibaba's (CGNAT).
METADATA = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254", "fd00:ec2::254", "168.63.129.16", "100.100.100.200"))
# IPv6 addresses whose last 32 bits are an IPv4 address that a host, a tunnel or a translator
# on the way may take them to: IPv4-compatible (::a.b.c.d, deprecated; :: and ::1 are refused
# already), IPv4-translated (SIIT), NAT64's well-known prefix and its local-use one. (Mapped,
# 6to4 and Teredo have ipaddress' own properties.)
CARRY_IPV4 = tuple(ipaddress.ip_network(n) for n in (
    "::/96", "::ffff:0:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48"))


class Refused(Exception):
    """dms does not connect there for this user; the message is a sentence for people."""


class ResolveTimeout(OSError):
    """The name did not resolve within the time limit."""


def literal_address(host: str) -> Address | None:
    """The address `host` is written as (`127.0.0.1`, `[::1]`), or None for a name."""
    try:
        return plain_address(ipaddress.ip_address(normal_host(host)))
    except ValueError:
        return None


def is_internal(address: Address) -> bool:
    """Not a public unicast address, or one that leads to a non-public one (see the module
    docstring)."""
    address = plain_address(address)
    if address in METADATA or address.is_multicast or not address.is_global:
        return True
    if isinstance(address, ipaddress.IPv6Address):
        if address.is_site_local:
            return True
        carried = [address.sixtofour, *(address.teredo or ())]
        if any(address in network for network in CARRY_IPV4):
            carried.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
        return any(inner is not None and is_internal(inner) for inner in carried)
    return False


def refusal(host: str, address: Address) -> str:
    same = literal_address(host) == plain_address(address)
    shown = "" if same else f" resolves to {address}, which"
    return (f"{normal_host(host)}{shown} is an internal address (loopback, private, link-local or "
            f"a cloud's metadata service): dms connects there only for a superuser or when the "
            f"administrator allows it (DMS_OUTBOUND_ALLOW).")


@dataclass(frozen=True)
class Policy:
    """The rule for one user: `exempt` for a superuser."""
    allowed: Allowed = Allowed()
    exempt: bool = False

    def for_user(self, exempt: bool) -> Policy:
        return Policy(self.allowed, exempt)

    def permits(self, host: str, address: Address) -> bool:
        return self.exempt or not is_internal(address) or self.allowed.admits(host, address)

    def check_literal(self, host: str) -> None:
        """Refused when `host` is written as an address this user may not reach (names are
        checked when they are resolved, at each connection)."""
        address = literal_address(host)
        if address is not None and not self.permits(host, address):
            raise Refused(refusal(host, address))

    def resolve(self, host: str, port: int, timeout: float = RESOLVE_SECONDS) -> list[tuple]:
        """The (family, sockaddr) this user may connect to for `host`, in the resolver's order.
        Raises Refused when it resolves only to refused addresses, socket.gaierror when it does
        not resolve, ResolveTimeout past `timeout`."""
        results = lookup(normal_host(host), port, min(timeout, RESOLVE_SECONDS))
        permitted, refused = [], None
        for family, _, _, _, sockaddr in results:
            if family not in (socket.AF_INET, socket.AF_INET6):
                continue
            address = ipaddress.ip_address(sockaddr[0].split("%", 1)[0])
            if self.permits(host, address):
                if (family, sockaddr) not in permitted:
                    permitted.append((family, sockaddr))
            elif refused is None:
                refused = address
        if not permitted:
            if refused is not None:
                raise Refused(refusal(host, refused))
            raise socket.gaierror(socket.EAI_NONAME, "no address")
        return permitted[:MAX_ADDRESSES]

    def connect(self, host: str, port: int, timeout: float) -> socket.socket:
        """A TCP connection to a checked address of `host` (all within `timeout` seconds, the
        lookup included); the socket's timeout is then `timeout` for each operation."""
        deadline = time.monotonic() + timeout
        error: OSError = TimeoutError("timed out")
        for family, sockaddr in self.resolve(host, port, timeout):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            sock = socket.socket(family, socket.SOCK_STREAM)
            try:
                sock.settimeout(remaining)
                sock.connect(sockaddr)
                sock.settimeout(timeout)
                return sock
            except OSError as failure:
                sock.close()
                error = failure
        raise error


class _Resolver:
    """getaddrinfo in a few daemon threads, so that a caller can stop waiting (the lookup itself
    cannot be interrupted). A lookup whose caller gave up before it started is skipped. Every
    failure of a lookup goes to its caller and never ends a thread (with all of them ended, no
    name would resolve again)."""

    def __init__(self, threads: int):
        self._jobs: queue.Queue = queue.Queue()
        self._threads = threads
        self._started = 0
        self._lock = threading.Lock()

    def lookup(self, host: str, port: int, timeout: float) -> list:
        job = {"done": threading.Event(), "abandoned": False}
        with self._lock:
            if self._started < self._threads:
                self._started += 1
                threading.Thread(target=self._run, name="dms-resolver", daemon=True).start()
        self._jobs.put((host, port, job))
        if not job["done"].wait(timeout):
            job["abandoned"] = True
            raise ResolveTimeout(f"{host} did not resolve within {timeout:g} s")
        if "error" in job:
            raise job["error"]
        return job["result"]

    def _run(self) -> None:
        while True:
            host, port, job = self._jobs.get()
            if job["abandoned"]:
                continue
            try:
                job["result"] = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
            except OSError as error:
                job["error"] = error
            except Exception:  # the idna codec's UnicodeError (`a..b`): no such name
                job["error"] = socket.gaierror(socket.EAI_NONAME, "not a host name")
            job["done"].set()


_resolver = _Resolver(RESOLVER_THREADS)


def lookup(host: str, port: int, timeout: float) -> list:
    """socket.getaddrinfo(host, port) for TCP within `timeout` seconds; an address is not looked
    up."""
    if literal_address(host) is not None:
        return socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM, 0, socket.AI_NUMERICHOST)
    return _resolver.lookup(host, port, timeout)
