"""Paperless-ngx exports written as `document_exporter` writes them, release family by release
family (as its code and tests at each release tag show: docs/paperless-import.md, "What each
release writes"): `manifest.json` of Django-serialised
records in the exporter's own order, `version.json` (up to 2.9) or `metadata.json`, the files
under the names the manifest gives (`X.pdf-archive.pdf` up to 2.17, `X-archive.pdf` from 2.18),
with `--use-folder-prefix`, `--split-manifest` and `--zip` as options.

A library is a list of `Doc`s; each release writes what it had: 1.8 neither notes nor original
file names, 1.12 `documents.comment`, 1.17
notes and no custom fields, 2.12 select values as indexes and money as "EUR12.50", 2.20 option
ids and tag parents (`tn_parent`) and notes before documents, 3.0 SHA-256 checksums, document
versions as rows with `root_document` and trashed documents with `deleted_at`."""

from __future__ import annotations

import hashlib
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.harness import samples

RELEASES = ("1.8.0", "1.12.2", "1.17.4", "2.12.1", "2.20.15", "3.0.5")


@dataclass
class Doc:
    pk: int
    title: str
    text: str
    owner: int | None = 2
    created: str = "2024-05-01"  # the day on the paper
    added: str = "2024-05-02T08:15:01.873Z"
    tags: list[int] = field(default_factory=list)
    correspondent: int | None = None
    document_type: int | None = None
    asn: int | None = None
    notes: list[tuple[int | None, str]] = field(default_factory=list)
    values: dict[int, Any] = field(default_factory=dict)  # custom field pk: value
    archive: bool = True
    deleted: bool = False
    versions: list[str] = field(default_factory=list)  # 3.x: texts of further versions
    data: bytes = b""

    def original(self) -> bytes:
        return self.data or samples.pdf([self.text])


def major(release: str) -> tuple[int, int]:
    first, second = release.split(".")[:2]
    return int(first), int(second)


