"""Delivering the event log to webhooks (api.md, "Webhooks"): durable, at-least-once, once per
cluster.

What happened is the event log (dms.db.events), written in each change's own transaction; where a
webhook's delivery stands is its row (`last_event_id`: every event of its owner up to that id is
delivered or given up) and, for each owner who shares something with its owner, a
`webhook_cursor` row (the same for that owner's events about what they share, dms.notify.feed).
So a killed or restarted server loses nothing: the next deliverer takes the webhook and POSTs the
event after that place again (at-least-once; the event's `id` in the body and X-DMS-Delivery, the
same for every try, let a receiver drop a duplicate). One owner's events commit in the order of
their ids, so moving past an id never skips one.

How it runs, in every `dms serve` process (web-only nodes too, not `dms worker`), outside request
threads:
- A scanner thread looks for due webhooks (enabled, of an active user, not waiting for a retry,
  with events after `last_event_id`) when a write of this process commits (dms.db.on_commit) and
  at least every POLL_SECONDS (changes of other nodes and processes), and claims each with a lease
  in the database (`lease_holder`, `lease_until`): one deliverer of the cluster at a time.
- SENDERS sender threads deliver a claimed webhook's events in order, one POST at a time, at most
  STEPS_PER_TURN per turn, renewing the lease with each; a webhook's events are never sent
  concurrently, and a slow receiver holds one sender, not the others.
- The senders are shared by turns (dms.files.fairness): one owner's webhooks hold at most SHARE
  of them at once, and the scanner claims only what a free sender starts now, the webhooks of
  owners with the fewest being delivered first. One user's receivers that never answer leave
  the other senders to everyone else.
- Any 2xx is success. Anything else (a 3xx too: redirects are not followed), a refused address,
  a URL that cannot be sent or no answer within DMS_WEBHOOK_TIMEOUT_SECONDS is a failure: the
  event is tried again after DMS_WEBHOOK_RETRY_SECONDS, then twice as long each time (at most
  MAX_RETRY_GAP apart), while the later events wait; after DMS_WEBHOOK_RETRY_HOURS of failures
  it is given up (named in `last_error`) and the next one is tried. DMS_WEBHOOK_MAX_FAILURES
  failures in a row disable the webhook. An error of dms itself in a turn is logged and counts
  as a failure too (never an immediate retry, which would repeat it in a loop); an expected
  failure logs no traceback.
- A lease whose deliverer died expires after lease_seconds(); the process that runs alone on its
  data dir (the embedded queue) removes all leases at its start, as a restart after kill -9 must
  not wait for them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import logging
import os
import queue
import socket
import threading
import time
import uuid

from dms import __version__
from dms.config import Config
from dms.db import database, release_connection, write_transaction
from dms.db.models import User, Webhook, utcnow
from dms.domain import webhooks
from dms.domain.accounts import outbound_policy
from dms.errors import Throttled
from dms.files import sealing
from dms.files.fairness import share_of
from dms.files.loop import BackgroundLoop
from dms.files.outbound import Policy
from dms.files.outbound.http import Answer, post
from dms.notify import feed, places
from dms.notify.places import Hook

log = logging.getLogger("dms.webhooks")

POLL_SECONDS = 1.0  # a change made by another process is delivered this much later at most
MIN_SCAN_GAP = 0.02  # seconds between two looks for due webhooks, however busy the writers
SENDERS = 4  # webhooks delivered at once by one process
SHARE = share_of(SENDERS)  # of them, one owner's at once
# Events delivered, or batches of unwanted ones passed over, in one turn; then the sender lets
# other webhooks go first (this one is claimed again at once if it is still due).
STEPS_PER_TURN = 100
MAX_RETRY_GAP = 3600.0  # seconds between two tries of one event, at most
LEASE_SLACK = 30.0  # a lease outlasts the longest POST by this much
MAX_TESTS_PER_USER = 2  # POST /webhooks/{id}/test/ of one user at once, per process
USER_AGENT = f"dms/{__version__} (webhook)"
UNSEALABLE = Answer(None, "The secret cannot be read with this server's key (mail.key in its data "
                          "dir); set the secret again.", 0.0)
UNEXPECTED = Answer(None, "An error of dms stopped the delivery; the server's log has the "
                          "details.", 0.0)


def signature(secret: str, body: bytes) -> str:
    """X-DMS-Signature: the hex HMAC-SHA256 of the exact body bytes with the webhook's secret."""
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def delivery_headers(secret: str, event_type: str, delivery: str, body: bytes) -> dict:
    return {"Content-Type": "application/json", "User-Agent": USER_AGENT,
            "X-DMS-Event": event_type, "X-DMS-Delivery": delivery,
            "X-DMS-Signature": signature(secret, body)}


