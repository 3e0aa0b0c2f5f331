"""Mail checks in the background: no request thread ever waits on a mail server.

`POST /mail-accounts/{id}/check/` and the periodic job only queue checks here;
DMS_MAIL_CHECKS_PARALLEL threads of this node run them (dms.intake.mail._check), each ended by its
own deadline, stall bound and byte budget (dms.intake.mail._client). The threads are shared by turns
(dms.files.fairness): a user's accounts are checked one after another, and a freed thread goes to
the user with nothing running first. Bounded: a user has at most DMS_MAIL_CHECKS_PER_USER checks
queued or running (past it, 429), the node at most DMS_MAIL_CHECKS_PER_NODE (503); a check of an
account already queued is not queued again. Stopping the node ends the running checks at once (their
sessions expire). After each check the memory its message took is given back to the system
(`malloc_trim`).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from dms.db import database, write_transaction
from dms.db.models import MailAccount, User
from dms.domain.mailaccounts import owned_account
from dms.errors import Throttled, Unavailable
from dms.files.fairness import FairExecutor

if TYPE_CHECKING:
    from dms.domain.services import Services
    from dms.intake.mail._client import Budget

log = logging.getLogger("dms.mail")

RETRY_AFTER_SECONDS = 10


class MailChecker:
    def __init__(self, services: Services):
        self.services = services
        config = services.config
        self.per_user, self.per_node = config.mail_checks_per_user, config.mail_checks_per_node
        # One running check per user: a user whose server is slow (a tarpit holds a check until
        # its deadline) holds one thread, never the others' (two users' tarpits held all four for
        # 300 s, and another user's check waited 296 s).
        self._pool = FairExecutor(config.mail_checks_parallel, "dms-mail", per_owner=1)
        self._queued: dict[str, str] = {}  # account id -> owner id, queued or running here
        self._running: set[Budget] = set()
        self._lock = threading.Lock()
        self._stopped = False

    def request(self, user: User, account_id: str) -> MailAccount:
        """POST /mail-accounts/{id}/check/: queue a check of the caller's account (also when it
        is disabled); the account as it is now."""
        account = owned_account(user, account_id)
        with self._lock:
            if account.id in self._queued:
                return account
            if sum(owner == user.id for owner in self._queued.values()) >= self.per_user:
                checks = f"{self.per_user} check{'s' if self.per_user != 1 else ''}"
                raise Throttled(f"You have {checks} of mail accounts under way; try again when "
                                "they are done.", RETRY_AFTER_SECONDS)
            self._submit(account)
        return account

    def check_all(self) -> None:
        """The periodic job: every enabled account of an active user, those checked longest ago
        first, as far as the node's bound allows (the rest at the next period)."""
        accounts = (MailAccount.select().join(User)
                    .where(MailAccount.enabled == True, User.is_active == True)  # noqa: E712
                    .order_by(MailAccount.last_checked_at.asc(nulls="first"), MailAccount.id))
        with self._lock:
            for account in accounts:
                if account.id not in self._queued:
                    try:
                        self._submit(account)
                    except Unavailable:
                        break

    def is_busy(self, account: MailAccount) -> bool:
        """Queued or being checked here, or claimed by another node's check."""
        with self._lock:
            if account.id in self._queued:
                return True
        return account.checking_until is not None and account.checking_until > time.time()

    def _submit(self, account: MailAccount) -> None:
        """Under the lock."""
        if self._stopped:
            raise Unavailable("The server is stopping; try again in a moment.")
        if len(self._queued) >= self.per_node:
            raise Unavailable("This server is checking many mail accounts right now; try again "
                              "in a moment.")
        self._queued[account.id] = account.owner_id
        self._pool.submit(account.owner_id, self._run, account)

    def _run(self, account: MailAccount) -> None:
        # Imported when a check runs: the IMAP client, ssl and the e-mail parser are not loaded
        # into every web process (idle memory).
        from dms.intake.mail import _check

        budget = _check.budget_of(self.services.config)
        with self._lock:
            self._running.add(budget)
        try:
            if not self._stopped:
                _check.check(self.services, account, budget)
        except Exception:  # one account's trouble never stops the others
            log.exception("mail account %s: the check failed", account.id)
        finally:
            with self._lock:
                self._queued.pop(account.id, None)
                self._running.discard(budget)
            database.close()  # a pooled connection goes back; threads here may idle for long
            give_memory_back()

    def stop(self) -> None:
        """Queued checks are dropped; running ones end now (their sessions expire)."""
        with self._lock:
            self._stopped = True
            running = list(self._running)
        for budget in running:
            budget.expire()
        self._pool.shutdown(wait=True, cancel_futures=True)


def release_claims() -> None:
    """At the start of a process that is the only one (the embedded queue): claims left are its
    own last run's, cut short by a crash."""
    with write_transaction():
        database.execute_sql("UPDATE mail_account SET checking_until = NULL "
                             "WHERE checking_until IS NOT NULL")


@functools.cache
def _malloc_trim() -> Any:
    """glibc's malloc_trim, or None (another C library: musl, macOS). ctypes is loaded at the
    first check, not into every web process (idle memory)."""
    import ctypes

    try:
        return ctypes.CDLL(None).malloc_trim  # the symbols of the process: its C library's
    except (OSError, AttributeError):
        return None


def give_memory_back() -> None:
    """Return the free memory of the C heap to the system. A check's message and its parsed
    parts are large blocks freed at its end, but glibc keeps freed memory in each thread's arena
    (and raises its mmap threshold after a large block is freed, so the next ones come from the
    arenas too): 483-508 MiB stayed with the process after four checks of 24 MiB messages."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
