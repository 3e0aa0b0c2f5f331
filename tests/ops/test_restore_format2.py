"""A restore checks everything before anything lands in the target (dms.ops.backup.restore):
tampered and damaged backups of format 2 (one file per table, by `dms backup`) are refused in one
sentence, and the folder they were restored into is left exactly as it was: a loop or a dangling row
in the rows, a damaged table file, an unknown or missing table, a newer schema. Format 1 and format
2 share the checks of the rows; each has its own of the container. The backups and the refusal's
checks: tests/ops/conftest.py, tests/harness/backups.py."""

from __future__ import annotations

import json
import zipfile

import pytest

from tests.harness.backups import MALFORMED, TABLES, rebuild, refused, row_lines
from tests.harness.processes import dms

# Restores into new data dirs; the rows' engine is SQLite.
# Sockets (pytest-socket): restored data dirs served and asked over HTTP.
pytestmark = [pytest.mark.sqlite_only, pytest.mark.enable_socket]


def test_a_rebuilt_logical_backup_restores(logical, work):
    archive, ids = logical
    with zipfile.ZipFile(archive) as zipped:
        names = sorted(zipped.namelist())
    assert names == sorted(["manifest.json", *ids["files"], *(f"tables/{t}.jsonl" for t in TABLES)])
    result = dms("restore", rebuild(archive, work / "same.zip"), "--data-dir", work / "new")
    assert result.returncode == 0, result.stderr
    assert sorted(str(p.relative_to(work / "new")) for p in (work / "new").rglob("*")
                  if p.is_file()) == sorted(["dms.db", *ids["files"]])
    assert dms("verify", "--data-dir", work / "new").returncode == 0


def test_a_loop_in_the_rows_is_refused(logical, work):
    archive, ids = logical

    def loop(lines):
        header, rows = row_lines(lines)
        for row in rows:
            if row[header.index("id")] == ids["outer"]:
                row[header.index("parent_id")] = ids["inner"]
        return [lines[0]] + [json.dumps(row) + "\n" for row in rows]

    refused(rebuild(archive, work / "loop.zip", rows={"node": loop}),
            f"The backup's database is damaged: its folder tree has a loop "
            f"(nodes {', '.join(sorted([ids['inner'], ids['outer']]))}).")


def test_a_dangling_row_in_the_rows_is_refused(logical, work):
    archive, _ = logical

    def dangling(lines):
        header, rows = row_lines(lines)
        extra = [{"id": "p", "version_id": "no such version", "number": 1, "text": "",
                  "method": None, "barcodes": None}[column]
                 for column in header]
        return lines + [json.dumps(extra) + "\n"]

    refused(rebuild(archive, work / "dangling.zip", rows={"page": dangling},
                    manifest=lambda m: {**m, "tables": {**m["tables"],
                                                        "page": m["tables"]["page"] + 1}}),
            "The backup's database is damaged: 1 row(s) point at rows that are gone.")


@pytest.mark.parametrize("change, message", [
    (lambda lines: lines[:-1],
     "The backup's table tag holds {n_less} rows, its manifest says {n}: the backup is damaged."),
    (lambda lines: lines + ["not json\n"],
     "The backup is damaged: line {last} of tables/tag.jsonl is not JSON."),
    (lambda lines: lines + ['["only one value"]\n'],
     "The backup is damaged: line {last} of tables/tag.jsonl is not a row of {width} plain "
     "values."),
    (lambda lines: lines + [json.dumps([[1]] * len(json.loads(lines[0]))) + "\n"],
     "The backup is damaged: line {last} of tables/tag.jsonl is not a row of {width} plain "
     "values."),
    (lambda lines: lines[:-1] + [lines[-1].rstrip("\n")],
     "The backup is damaged: line {length} of tables/tag.jsonl is too long or unfinished."),
    (lambda lines: [lines[0].replace('"name"', '"title"')] + lines[1:],
     "The backup's table tag has the columns {renamed}, not those of this dms's tag: the "
     "backup is damaged."),
    (lambda lines: ['{"id": 1}\n'] + lines[1:],
     "The backup is damaged: tables/tag.jsonl does not start with a list of column names."),
    (lambda lines: lines + [lines[1]],  # the same row again: its number (seq) is taken first
     "The backup's table tag cannot be restored: UNIQUE constraint failed: tag.seq."),
], ids=["a row less", "not JSON", "a short row", "a nested value", "unfinished",
        "a renamed column", "no header", "a duplicate"])
def test_a_damaged_table_file_is_refused(logical, work, change, message):
    archive, _ = logical
    with zipfile.ZipFile(archive) as zipped:
        lines = zipped.read("tables/tag.jsonl").decode().splitlines(keepends=True)
    header = json.loads(lines[0])
    if len(lines) < 2:  # the fixture's data has no tags: give the table two
        rows = [[{"id": f"t{n}", "owner_id": "x", "name": f"tag {n}", "name_key": f"tag {n}",
                  "bg_color": "#c41fff", "fg_color": "#FFFFFF", "description": "",
                  "pinned": 0, "created_at": "2026-01-02 03:04:05.000000", "seq": n,
                  "match": "", "matching_algorithm": "none", "is_insensitive": 1,
                  "is_inbox_tag": 0, "parent_id": None}[c] for c in header]
                for n in (1, 2)]
        lines += [json.dumps(row) + "\n" for row in rows]
    n = len(lines) - 1
    message = message.format(n=n, n_less=n - 1, last=len(change(list(lines))),
                             length=len(lines), width=len(header),
                             renamed=", ".join(c if c != "name" else "title" for c in header))
    refused(rebuild(archive, work / "damaged.zip", rows={"tag": lambda _: change(list(lines))},
                    manifest=lambda m: {**m, "tables": {**m["tables"], "tag": n}}), message)


def test_an_unknown_or_missing_table_is_refused(logical, work):
    archive, _ = logical
    refused(rebuild(archive, work / "unknown.zip", extra={"tables/invoices.jsonl": b'["id"]\n'},
                    manifest=lambda m: {**m, "tables": {**m["tables"], "invoices": 0}}),
            "The backup holds a table this dms does not know: invoices.")
    refused(rebuild(archive, work / "missing.zip", drop=["tables/preference.jsonl"],
                    manifest=lambda m: {**m, "tables": {k: v for k, v in m["tables"].items()
                                                        if k != "preference"}}),
            "The backup's database is damaged: it lacks the table preference.")
    refused(rebuild(archive, work / "escape.zip", extra={"tables/../x.jsonl": b'["id"]\n'},
                    manifest=lambda m: {**m, "tables": {**m["tables"], "../x": 0}}),
            MALFORMED + "tables names a table that no dms database has.")


def test_a_logical_backup_of_a_newer_schema_is_refused(logical, work):
    archive, _ = logical

    def future(lines):
        header = json.loads(lines[0])
        row = {"id": 999, "name": "9999_future", "applied": "2030-01-01"}
        return lines + [json.dumps([row.get(column) for column in header]) + "\n"]

    refused(rebuild(archive, work / "newer.zip", rows={"schema_migrations": future},
                    manifest=lambda m: {**m, "tables": {**m["tables"], "schema_migrations":
                                                        m["tables"]["schema_migrations"] + 1}}),
            "This backup's database is newer than this dms understands; upgrade dms to restore it.")
