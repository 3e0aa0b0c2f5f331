"""What a Paperless-ngx export's manifests hold, read release by release (api.md §18): Django's
serialised records, `{"model", "pk", "fields"}`, in no dependency order (notes come before their
documents from 2.9 on, documents last in 3.x), references that may point at nothing.

The manifests are read twice, as streams: `read_library` keeps the small things (users, groups,
labels, custom fields, saved views, and each document's notes and custom field values, by
document) and counts the rest; `documents` then yields one document at a time with its text.
Fields are matched by name, never by position, and whatever a release renamed is read under both
names: `documents.comment` (1.9-1.13) as notes, a saved view's `user` (before 1.14) as `owner`,
`created` as a UTC date-time (up to 2.15: its day in the server's time zone, which the export does
not say — `time_zone`) or a date (2.16 on), checksums of 32 hex digits as MD5 (up to 2.20) and of
64 as SHA-256 (3.x), a select's value as an index of its options (2.11-2.13) or an option id
(2.14 on), money as "12.50" (up to 2.5) or "EUR12.50"."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

from dms.intake.paperless.export import MANIFEST, Export
from dms.intake.paperless.jsonstream import ManifestError

DOCUMENT = "documents.document"
LABEL_MODELS = {"documents.tag": "tags", "documents.correspondent": "correspondents",
                "documents.documenttype": "document_types",
                "documents.storagepath": "storage_paths", "documents.customfield": "custom_fields",
                "auth.user": "users", "auth.group": "groups", "documents.savedview": "saved_views"}
NOTE_MODELS = ("documents.note", "documents.comment")
VALUE_MODEL = "documents.customfieldinstance"
RULE_MODEL = "documents.savedviewfilterrule"
# What has no place in dms (yet): reported by kind, not imported.
NOT_IMPORTED = {
    "paperless_mail.mailaccount": "mail accounts", "paperless_mail.mailrule": "mail rules",
    "documents.workflow": "workflows", "documents.workflowtrigger": "workflows",
    "documents.workflowaction": "workflows", "documents.workflowactionemail": "workflows",
    "documents.workflowactionwebhook": "workflows",
    "documents.consumptiontemplate": "consumption templates",
    "documents.sharelink": "share links", "documents.sharelinkbundle": "share links",
    "documents.uisettings": "user interface settings",
    "paperless.applicationconfiguration": "application settings",
    "auditlog.logentry": "audit log entries",
    "socialaccount.socialaccount": "social logins", "socialaccount.socialapp": "social logins",
    "socialaccount.socialtoken": "social logins", "mfa.authenticator": "two-factor devices",
    "authtoken.token": "API tokens",
}
OBJECT_PERMISSIONS = {"guardian.userobjectpermission": "user",
                      "guardian.groupobjectpermission": "group"}
CONTENT_TYPE = "contenttypes.contenttype"
PERMISSION = "auth.permission"
SYSTEM_USERS = ("consumer", "AnonymousUser")
MAX_NOTES = 1000  # per document, as dms keeps them
MAX_VALUES = 1000  # custom field values per document
MAX_SHARES = 1_000_000  # object permissions kept from one export


@dataclass
class Library:
    """Everything but the documents themselves, by Paperless-ngx's primary keys."""
    version: str | None = None
    objects: dict[str, dict[Any, dict[str, Any]]] = field(
        default_factory=lambda: {kind: {} for kind in LABEL_MODELS.values()})
    rules: dict[Any, list[tuple[int, str | None]]] = field(default_factory=dict)
    notes: dict[Any, list[dict[str, Any]]] = field(default_factory=dict)
    values: dict[Any, list[dict[str, Any]]] = field(default_factory=dict)
    documents: int = 0  # records of documents (3.x: its versions too)
    versions: int = 0
    not_imported: Counter = field(default_factory=Counter)
    unknown: Counter = field(default_factory=Counter)
    split_skipped: list[str] = field(default_factory=list)
    # Sharing (1.17 on): Django's permissions and content types by key, and each object
    # permission as (grantee kind, grantee key, permission key, object key).
    permissions: dict[Any, tuple[Any, str]] = field(default_factory=dict)
    content_types: dict[Any, tuple[str, str]] = field(default_factory=dict)
    shares: list[tuple[str, Any, Any, str]] = field(default_factory=list)


@dataclass
class Document:
    """One documents.document record, its values normalised."""
    pk: Any
    title: str
    content: str
    created: dt.date | None
    added: dt.datetime
    checksum: str
    archive_checksum: str | None
    file_name: str | None  # in the export
    archive_name: str | None
    original_filename: str | None
    mime_type: str
    owner: Any
    correspondent: Any
    document_type: Any
    storage_path: Any
    tags: list[Any]
    asn: int | None
    deleted: bool
    root: Any  # 3.x: the document this row is a version of (None: a document)
    version_index: int | None