class Writer:
    def __init__(self, release: str, prefix: bool = False, split: bool = False):
        self.release, self.prefix, self.split = release, prefix, split
        self.version = major(release)
        self.files: dict[str, bytes] = {}
        self.manifest: list[dict[str, Any]] = []

    # -- what each release calls things --------------------------------------------------------
    def checksum(self, data: bytes) -> str:
        digest = hashlib.sha256 if self.version >= (3, 0) else hashlib.md5
        return digest(data).hexdigest()

    def created(self, day: str) -> str:
        # Up to 2.15 a UTC date-time: midnight in Berlin is 22:00 (summer) the day before.
        if self.version >= (2, 16):
            return day
        return f"{day}T00:00:00Z" if day.endswith("-01-01") else self._berlin_midnight(day)

    @staticmethod
    def _berlin_midnight(day: str) -> str:
        import datetime as dt
        from zoneinfo import ZoneInfo

        local = dt.datetime.fromisoformat(day).replace(tzinfo=ZoneInfo("Europe/Berlin"))
        return local.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def side_name(self, base: str, suffix: str) -> str:
        if self.version >= (2, 18):
            return base.rsplit(".", 1)[0] + suffix
        return base + suffix

    def put(self, kind: str, name: str, data: bytes) -> str:
        folder = {"original": "originals/", "archive": "archive/", "thumbnail": "thumbnails/",
                  "json": "json/"}[kind] if self.prefix else ""
        self.files[folder + name] = data
        return folder + name

    # -- records ---------------------------------------------------------------------------------
    def record(self, model: str, pk: Any, /, **values: Any) -> dict[str, Any]:
        return {"model": model, "pk": pk, "fields": values}

    def soft(self) -> dict[str, Any]:
        return {"deleted_at": None, "restored_at": None, "transaction_id": None} \
            if self.version >= (2, 14) else {}

    def users(self, users: list[tuple], memberships: dict[int, list[int]]
              ) -> list[dict[str, Any]]:
        return [self.record("auth.user", pk, password=password, last_login=None,
                            is_superuser=superuser, username=username, first_name="",
                            last_name="", email=f"{username}@example.org", is_staff=superuser,
                            is_active=True, date_joined="2023-01-01T10:00:00Z",
                            groups=memberships.get(pk, []), user_permissions=[])
                for pk, username, password, superuser in users]

    def sharing(self, group_names: list[tuple[int, str]],
                shares: list[tuple[str, int, str, int]]) -> list[dict[str, Any]]:
        """Groups, and (1.17 on) Django's content types and permissions and guardian's object
        permissions: (grantee kind, grantee key, codename, object key)."""
        records = [self.record("auth.group", pk, name=name, permissions=[])
                   for pk, name in group_names]
        if self.version < (1, 17):
            return records
        models = {"document": 7, "tag": 8}
        records += [self.record("contenttypes.contenttype", key, app_label="documents",
                                model=model) for model, key in models.items()]
        codenames = sorted({codename for _, _, codename, _ in shares})
        numbers = {codename: 20 + n for n, codename in enumerate(codenames)}
        records += [self.record("auth.permission", numbers[codename], name=codename,
                                content_type=models[codename.split("_", 1)[1]],
                                codename=codename) for codename in codenames]
        for n, (kind, grantee, codename, object_pk) in enumerate(shares, 1):
            records.append(self.record(f"guardian.{kind}objectpermission", n,
                                       permission=numbers[codename],
                                       content_type=models[codename.split("_", 1)[1]],
                                       object_pk=str(object_pk), **{kind: grantee}))
        return records

    def tag(self, pk: int, name: str, parent: int | None = None, owner: int | None = 2
            ) -> dict[str, Any]:
        values: dict[str, Any] = {}
        if self.version >= (2, 19):
            values.update(tn_parent=parent, tn_ancestors_pks=str(parent or ""), tn_level=2
                          if parent else 1, tn_children_pks="", tn_priority=0)
        if self.version >= (1, 14):
            values["owner"] = owner
        values.update(name=name, match="", matching_algorithm=1, is_insensitive=True,
                      color="#a6cee3", is_inbox_tag=False)
        return self.record("documents.tag", pk, **values)

    def label(self, model: str, pk: int, name: str, owner: int | None = 2) -> dict[str, Any]:
        values: dict[str, Any] = {"owner": owner} if self.version >= (1, 14) else {}
        values.update(name=name, match="", matching_algorithm=1, is_insensitive=True)
        return self.record(model, pk, **values)

    def custom_field(self, pk: int, name: str, data_type: str,
                     options: list[str] | None = None) -> dict[str, Any]:
        values: dict[str, Any] = {"created": "2024-01-01T00:00:00Z", "name": name,
                                  "data_type": data_type}
        if self.version >= (2, 11):
            extra = None
            if options is not None:
                extra = {"select_options": [{"id": f"opt{index:013d}", "label": label}
                                            for index, label in enumerate(options)]
                         if self.version >= (2, 14) else options}
            values["extra_data"] = extra
        return self.record("documents.customfield", pk, **values)

    def document(self, doc: Doc, pk: int, text: str, data: bytes, root: int | None = None,
                 index: int | None = None) -> dict[str, Any]:
        base = f"{doc.created} {doc.title}{'' if index is None else f'_v{index}'}.pdf"
        values: dict[str, Any] = {}
        if self.version >= (2, 10):
            values.update(deleted_at="2025-01-01T00:00:00Z" if doc.deleted else None,
                          restored_at=None)
        if self.version >= (2, 12):
            values["transaction_id"] = None
        if self.version >= (1, 14):
            values["owner"] = doc.owner
        archive_data = samples.pdf([text, "archive"]) if doc.archive else None
        values.update(correspondent=doc.correspondent, storage_path=None, title=doc.title,
                      document_type=doc.document_type, content=text, mime_type="application/pdf",
                      checksum=self.checksum(data),
                      archive_checksum=self.checksum(archive_data) if archive_data else None)
        if self.version >= (2, 13):
            values["page_count"] = 1
        values.update(created=self.created(doc.created), modified=doc.added)
        if self.version < (3, 0):
            values["storage_type"] = "unencrypted"
        values.update(added=doc.added, filename=f"{pk:07d}.pdf",
                      archive_filename=f"{pk:07d}.pdf" if doc.archive else None)
        if self.version >= (1, 9):
            values["original_filename"] = f"scan-{pk}.pdf"
        values["archive_serial_number"] = doc.asn
        if self.version >= (3, 0):
            values.update(root_document=root, version_index=index, version_label=None)
        values["tags"] = doc.tags if root is None else []
        record = self.record("documents.document", pk, **values)
        record["__exported_file_name__"] = self.put("original", base, data)
        record["__exported_thumbnail_name__"] = self.put(
            "thumbnail", self.side_name(base, "-thumbnail.webp"), b"RIFF....WEBP")
        if archive_data is not None:
            record["__exported_archive_name__"] = self.put(
                "archive", self.side_name(base, "-archive.pdf"), archive_data)
        return record

    def notes(self, doc: Doc) -> list[dict[str, Any]]:
        if self.version < (1, 9):
            return []  # no notes before 1.9
        model, key = ("documents.note", "note") if self.version >= (1, 14) else \
            ("documents.comment", "comment")
        return [self.record(model, doc.pk * 100 + number, **self.soft(), **{key: text},
                            created="2024-06-01T09:30:00Z", document=doc.pk, user=user)
                for number, (user, text) in enumerate(doc.notes)]

    def values(self, doc: Doc, fields: dict[int, tuple[str, list[str] | None]]
               ) -> list[dict[str, Any]]:
        records = []
        for field_pk, value in doc.values.items():
            data_type, options = fields[field_pk]
            column = {"string": "value_text", "monetary": "value_monetary",
                      "select": "value_select", "integer": "value_int", "date": "value_date",
                      "boolean": "value_bool", "documentlink": "value_document_ids",
                      "float": "value_float", "url": "value_url",
                      "longtext": "value_long_text"}[data_type]
            if data_type == "select":
                value = options.index(value) if self.version < (2, 14) else \
                    f"opt{options.index(value):013d}"
            if data_type == "monetary" and self.version < (2, 6):
                value = value.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
            columns = {name: None for name in ("value_text", "value_bool", "value_url",
                                               "value_date", "value_int", "value_float",
                                               "value_monetary", "value_document_ids",
                                               "value_select")}
            if self.version >= (2, 19):
                columns["value_long_text"] = None
            columns[column] = value
            records.append(self.record("documents.customfieldinstance", doc.pk * 100 + field_pk,
                                       **self.soft(), created="2024-01-01T00:00:00Z",
                                       document=doc.pk, field=field_pk, **columns))
        return records


