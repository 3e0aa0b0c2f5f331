"""Files given to be filed, and what became of each (the Paperless-ngx dialect's post_document and
tasks, api.md §17): a file becomes a new document in the giver's .inbox through the same checks
as any upload, then gets what came with it (title, correspondent, type, date, serial number,
custom fields, tags) through the same domain functions as a PATCH.

dms stores the file before it answers, so a task is done when it is made: `SUCCESS` with the new
document (its text is read in the background, as for any upload), or `FAILURE` with the sentence
that refused the file. A file of a type dms does not take is refused outright (UnsupportedType),
as Paperless-ngx refuses it. Each user keeps their MAX_TASKS newest tasks."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import BinaryIO, cast

from peewee import ModelSelect

from dms.db import database, owner_scope, write_transaction
from dms.db.models import Node, Task, User, utcnow
from dms.domain import uploads
from dms.domain.documents import latest_version
from dms.domain.services import Services
from dms.errors import Invalid, StorageFull, TooLarge

MAX_TASKS = 1000
SUCCESS, FAILURE = "SUCCESS", "FAILURE"


def submit(services: Services, user: User, stream: BinaryIO, length: int | None,
           file_name: str, then: Callable[[Node], None] | None = None) -> Task:
    """The file as a new document of the user's .inbox, then `then(document)` (what came with
    it, checked by the caller before the file was read); the task that says so."""
    name = uploads.check_file_name(file_name)
    try:
        document = uploads.upload_to_inbox(services, user, stream, length, name)
    except (Invalid, TooLarge) as error:
        return _record(user, name, None, FAILURE, error.message, None)
    except StorageFull:
        raise
    if then is not None:
        then(document)
    version = latest_version(document.id)
    return _record(user, name, version.mime_type if version else None, SUCCESS, None,
                   document.id)


def _record(user: User, name: str, mime_type: str | None, status: str, result: str | None,
            document_id: str | None) -> Task:
    task_id = str(uuid.uuid4())
    with write_transaction(owner_scope(user.id)):
        Task.insert(id=task_id, owner=user.id, file_name=name, mime_type=mime_type,
                    status=status, result=result, document=document_id, created_at=utcnow(),
                    acknowledged=False).execute()
        # The oldest beyond MAX_TASKS go: a bounded history of what was given.
        database.execute_sql(
            "DELETE FROM task WHERE owner_id = ? AND seq <= (SELECT seq FROM task "
            "WHERE owner_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)",
            (user.id, user.id, MAX_TASKS))
    return Task.get(Task.id == task_id)


def tasks_of(user: User, task_id: str | None = None,
             unacknowledged: bool = False) -> ModelSelect[Task]:
    """The user's tasks, newest first: all, or the one with that UUID, or those not yet
    acknowledged."""
    query = Task.select().where(Task.owner == user.id).order_by(Task.seq.desc())
    if task_id is not None:
        query = query.where(Task.id == task_id)
    if unacknowledged:
        query = query.where(Task.acknowledged == False)  # noqa: E712 — peewee's SQL
    return query


def numbered(user: User, number: int) -> Task | None:
    """The user's task with this number."""
    return cast("Task | None", tasks_of(user).where(Task.seq == number).first())


def acknowledge(user: User, numbers: list[int]) -> int:
    """Mark these of the user's tasks seen; how many there were."""
    with write_transaction(owner_scope(user.id)):
        return int(Task.update(acknowledged=True)
                   .where(Task.owner == user.id, Task.seq.in_(numbers)).execute())
