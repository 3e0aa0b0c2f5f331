"""Webhooks (api.md, "Webhooks"): each user's URLs that dms POSTs their events to, signed with a
secret (dms.notify delivers them). Another user's webhook is, as everything of theirs, "not found".

- The secret is write-only: sealed with the data dir's key (dms.files.sealing, as mail passwords
  are) because it must be read back to sign, never returned, never logged.
- A new webhook gets the owner's events from its creation on: `last_event_id` starts at the
  owner's newest event, read in the owner's write scope, where no event of the owner is being
  written (dms.db.events), so none is missed or sent from before. The events of owners who
  share something with the webhook's owner (dms.domain.access.following) are followed from their
  newest on too.
- A webhook that was disabled (by its owner, or after too many failures in a row) and is enabled
  again starts afresh from that moment: what happened meanwhile is not sent.
- The URL: http or https, without user:password, stored in ASCII (a host name in another
  script in its IDNA form, other characters percent-encoded: dms.files.outbound.urls); for a
  user who is not a superuser an address written in the URL, as that form reads it, must be one
  dms may connect to for them (dms.files.outbound). Names are checked when they are resolved, at
  each delivery.
"""

from __future__ import annotations

import json
from typing import Any, cast
from urllib.parse import urlsplit

from peewee import ModelSelect

from dms.config import Config
from dms.db import owner_scope, write_transaction
from dms.db.events import EVENT_TYPES
from dms.db.models import User, Webhook, new_id, utcnow
from dms.domain.access.following import follow_sharers_from_now, newest_event
from dms.domain.accounts import outbound_policy
from dms.domain.ownership import owned
from dms.errors import Invalid
from dms.files import sealing
from dms.files.outbound import BadUrl, Policy, Refused, ascii_url
from dms.text import has_refused_characters

MAX_WEBHOOKS_PER_USER = 20
MAX_URL_LENGTH = 2000
MIN_SECRET_LENGTH, MAX_SECRET_LENGTH = 16, 256
SCHEMES = ("http", "https")
TOO_LONG = (f"url must be at most {MAX_URL_LENGTH} characters without spaces or control "
            "characters.")
NOT_HTTP = "url must be an http or https URL, such as https://example.org/dms-hook."


def check_url(value: object, policy: Policy) -> str:
    """The URL as it is stored: in ASCII (dms.files.outbound.urls), checked on that form."""
    if not isinstance(value, str) or not value.strip():
        raise Invalid("url is required.", "url", code="required" if value is None else "invalid")
    url = value.strip()
    if len(url) > MAX_URL_LENGTH or has_refused_characters(url) or " " in url:
        raise Invalid(TOO_LONG, "url")
    try:
        parts = urlsplit(url)
    except ValueError:  # an IPv6 literal that is none, a host that NFKC would change into a URL
        raise Invalid(NOT_HTTP, "url") from None
    try:
        parts.port  # noqa: B018 -- raises for a port that is not a number from 0 to 65535
    except ValueError:
        raise Invalid("url has a port that is not a number from 1 to 65535.", "url") from None
    if parts.scheme.lower() not in SCHEMES or not parts.hostname:
        raise Invalid(NOT_HTTP, "url")
    if "@" in parts.netloc:
        raise Invalid("url must not hold a user name or password; put a token in its path or "
                      "query, or check the signature instead.", "url")
    try:
        url = ascii_url(url)
    except BadUrl as error:
        raise Invalid(f"url: {error}.", "url") from None
    if len(url) > MAX_URL_LENGTH:  # percent-encoding made it longer
        raise Invalid(TOO_LONG, "url")
    try:
        policy.check_literal(urlsplit(url).hostname)  # type: ignore[arg-type]  # ascii_url: a host
    except Refused as refused:
        raise Invalid(f"url: {refused}", "url") from None
    return url


def check_events(value: object) -> list[str]:
    if value is None:
        raise Invalid("events is required: a list of event types, such as "
                      "[\"document.processed\"].", "events", code="required")
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise Invalid("events must be a non-empty list of event types.", "events")
    unknown = [v for v in value if v not in EVENT_TYPES]
    if unknown:
        raise Invalid(f"events has an unknown event type {unknown[0][:60]!r}; the types are "
                      f"{', '.join(EVENT_TYPES)}.", "events")
    return list(dict.fromkeys(value))