# Due webhooks with their owners and their places among their owner's (the longest due first):
# each owner's first SHARE at most, every owner's first before anyone's second.
DUE = ('SELECT id, owner_id, place FROM (SELECT w.id, w.owner_id, w.next_attempt_at, '
       'row_number() OVER (PARTITION BY w.owner_id ORDER BY w.next_attempt_at, w.id) AS place '
       'FROM webhook AS w JOIN "user" AS u ON u.id = w.owner_id '
       'WHERE w.enabled = ? AND u.is_active = ? AND w.next_attempt_at <= ? '
       'AND (w.lease_until IS NULL OR w.lease_until < ?) AND (EXISTS (SELECT 1 FROM event AS e '
       'WHERE e.owner_id = w.owner_id AND e.id > w.last_event_id) OR EXISTS (SELECT 1 '
       'FROM webhook_cursor AS c JOIN event AS e ON e.owner_id = c.owner_id '
       'AND e.id > c.last_event_id WHERE c.webhook_id = w.id))) AS due '
       'WHERE place <= ? ORDER BY place, next_attempt_at LIMIT ?')
# Rows of DUE a scan reads: those it cannot take (of owners at their share: at most one per busy
# sender) and those for the free senders, with room for leases another process takes first.
DUE_ROWS = 2 * SENDERS


