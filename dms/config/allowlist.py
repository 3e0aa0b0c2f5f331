"""DMS_OUTBOUND_ALLOW: the allow-list of the outbound rule (dms.files.outbound), parsed with the
configuration (dms.config) so that a wrong entry stops the start with the setting's name."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
HOST_NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-._")


def normal_host(host: str) -> str:
    """A host as rules compare it: lower case, no trailing dot, no brackets around IPv6."""
    return host.strip().strip("[]").rstrip(".").lower()


def plain_address(address: Address) -> Address:
    """An IPv4-mapped IPv6 address (::ffff:10.0.0.1) as the IPv4 address it is."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


@dataclass(frozen=True)
class Allowed:
    """DMS_OUTBOUND_ALLOW, parsed: host names and networks (an address is a network of one)."""
    names: frozenset[str] = frozenset()
    networks: tuple[Network, ...] = ()

    def admits(self, host: str, address: Address) -> bool:
        address = plain_address(address)
        return normal_host(host) in self.names or any(
            address.version == network.version and address in network
            for network in self.networks)


def parse_allowed(entries: Iterable[str]) -> Allowed:
    """The allow-list from its entries; ValueError naming the first entry that is none of a host
    name, an address or a network."""
    names, networks = set(), []
    for entry in entries:
        text = normal_host(entry)
        try:
            networks.append(ipaddress.ip_network(text, strict=False))
            continue
        except ValueError:
            pass
        if not text or len(text) > 253 or not set(text) <= HOST_NAME_CHARACTERS \
                or text.startswith(("-", ".")) or ".." in text:
            raise ValueError(f"{entry!r} is neither a host name, an address nor a network "
                             f"such as 10.0.0.0/8")
        names.add(text)
    return Allowed(frozenset(names), tuple(networks))
