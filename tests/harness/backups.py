"""Changed copies of backups, for the restore's checks: members left out or added, a database or
a table file edited, a manifest rewritten, all with checksums that match; and a restore of one
refused, the folder left as it was."""

from __future__ import annotations

import hashlib
import json
import zipfile

from tests.harness.processes import dms

MALFORMED = "The backup's manifest is malformed: "


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
          "document_mail", "document_type", "document_version", "event", "mail_account",
          "mail_import", "node", "node_tag", "note", "page", "preference", "rule",
          "rule_pending", "rule_run", "schema_migrations", "split_part", "split_run", "tag",
          "token", "trash_entry", "user", "webhook"]
