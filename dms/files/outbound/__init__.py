"""Connections dms makes for its users (webhooks, mail accounts), under the administrator's rule
DMS_OUTBOUND_ALLOW: which addresses a user may reach, name resolution with a time limit, the
connection made to exactly the checked address (dms.files.outbound.policy), and one HTTP POST
over it (dms.files.outbound.http). The standard library only; below the domain, so that the
domain's checks, the intake and the notifications use one rule. The allow-list's own syntax is
the settings' (dms.config.parse_allowed)."""

from dms.config import parse_allowed
from dms.files.outbound.policy import Policy, Refused

__all__ = ["Policy", "Refused", "parse_allowed"]
