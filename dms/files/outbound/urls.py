"""A user's URL as dms sends it: in ASCII, as HTTP needs it (docs/api.md, "Webhooks").

- A host name written in another script (`bücher.example`, or `127。0。0。1` with ideographic
  full stops) is written in its IDNA form, with UTS #46's mapping as browsers do
  (`xn--bcher-kva.example`, `127.0.0.1`): so the outbound rule sees the address it really is.
  A host name that has no such form, or whose labels DNS cannot carry (empty, over 63
  characters, over 253 in all), is refused.
- Any other character that is not ASCII (a path `/dokumente/über`, a query `?name=Bücher`) is
  percent-encoded as UTF-8; the escapes already there are kept as they are.

An ASCII URL with a valid host is returned unchanged. The webhooks' check (dms.domain.webhooks)
stores this form; the client (dms.files.outbound.http) applies it again to a URL stored before.
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, quote, urlsplit

MAX_HOST_LENGTH = 253  # DNS: a name of at most 253 characters in labels of at most 63
MAX_LABEL_LENGTH = 63
_NOT_ASCII = re.compile(r"[^\x00-\x7f]+")


class BadUrl(ValueError):
    """The URL has no ASCII form dms can send; the message is a phrase (`the host name ...`)."""


def _escaped(text: str) -> str:
    return _NOT_ASCII.sub(lambda match: quote(match.group(), safe=""), text)


def ascii_host(host: str) -> str:
    """`host` (no port, IPv6 literals in brackets) as DNS and HTTP carry it; BadUrl if none."""
    if host.startswith("["):
        return host  # an IPv6 literal: urlsplit has checked it is one
    name = host
    if not host.isascii():
        # Imported only for such a host: idna's tables cost a process about 2 MiB.
        import idna

        try:
            name = idna.encode(host, uts46=True).decode("ascii")
        except (UnicodeError, ValueError):  # idna.IDNAError is a UnicodeError
            raise BadUrl(f"the host name {host} is not a valid domain name (IDNA, UTS #46)"
                         ) from None
    bare = name[:-1] if name.endswith(".") else name  # the root's dot: `example.org.`
    if len(bare) > MAX_HOST_LENGTH or not all(0 < len(x) <= MAX_LABEL_LENGTH
                                              for x in bare.split(".")):
        raise BadUrl(f"the host name {host} is not a valid domain name (empty labels, or longer "
                     f"than DNS allows)")
    return name


def ascii_url(url: str) -> str:
    """`url` in ASCII (see the module docstring). ValueError when urlsplit cannot read it (its
    port is the caller's to check), BadUrl for its host."""
    parts = urlsplit(url)
    userinfo, at, hostport = parts.netloc.rpartition("@")
    host, colon, port = hostport, "", ""
    if not hostport.endswith("]"):
        head, colon, tail = hostport.rpartition(":")
        if colon:
            host, port = head, tail
    host = ascii_host(host) if host else host
    if url.isascii():
        return url
    netloc = f"{_escaped(userinfo)}{at}{host}{colon}{_escaped(port)}"
    return SplitResult(parts.scheme, netloc, *map(_escaped, parts[2:])).geturl()
