"""Connections dms makes for its users (webhooks, mail accounts), under the administrator's rule
DMS_OUTBOUND_ALLOW: which addresses a user may reach, name resolution with a time limit, the
connection made to exactly the checked address (dms.files.outbound.policy), a URL in the ASCII
form HTTP needs (dms.files.outbound.urls), and one HTTP POST over it (dms.files.outbound.http).
The standard library only, and idna for host names in other scripts; below the domain, so that
the domain's checks, the intake and the notifications use one rule. The allow-list's own syntax
is the settings' (dms.config.parse_allowed)."""

from dms.config import parse_allowed
from dms.files.outbound.policy import Policy, Refused
from dms.files.outbound.urls import BadUrl, ascii_url

__all__ = ["BadUrl", "Policy", "Refused", "ascii_url", "parse_allowed"]
