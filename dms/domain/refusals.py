"""What the intake refused (docs/api.md, "Refused intake"): a file the consume folder moved to
`.failed/`, an attachment a mail check could not take. Each is told to its owner
(GET /intake/refusals/, shown by the web page with a badge) and counted for the admins (GET
/health), not only written to the server's log where the owner never looks; the owner dismisses
what they have seen (DELETE).

Bounded: a user keeps the newest KEEP_PER_USER refusals, and none older than KEEP_DAYS; both are
enforced as refusals are recorded, in the same write transaction. Names and reasons are stored as
the intake states them (file names may hold any character the file system allowed: they are data,
escaped where they are logged)."""

from __future__ import annotations

import datetime as dt
import logging

from peewee import ModelSelect

from dms.db import database, owner_scope, write_transaction
from dms.db.models import IntakeRefusal, User, new_id, utcnow
from dms.errors import DomainError, NotFound

log = logging.getLogger("dms.intake")

SOURCES = ("consume", "mail")
KEEP_PER_USER = 100
KEEP_DAYS = 30
MAX_TEXT = 1000  # characters of a name, an origin or a reason kept


def record(owner_id: str, source: str, name: str, reason: str, origin: str | None = None) -> None:
    """Note a refusal for its owner. Never raises: the refusal itself is already handled (the
    file is in .failed/, the message is named in last_error); a full disk costs only this note."""
    now = utcnow()
    try:
        with write_transaction(owner_scope(owner_id)):
            IntakeRefusal.insert(id=new_id(), owner=owner_id, source=source,
                                 name=name[:MAX_TEXT], reason=reason[:MAX_TEXT],
                                 origin=origin[:MAX_TEXT] if origin else None,
                                 refused_at=now).execute()
            database.execute_sql(
                "DELETE FROM intake_refusal WHERE owner_id = ? AND id NOT IN (SELECT id FROM "
                "intake_refusal WHERE owner_id = ? ORDER BY refused_at DESC, id LIMIT ?)",
                (owner_id, owner_id, KEEP_PER_USER))
            database.execute_sql("DELETE FROM intake_refusal WHERE refused_at < ?",
                                 (IntakeRefusal.refused_at.db_value(
                                     now - dt.timedelta(days=KEEP_DAYS)),))
    except DomainError as error:
        log.warning("could not note a refusal of the %s intake: %s", source, error.message)


def refusals_of(user: User) -> ModelSelect[IntakeRefusal]:
    """The caller's refusals, newest first (GET /intake/refusals/)."""
    return (IntakeRefusal.select().where(IntakeRefusal.owner == user.id)
            .order_by(IntakeRefusal.refused_at.desc(), IntakeRefusal.id))


def dismiss(user: User, refusal_id: str) -> None:
    """The caller has seen a refusal: it leaves their list (DELETE /intake/refusals/{id}/).
    Another user's, or one already gone: 404."""
    with write_transaction(owner_scope(user.id)):
        gone = (IntakeRefusal.delete()
                .where(IntakeRefusal.id == refusal_id, IntakeRefusal.owner == user.id).execute())
    if not gone:
        raise NotFound()


def dismiss_all(user: User) -> int:
    """Every one of the caller's refusals leaves their list (DELETE /intake/refusals/); how
    many. Bounded by KEEP_PER_USER: no user keeps more."""
    with write_transaction(owner_scope(user.id)):
        return int(IntakeRefusal.delete().where(IntakeRefusal.owner == user.id).execute())


def counts_since(since: dt.datetime) -> dict[str, int]:
    """How many files each source refused since `since`, all users together (GET /health)."""
    rows = database.execute_sql(
        "SELECT source, count(*) FROM intake_refusal WHERE refused_at >= ? GROUP BY source",
        (IntakeRefusal.refused_at.db_value(since),)).fetchall()
    found = dict(rows)
    return {source: found.get(source, 0) for source in SOURCES}