def check_secret(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise Invalid("secret is required: the key the deliveries are signed with.", "secret",
                      code="required" if value is None else "invalid")
    if not MIN_SECRET_LENGTH <= len(value) <= MAX_SECRET_LENGTH or has_refused_characters(value):
        raise Invalid(f"secret must have {MIN_SECRET_LENGTH} to {MAX_SECRET_LENGTH} characters "
                      "without control characters.", "secret")
    return value


def check_attributes(attributes: dict[str, Any], creating: bool, policy: Policy) -> dict[str, Any]:
    """The columns a POST (`creating`) or PATCH sets. Unknown and read-only attributes are
    ignored (api.md, "Resources and unknown input")."""
    values: dict[str, Any] = {}
    if creating or "url" in attributes:
        values["url"] = check_url(attributes.get("url"), policy)
    if creating or "events" in attributes:
        values["events"] = json.dumps(check_events(attributes.get("events")))
    if creating or "secret" in attributes:
        values["secret"] = check_secret(attributes.get("secret"))
    if "enabled" in attributes:
        if not isinstance(attributes["enabled"], bool):
            raise Invalid("enabled must be true or false.", "enabled")
        values["enabled"] = attributes["enabled"]
    return values


def events_of(webhook: Webhook) -> list[str]:
    return cast("list[str]", json.loads(webhook.events))


def webhooks_of(user: User) -> ModelSelect[Webhook]:
    return (Webhook.select().where(Webhook.owner == user.id)
            .order_by(Webhook.created_at, Webhook.id))


def owned_webhook(user: User, webhook_id: str) -> Webhook:
    return owned(Webhook, user, webhook_id)


# After a success: no event is being tried again. (last_error stays: the latest failure's
# sentence, which failures_in_a_row = 0 shows to be over.)
RETRY_CLEARED = dict(attempts=0, retry_since=None, next_attempt_at=0.0, failures_in_a_row=0)
# What (re)starting a webhook's delivery sets: nothing tried, nothing failed.
FRESH = dict(RETRY_CLEARED, last_error=None)


def create_webhook(user: User, attributes: dict[str, Any], config: Config) -> Webhook:
    values = check_attributes(attributes, True, outbound_policy(config, user))
    webhook_id = new_id()
    values["secret"] = sealing.seal(sealing.load_key(config.data_dir), values["secret"],
                                    webhook_id)
    with write_transaction(owner_scope(user.id)):
        if webhooks_of(user).count() >= MAX_WEBHOOKS_PER_USER:
            raise Invalid(f"One user may have at most {MAX_WEBHOOKS_PER_USER} webhooks.")
        Webhook.insert(id=webhook_id, owner=user.id, created_at=utcnow(),
                       last_event_id=newest_event(user.id), **values).execute()
        follow_sharers_from_now(webhook_id, user.id)
    return Webhook.get_by_id(webhook_id)


def update_webhook(user: User, webhook_id: str, attributes: dict[str, Any],
                   config: Config) -> Webhook:
    values = check_attributes(attributes, False, outbound_policy(config, user))
    if "secret" in values:
        values["secret"] = sealing.seal(sealing.load_key(config.data_dir), values["secret"],
                                        webhook_id)
    with write_transaction(owner_scope(user.id)):
        webhook = owned_webhook(user, webhook_id)
        if values.get("enabled") and not webhook.enabled:
            values.update(FRESH, last_event_id=newest_event(user.id))
            follow_sharers_from_now(webhook.id, user.id)
        elif "url" in values and values["url"] != webhook.url:
            values.update(FRESH)  # the event waiting is tried at once, at the new address
        if values:
            Webhook.update(**values).where(Webhook.id == webhook.id).execute()
    return Webhook.get_by_id(webhook_id)


def delete_webhook(user: User, webhook_id: str) -> None:
    with write_transaction(owner_scope(user.id)):
        webhook = owned_webhook(user, webhook_id)
        Webhook.delete().where(Webhook.id == webhook.id).execute()
