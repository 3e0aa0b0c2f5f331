"""Changed copies of backups, for the restore's checks: members left out or added, a database or
a table file edited, a manifest rewritten, all with checksums that match; a restore of one
refused, the folder left as it was; and metadata on documents (api.md §11b), for a backup to
carry."""

from __future__ import annotations

import hashlib
import json
import zipfile

from dms.config import Config
from dms.domain.metadata.document import MAX_ASN
from tests.harness.appserver import running
from tests.harness.client import Client
from tests.harness.processes import dms
from tests.harness.users import ADMIN_PASSWORD

MALFORMED = "The backup's manifest is malformed: "


def backed_up(root, fill):
    """A backup (format 2, `root`/backup.zip) of a data dir under `root` that `fill(admin)`
    filled through a server; returns (the archive, what `fill` returned)."""
    config = Config(host="127.0.0.1", port=0, data_dir=root / "data", threads=4,
                    admin_username="admin", admin_password=ADMIN_PASSWORD, ocr_workers=1)
    with running(config) as server:
        filled = fill(Client(server.url).login("admin", ADMIN_PASSWORD))
    archive = root / "backup.zip"
    made = dms("backup", archive, "--data-dir", config.data_dir)
    assert made.returncode == 0, made.stderr
    return archive, filled


def rebuild(source, target, *, database=None, manifest=None, drop=(), extra=None,
            symlink=None, rows=None):
    """Write a changed copy of the backup `source` to `target`, with a manifest whose checksums
    match: `database(path)` changes a copy of dms.db (format 1), `rows` {table: change(lines)}
    changes the lines of a table file (format 2; the manifest's row counts stay), members in
    `drop` are left out (of the zip and the manifest), `extra` {name: bytes} is added,
    `manifest(dict)` returns the manifest to write (bytes are written as they are), and the
    member `symlink` is marked as a symlink."""
    with zipfile.ZipFile(source) as zipped:
        members = {name: zipped.read(name) for name in zipped.namelist()}
    listed = json.loads(members.pop("manifest.json"))
    for table, change in (rows or {}).items():
        name = f"tables/{table}.jsonl"
        lines = members[name].decode().splitlines(keepends=True)
        members[name] = "".join(change(lines)).encode()
    if database is not None:
        path = target.with_name(target.name + ".db")
        path.write_bytes(members["dms.db"])
        database(path)
        members["dms.db"] = path.read_bytes()
        path.unlink()
    for name in drop:
        del members[name]
        del listed["files"][name]
    members.update(extra or {})
    for name, data in members.items():
        listed["files"][name] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    if manifest is not None:
        listed = manifest(listed)
    with zipfile.ZipFile(target, "w") as zipped:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 2, 3, 4, 5))
            if name == symlink:
                info.external_attr = 0o120777 << 16
            zipped.writestr(info, data)
        zipped.writestr("manifest.json", listed if isinstance(listed, bytes) else
                        json.dumps(listed).encode())
    return target


def row_lines(lines):
    """(header, rows) of a table file's lines."""
    return json.loads(lines[0]), [json.loads(line) for line in lines[1:]]


def lines_change(match, values):
    """A `rows` change for rebuild(): the rows whose columns are `match` {column: value} get
    `values` {column: value}; with `match` None, a row of `values` is added (null elsewhere)."""
    def change(lines):
        header, rows = row_lines(lines)
        if match is None:
            rows.append([values.get(column) for column in header])
        else:
            for row in rows:
                if all(row[header.index(key)] == wanted for key, wanted in match.items()):
                    for column, value in values.items():
                        row[header.index(column)] = value
        return [lines[0]] + [json.dumps(row) + "\n" for row in rows]
    return change