class Deliverer:
    """The webhooks' deliverer of one server process (see the module docstring)."""

    def __init__(self, config: Config):
        self.config = config
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._scanner = BackgroundLoop("dms-webhooks", self._scan)  # its stop stops the senders
        self._claimed: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._busy = 0  # webhooks claimed and not yet finished
        self._owners: dict[str, int] = {}  # of them, each owner's
        self._tests: dict[str, int] = {}  # user id: tests running
        self._senders: list[threading.Thread] = []
        self._key: bytes | None = None

    # -- running --------------------------------------------------------------------------------
    def start(self, alone: bool) -> None:
        """Start the scanner and the senders; `alone`: no other process delivers from this
        database (the embedded queue), so every lease is a dead process' and goes."""
        if alone:
            with write_transaction():
                database.execute_sql("UPDATE webhook SET lease_holder = NULL, lease_until = NULL "
                                     "WHERE lease_holder IS NOT NULL")
            release_connection()
        self._scanner.start()
        self._senders = [threading.Thread(target=self._send, name=f"dms-webhook-{n}", daemon=True)
                         for n in range(SENDERS)]
        for thread in self._senders:
            thread.start()

    def notify(self) -> None:
        """A write committed (dms.db.on_commit): look for due webhooks now."""
        self._scanner.wake()

    def stop(self) -> None:
        """Stop; a POST in flight ends within the timeout, and its lease is given back."""
        self._scanner.stop_soon()
        for _ in range(SENDERS):
            self._claimed.put(None)
        self._scanner.join(timeout=self.config.webhook_timeout_seconds + 5)
        for thread in self._senders:
            thread.join(timeout=self.config.webhook_timeout_seconds + 5)
        self._senders = []

    def lease_seconds(self) -> float:
        return 2 * self.config.webhook_timeout_seconds + LEASE_SLACK

    def _scan(self) -> None:
        """One round of the scanner: wait to be woken (or POLL_SECONDS), claim for free senders."""
        self._scanner.wait(POLL_SECONDS)
        if self._scanner.stopping:
            return
        with self._lock:
            free = SENDERS - self._busy
        if free <= 0:
            return
        try:
            self._claim_due(free)
        except Exception:  # the database away for a moment: the next look tries again
            log.exception("looking for webhooks to deliver failed")
            self._scanner.rest(POLL_SECONDS)
        finally:
            release_connection()
        self._scanner.rest(MIN_SCAN_GAP)

    def _claim_due(self, free: int) -> None:
        """Claim due webhooks for `free` senders and hand them over: an owner's at most SHARE
        at once, the owners with the fewest claimed first. Nothing is claimed that no sender
        starts now (its lease would keep it from the other processes)."""
        now = time.time()
        rows = database.execute_sql(DUE, (True, True, now, now, SHARE, DUE_ROWS)).fetchall()
        with self._lock:
            busy = dict(self._owners)  # senders only lower it meanwhile
        rows.sort(key=lambda row: busy.get(row[1], 0) + row[2])  # stable: longest due first
        for webhook_id, owner_id, _ in rows:
            if free <= 0:
                return
            if busy.get(owner_id, 0) >= SHARE:
                continue
            with write_transaction():
                taken = database.execute_sql(
                    "UPDATE webhook SET lease_holder = ?, lease_until = ? WHERE id = ? "
                    "AND (lease_until IS NULL OR lease_until < ?)",
                    (self.holder, now + self.lease_seconds(), webhook_id, now)).rowcount == 1
            if taken:
                with self._lock:
                    self._busy += 1
                    self._owners[owner_id] = self._owners.get(owner_id, 0) + 1
                self._claimed.put((webhook_id, owner_id))
                busy[owner_id] = busy.get(owner_id, 0) + 1
                free -= 1

    def _send(self) -> None:
        while True:
            claimed = self._claimed.get()
            if claimed is None:
                return
            webhook_id, owner_id = claimed
            keep_lease = False
            try:
                self._turn(webhook_id)
            except Exception:
                log.exception("delivering webhook %s failed", webhook_id)
                keep_lease = not self._rest(webhook_id)
            finally:
                if not keep_lease:
                    try:
                        with write_transaction():
                            database.execute_sql(
                                "UPDATE webhook SET lease_holder = NULL, lease_until = NULL "
                                "WHERE id = ? AND lease_holder = ?", (webhook_id, self.holder))
                    except Exception:  # it expires by itself
                        log.exception("giving back the lease of webhook %s failed", webhook_id)
                release_connection()
                with self._lock:
                    self._busy -= 1
                    left = self._owners[owner_id] - 1
                    if left:
                        self._owners[owner_id] = left
                    else:
                        del self._owners[owner_id]
                self._scanner.wake()  # it may have more; others may be waiting for a sender

    def _rest(self, webhook_id: str) -> bool:
        """After an error of dms in a turn (logged): the webhook waits as after a failed delivery
        (counted, tried again later, disabled after too many), as at once it would fail again, in
        a loop. False when even that fails: then its lease, kept until it expires, is the wait."""
        try:
            hook = self._hook(webhook_id)
            if hook is not None:
                self._failed(hook, None, None, UNEXPECTED)
            return True
        except Exception:
            log.warning("webhook %s waits for its lease to expire (%g s)", webhook_id,
                        self.lease_seconds())
            return False

    # -- one webhook's turn ---------------------------------------------------------------------
    def _turn(self, webhook_id: str) -> None:
        for _ in range(STEPS_PER_TURN):
            if self._scanner.stopping:
                return
            hook = self._hook(webhook_id)
            if hook is None or hook.next_attempt_at > time.time():
                return
            batch = feed.read(hook.owner_id, hook.cursors)
            if batch.cursors == hook.cursors:  # nothing new: rows of who stopped sharing go
                if hook.stored != places.others(hook, hook.cursors):
                    self._advance(hook, hook.cursors)
                return
            index = next((i for i, (event, _) in enumerate(batch.events)
                          if event.type in hook.events), None)
            if index is None:  # none of these is wanted: past them at once
                self._advance(hook, batch.cursors)
                continue
            wanted, place = batch.events[index]
            if index:
                hook = self._advance(hook, batch.events[index - 1][1])
                if hook is None:
                    return
            release_connection()  # no pooled connection while the receiver takes its time
            answer = self._post(hook, wanted)
            if not answer.ok:
                self._failed(hook, wanted, place, answer)
                return
            if not self._succeeded(hook, wanted, place, answer):
                return

    def _hook(self, webhook_id: str) -> Hook | None:
        return places.held(webhook_id, self.holder)

    def _post(self, hook: Hook, event: feed.FeedEvent) -> Answer:
        secret = self._secret(hook.id, hook.secret)
        if secret is None:
            return UNSEALABLE
        headers = delivery_headers(secret, event.type, feed.delivery_id(hook.id, event.id),
                                   event.body)
        policy = Policy(self.config.outbound_allowed).for_user(hook.superuser)
        return post(policy, hook.url, event.body, headers, self.config.webhook_timeout_seconds)

    def _secret(self, webhook_id: str, sealed: str) -> str | None:
        """The webhook's secret in clear, or None when this server's key cannot open it."""
        if self._key is None:
            self._key = sealing.load_key(self.config.data_dir)
        try:
            return sealing.unseal(self._key, sealed, webhook_id)
        except sealing.Unsealable:
            return None

    def _update(self, hook: Hook, place: feed.Cursors | None = None, **columns) -> bool:
        """Write `columns` (and move to `place`) if this deliverer still holds the webhook and
        it still waits at the same event (its owner may have re-enabled it meanwhile); the lease
        is renewed."""
        columns["lease_until"] = time.time() + self.lease_seconds()
        if place is not None:
            columns["last_event_id"] = place[hook.owner_id]
        sets = ", ".join(f"{name} = ?" for name in columns)
        with write_transaction():
            if database.execute_sql(
                    f"UPDATE webhook SET {sets} WHERE id = ? AND lease_holder = ? "
                    "AND last_event_id = ?",
                    (*columns.values(), hook.id, self.holder, hook.last_event_id)).rowcount != 1:
                return False
            if place is not None:
                places.move(hook, place)
            return True

    def _advance(self, hook: Hook, place: feed.Cursors) -> Hook | None:
        """Past events the webhook does not want; None when it is no longer this one's."""
        if not self._update(hook, place):
            return None
        return dataclasses.replace(hook, last_event_id=place[hook.owner_id], cursors=place,
                                   stored=places.others(hook, place))

    def _succeeded(self, hook: Hook, event: feed.FeedEvent, place: feed.Cursors,
                   answer: Answer) -> bool:
        return self._update(hook, place, last_status=answer.status, last_delivery_at=_stamp(),
                            **webhooks.RETRY_CLEARED)

    def _failed(self, hook: Hook, event: feed.FeedEvent | None, place: feed.Cursors | None,
                answer: Answer) -> None:
        """A failed try of `event` (None: of the turn, by an error of dms), `place` the webhook's
        place after it."""
        now = time.time()
        attempts, failures = hook.attempts + 1, hook.failures_in_a_row + 1
        since = hook.retry_since if hook.retry_since is not None else now
        columns = dict(attempts=attempts, retry_since=since, failures_in_a_row=failures,
                       last_status=answer.status, last_delivery_at=_stamp(),
                       last_error=answer.error)
        config, moved_to = self.config, None
        if failures >= config.webhook_max_failures:
            columns.update(enabled=False, last_error=(
                f"Disabled after {failures} failed deliveries in a row; the last: {answer.error}"))
            log.warning("webhook %s disabled after %d failed deliveries in a row", hook.id,
                        failures)
        elif event is not None and now - since >= config.webhook_retry_hours * 3600:
            moved_to = place
            columns.update(attempts=0, retry_since=None,
                           next_attempt_at=0.0, last_error=(
                               f"Event {event.id} ({event.type}) was given up after "
                               f"{config.webhook_retry_hours:g} hours of failed deliveries; "
                               f"the last: {answer.error}"))
        else:
            columns["next_attempt_at"] = now + min(
                config.webhook_retry_seconds * 2 ** (attempts - 1), MAX_RETRY_GAP)
        self._update(hook, moved_to, **columns)

    # -- POST /webhooks/{id}/test/ --------------------------------------------------------------
    def test(self, user: User, webhook_id: str) -> tuple[str, Answer]:
        """Send a `ping` to the caller's webhook now, within the timeout; (its delivery id, the
        answer). Changes nothing of the webhook. At most MAX_TESTS_PER_USER at once."""
        webhook = webhooks.owned_webhook(user, webhook_id)
        with self._lock:
            if self._tests.get(user.id, 0) >= MAX_TESTS_PER_USER:
                raise Throttled(f"At most {MAX_TESTS_PER_USER} tests of webhooks run at once; "
                                "try again when one has ended.",
                                retry_after=int(self.config.webhook_timeout_seconds) + 1)
            self._tests[user.id] = self._tests.get(user.id, 0) + 1
        try:
            return self._ping(webhook, outbound_policy(self.config, user))
        finally:
            with self._lock:
                self._tests[user.id] -= 1
                if not self._tests[user.id]:
                    del self._tests[user.id]

    def _ping(self, webhook: Webhook, policy: Policy) -> tuple[str, Answer]:
        ping_id, body = feed.ping(webhook.id, webhook.owner_id)
        secret = self._secret(webhook.id, webhook.secret)
        if secret is None:
            return ping_id, UNSEALABLE
        release_connection()  # none held while the receiver takes its time
        headers = delivery_headers(secret, feed.PING, ping_id, body)
        return ping_id, post(policy, webhook.url, body, headers,
                             self.config.webhook_timeout_seconds)


def _stamp() -> str:
    return Webhook.last_delivery_at.db_value(utcnow())