def write_export(target: Path, release: str, docs: list[Doc], *, users=None, tags=(),
                 correspondents=(), document_types=(), fields=None, views=(),
                 prefix: bool = False, split: bool = False, as_zip: bool = False,
                 extra_records=(), groups=(), memberships=None, shares=()) -> Path:
    """The export of `docs` as `release` wrote it, in `target` (a directory, or `target.zip`)."""
    writer = Writer(release, prefix, split)
    fields = fields or {}
    users = users if users is not None else [
        (1, "admin", "pbkdf2_sha256$600000$c2FsdA$abc=", True),
        (2, "alice", hashed("alice-password"), False)]
    labels = [writer.tag(*tag) for tag in tags]
    labels += [writer.label("documents.correspondent", pk, name) for pk, name in correspondents]
    labels += [writer.label("documents.documenttype", pk, name) for pk, name in document_types]
    custom = [writer.custom_field(pk, name, data_type, options)
              for pk, (name, data_type, options) in fields.items()] \
        if writer.version >= (2, 1) else []
    kinds = {pk: (data_type, options) for pk, (_, data_type, options) in fields.items()}
    view_records, rule_records = [], []
    for pk, name, rules in views:
        owner_key = "owner" if writer.version >= (1, 14) else "user"
        values = {owner_key: 2, "name": name, "sort_field": "created", "sort_reverse": True}
        if writer.version < (3, 0):
            values.update(show_on_dashboard=True, show_in_sidebar=True)
        view_records.append(writer.record("documents.savedview", pk, **values))
        rule_records += [writer.record("documents.savedviewfilterrule", pk * 100 + n,
                                       saved_view=pk, rule_type=rule, value=value)
                         for n, (rule, value) in enumerate(rules)]
    documents, notes, values = [], [], []
    for doc in docs:
        data = doc.original()
        documents.append(writer.document(doc, doc.pk, doc.text, data))
        for index, text in enumerate(doc.versions, 1):
            documents.append(writer.document(doc, doc.pk * 1000 + index, text,
                                             samples.pdf([text]), root=doc.pk, index=index))
        notes += writer.notes(doc)
        if writer.version >= (2, 1):
            values += writer.values(doc, kinds)
    head = writer.users(users, memberships or {}) + writer.sharing(list(groups), list(shares)) + \
        labels + custom + view_records + rule_records + list(extra_records)
    per_document: list[list[dict[str, Any]]] = []
    if split:
        for record in documents:
            pk = record["pk"]
            mine = [record] + [n for n in notes if n["fields"]["document"] == pk] + \
                [v for v in values if v["fields"]["document"] == pk]
            per_document.append(mine)
        manifest = head
    elif writer.version >= (3, 0):
        manifest = head + notes + documents + values
    elif writer.version >= (2, 9):
        manifest = head + values + notes + documents
    else:
        manifest = head + documents + notes + values
    files = dict(writer.files)
    for mine in per_document:
        base = mine[0]["__exported_file_name__"].split("/")[-1]
        name = writer.side_name(base, "-manifest.json")
        files[("json/" if prefix else "") + name] = json.dumps(mine, indent=2).encode()
    files["manifest.json"] = json.dumps(manifest, indent=2,
                                        ensure_ascii=writer.version < (2, 0)).encode()
    metadata = "metadata.json" if writer.version >= (2, 10) else "version.json"
    files[metadata] = json.dumps({"version": release}).encode()
    if as_zip:
        path = target.with_suffix(".zip")
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, data in files.items():
                archive.writestr(name, data)
        return path
    for name, data in files.items():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_bytes(data)
    return target


def hashed(password: str, iterations: int = 1000) -> str:
    """A Django pbkdf2_sha256 hash (few iterations: tests stay fast)."""
    import base64

    salt = "c2FsdHNhbHQ"
    derived = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), iterations)
    return f"pbkdf2_sha256${iterations}${salt}${base64.b64encode(derived).decode()}"