def refused(archive, message, empty_target=False):
    """Restore `archive` into `<its folder>/new`: refused with `message`, exit status 1, and
    the folder exactly as before (no target, or the empty one; no temporary folder)."""
    target = archive.parent / "new"
    if empty_target:
        target.mkdir()
    before = sorted(p.name for p in archive.parent.iterdir())
    result = dms("restore", archive, "--data-dir", target)
    assert (result.returncode, result.stdout, result.stderr) == (1, "", f"dms: {message}\n")
    assert sorted(p.name for p in archive.parent.iterdir()) == before
    assert not any(".restore-" in p.name for p in archive.parent.iterdir())
    if empty_target:
        assert list(target.iterdir()) == []


# The tables a backup carries (every table of dms.db, in name order).
TABLES = ["correspondent", "custom_field", "custom_field_link", "custom_field_value",
          "document_mail", "document_type", "document_version", "event", "group_member",
          "mail_account", "mail_import", "node", "node_grant", "node_tag", "note", "page",
          "preference",
          "rule", "rule_pending", "rule_run", "saved_search", "schema_migrations", "share_link",
          "split_part", "split_run",
          "tag", "task", "token", "trash_entry", "ui_settings", "user", "user_group", "webhook",
          "webhook_cursor"]



def _made(client, kind, **attributes):
    response = client.post(f"/api/{kind}/", {"data": {"type": kind, "attributes": attributes}})
    assert response.status_code == 201, response.text
    return response.json()["data"]["id"]


def _describe(client, document_id, **attributes):
    response = client.patch(f"/api/documents/{document_id}/",
                            {"data": {"type": "documents", "attributes": attributes}})
    assert response.status_code == 200, response.text


def describe(client, documents):
    """Metadata on three of the client's documents, through the API: a correspondent and a
    case-sensitive regex document type on the first two; custom fields of every kind of column (a
    monetary amount with its currency and a bare one, a date, a select option, an integer, a
    float, false, a longtext, a url, a null) on the first; a documentlink from the first to the
    other two (kept both ways by the domain); notes; a document date; serial numbers 17, 0 and
    the highest. Returns the ids made, by name (the fields' by their own: "amount", ...; the notes'
as a list, under "notes")."""
    first, second, third = documents
    ids = {"sender": _made(client, "correspondents", name="Stadtwerke Köln", match="stadtwerke",
                           matching_algorithm="any"),
           "kind": _made(client, "document-types", name="Abrechnung", match=r"Abrechnung \d+",
                         matching_algorithm="regex", is_insensitive=False)}
    for name, data_type, extra in (
            ("amount", "monetary", {"default_currency": "EUR"}), ("fee", "monetary", {}),
            ("due", "date", {}), ("count", "integer", {}), ("rate", "float", {}),
            ("paid", "boolean", {}), ("memo", "longtext", {}), ("portal", "url", {}),
            ("contract", "string", {}), ("related", "documentlink", {}),
            ("status", "select", {"select_options": [{"id": "open", "label": "Offen"},
                                                     {"label": "Bezahlt"}]})):
        ids[name] = _made(client, "custom-fields", name=name.title(), data_type=data_type,
                          extra_data=extra)
    values = {"amount": "12.3", "fee": "-7.5", "due": "2024-12-31", "count": -2147483648,
              "rate": 0.1, "paid": False, "memo": "Zeile 1\nZeile 2", "status": "open",
              "portal": "https://example.org/konto?id=1", "contract": None,
              "related": [second, third]}
    _describe(client, first, correspondent=ids["sender"], document_type=ids["kind"],
              document_date="2024-03-12", archive_serial_number=17,
              custom_fields=[{"field": ids[name], "value": value}
                             for name, value in values.items()])
    _describe(client, second, correspondent=ids["sender"], archive_serial_number=0)
    _describe(client, third, archive_serial_number=MAX_ASN)
    ids["notes"] = []
    for document_id, note in ((first, "Gekündigt zum 31. Mai"), (first, "Bestätigung kam"),
                              (second, "Zählerstand\n4711")):
        response = client.post(f"/api/documents/{document_id}/notes/",
                               {"data": {"attributes": {"note": note}}})
        assert response.status_code == 201, response.text
        ids["notes"].append(response.json()["data"]["id"])
    return ids
