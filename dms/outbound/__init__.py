"""Connections dms makes for its users (webhooks, mail accounts), under the administrator's rule
DMS_OUTBOUND_ALLOW: which addresses a user may reach, name resolution with a time limit, the
connection made to exactly the checked address (dms.outbound.policy), and one HTTP POST over it
(dms.outbound.http). The standard library only; at the bottom of the layers, so that the intake
and the notifications use one rule."""

from dms.outbound.policy import Policy, Refused, parse_allowed

__all__ = ["Policy", "Refused", "parse_allowed"]