def _records(export: Export, name: str) -> Iterator[dict[str, Any]]:
    for record in export.records(name):
        if isinstance(record, dict) and isinstance(record.get("model"), str) \
                and isinstance(record.get("fields"), dict):
            yield record


def manifest_files(export: Export, library: Library) -> list[str]:
    """manifest.json and the split manifests that are one (a user's own file may end in
    -manifest.json too: it is left alone)."""
    names = export.manifests()
    kept = [MANIFEST]
    for name in names[1:]:
        try:
            first = next(_records(export, name), None)
        except ManifestError:
            first = None
        if first is not None and first["model"] == DOCUMENT:
            kept.append(name)
        else:
            library.split_skipped.append(name)
    return kept


def read_library(export: Export, names: list[str], library: Library) -> Library:
    library.version = export.version()
    for name in names:
        for record in _records(export, name):
            _keep(library, record)
    return library


def _keep(library: Library, record: dict[str, Any]) -> None:
    model, pk, values = record["model"], record.get("pk"), record["fields"]
    if model in LABEL_MODELS:
        if model == "auth.user" and values.get("username") in SYSTEM_USERS:
            return
        library.objects[LABEL_MODELS[model]][pk] = values
    elif model == DOCUMENT:
        library.documents += 1
        library.versions += values.get("root_document") is not None
    elif model in NOTE_MODELS:
        _by_document(library.notes, values, MAX_NOTES)
    elif model == VALUE_MODEL:
        _by_document(library.values, values, MAX_VALUES)
    elif model == RULE_MODEL:
        library.rules.setdefault(values.get("saved_view"), []).append(
            (values.get("rule_type"), values.get("value")))
    elif model in OBJECT_PERMISSIONS:
        kind = OBJECT_PERMISSIONS[model]
        if len(library.shares) < MAX_SHARES:
            library.shares.append((kind, values.get(kind), values.get("permission"),
                                   str(values.get("object_pk"))))
    elif model == PERMISSION:
        library.permissions[pk] = (values.get("content_type"), str(values.get("codename")))
    elif model == CONTENT_TYPE:
        library.content_types[pk] = (str(values.get("app_label")), str(values.get("model")))
    elif model in NOT_IMPORTED:
        library.not_imported[NOT_IMPORTED[model]] += 1
    else:
        library.unknown[model] += 1


def _by_document(kept: dict[Any, list[dict[str, Any]]], values: dict[str, Any],
                 limit: int) -> None:
    """A note's or custom field value's record kept with its document's (not a deleted one)."""
    document = values.get("document")
    if values.get("deleted_at") is None and document is not None:
        mine = kept.setdefault(document, [])
        if len(mine) < limit:
            mine.append(values)


def documents(export: Export, names: list[str], time_zone: ZoneInfo) -> Iterator[Document]:
    """Each document record, in the order of the manifests (ManifestError for one that is not
    a document's shape)."""
    for name in names:
        for record in _records(export, name):
            if record["model"] == DOCUMENT:
                yield document_of(record, time_zone)


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def document_of(record: dict[str, Any], time_zone: ZoneInfo) -> Document:
    values = record["fields"]
    added = parse_moment(values.get("added")) or dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    asn = values.get("archive_serial_number")
    index = values.get("version_index")
    return Document(
        pk=record.get("pk"), title=_text(values.get("title")) or f"document {record.get('pk')}",
        content=_text(values.get("content")), created=parse_day(values.get("created"), time_zone),
        added=added, checksum=_text(values.get("checksum")).lower(),
        archive_checksum=_text(values.get("archive_checksum")).lower() or None,
        file_name=_name(record.get("__exported_file_name__")),
        archive_name=_name(record.get("__exported_archive_name__")),
        original_filename=_name(values.get("original_filename")),
        mime_type=_text(values.get("mime_type")), owner=values.get("owner"),
        correspondent=values.get("correspondent"), document_type=values.get("document_type"),
        storage_path=values.get("storage_path"),
        tags=[tag for tag in values.get("tags") or [] if isinstance(tag, (int, str))],
        asn=asn if isinstance(asn, int) and not isinstance(asn, bool) and asn >= 0 else None,
        deleted=values.get("deleted_at") is not None, root=values.get("root_document"),
        version_index=index if isinstance(index, int) else None)


def _name(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def parse_moment(value: object) -> dt.datetime | None:
    """A Django date-time ("2024-04-30T22:00:00Z", with milliseconds or an offset) in UTC."""
    if not isinstance(value, str):
        return None
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC)


def parse_day(value: object, time_zone: ZoneInfo) -> dt.date | None:
    """`created`: a date (2.16 on), or a UTC date-time whose day is the one in the server's
    time zone (up to 2.15)."""
    if not isinstance(value, str):
        return None
    if len(value) == 10:
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            return None
    moment = parse_moment(value)
    return moment.astimezone(time_zone).date() if moment is not None else None
