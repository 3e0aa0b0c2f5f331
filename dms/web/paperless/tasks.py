"""The dialect's uploads and tasks (api.md §17): `POST /api/documents/post_document/` (multipart:
`document` and what comes with it) files the document in the caller's .inbox and answers the
task's UUID as a JSON string; `/api/tasks/` shows what became of it — a plain list with
upper-case statuses up to version 9, a page with version 10's fields from 10 on."""

from __future__ import annotations

from typing import Any

import bottle

from dms.domain import numbers, tasks
from dms.domain.rows import Task
from dms.errors import UnsupportedType
from dms.web.paperless import translate
from dms.web.paperless.documents import apply_change
from dms.web.paperless.protocol import (
    Call,
    Routes,
    detail,
    invalid,
    not_found,
    number,
    refuse_null_characters,
)

routes = Routes()

# post_document's fields that say something about the document (storage_path: dms has none).
ABOUT = ("title", "created", "correspondent", "document_type", "archive_serial_number",
         "custom_fields")
MULTIPART_SLACK = 1024 * 1024  # form fields beside the file, within an upload's limit


def _time(value: Any) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


@routes.add("POST", "/api/documents/post_document/", fields=translate.FIELDS)
def post_document(call: Call) -> str:
    media = (call.header("Content-Type") or "").split(";")[0].strip().lower()
    if media != "multipart/form-data":
        raise detail(415, f'Unsupported media type "{media}" in request.')
    length = int(call.environ.get("CONTENT_LENGTH") or 0)
    if length > call.config.max_upload_bytes + MULTIPART_SLACK:
        raise detail(413, f"The file is larger than the maximum of {call.config.max_upload_mb} "
                          "MiB.")
    request = bottle.request
    upload = request.files.get("document")
    if upload is None:
        raise invalid("document", "No file was submitted.")
    fields: dict[str, Any] = {name: request.forms.getunicode(name) for name in ABOUT
                              if request.forms.getunicode(name) not in (None, "")}
    tag_values = request.forms.getall("tags")
    if tag_values:
        fields["tags"] = tag_values
    refuse_null_characters([(name, str(value)) for name, value in fields.items()] +
                           [("document", upload.raw_filename or "")])
    change = translate.change_of(call.user, fields)  # checked before the file is read
    stream = upload.file
    stream.seek(0, 2)
    size = stream.tell()
    stream.seek(0)
    try:
        task = tasks.submit(call.services, call.user, stream, size,
                            upload.raw_filename or "document",
                            then=lambda document: apply_change(call, document.id, change))
    except UnsupportedType as error:  # as Paperless-ngx refuses a type it does not take
        raise invalid("document", error.message) from None
    return str(task.id)


def _shape(call: Call, task: Task, document_numbers: dict[str, int],
           owner: int) -> dict[str, Any]:
    document = document_numbers.get(task.document_id or "")
    result = f"Success. New document id {document} created" if task.status == tasks.SUCCESS \
        else task.result
    if call.version < 10:
        return {"id": task.seq, "task_id": task.id, "task_name": "consume_file",
                "task_file_name": task.file_name, "date_created": _time(task.created_at),
                "date_done": _time(task.created_at), "type": "file", "status": task.status,
                "result": result, "acknowledged": task.acknowledged,
                "related_document": str(document) if document is not None else None,
                "owner": owner}
    status = task.status.lower()
    return {"id": task.seq, "task_id": task.id, "task_type": "consume_file",
            "task_type_display": "Consume File", "trigger_source": "api_upload",
            "trigger_source_display": "API Upload", "status": status,
            "status_display": status.capitalize(), "date_created": _time(task.created_at),
            "date_started": _time(task.created_at), "date_done": _time(task.created_at),
            "duration_seconds": 0.0, "wait_time_seconds": 0.0,
            "input_data": {"filename": task.file_name, "mime_type": task.mime_type,
                           "overrides": {"filename": task.file_name}},
            "result_data": {"document_id": document} if document is not None else
            {"error_message": result} if task.status == tasks.FAILURE else None,
            "related_document_ids": [document] if document is not None else [],
            "acknowledged": task.acknowledged, "owner": owner}


def _shapes(call: Call, rows: list[Task]) -> list[dict[str, Any]]:
    document_numbers = numbers.numbers_of(
        "document", [row.document_id for row in rows if row.document_id])
    owner = numbers.numbers_of("user", [call.user.id])[call.user.id]
    return [_shape(call, row, document_numbers, owner) for row in rows]


@routes.add("GET", "/api/tasks/")
def list_tasks(call: Call) -> Any:
    query = tasks.tasks_of(call.user, call.arg("task_id"),
                           (call.arg("acknowledged") or "").lower() in ("false", "0"))
    if call.version < 10:
        return _shapes(call, list(query.limit(tasks.MAX_TASKS)))
    return call.page(query.count(), lambda offset, limit: _shapes(
        call, list(query.offset(offset).limit(limit))))


@routes.add("GET", "/api/tasks/{task_id}/")
def get_task(call: Call, task_id: str) -> dict[str, Any]:
    found = tasks.numbered(call.user, number(task_id))
    if found is None:
        raise not_found("Task")
    return _shapes(call, [found])[0]


@routes.add("POST", "/api/tasks/acknowledge/")
def acknowledge(call: Call) -> dict[str, int]:
    given = call.body().get("tasks")
    if not isinstance(given, list) or not all(isinstance(item, int) and not isinstance(item, bool)
                                              for item in given) or len(given) > tasks.MAX_TASKS:
        raise invalid("tasks", "Expected a list of items but got type "
                               f'"{type(given).__name__}".')
    return {"result": tasks.acknowledge(call.user, given)}
