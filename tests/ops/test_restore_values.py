"""A restore refuses rows the API would refuse, checked by the API's own rules in both formats: a
title with a slash, a NUL or a right-to-left override, a time that is not one, a username that
differs only by case from another or that the API would refuse (also for mixing scripts), a rule
(its metadata actions too) or a webhook the API would refuse, a value of the wrong type in a table
file. Nothing lands in the target, and the folder is left exactly as it was. The backups and the
refusal's checks: tests/ops/conftest.py, tests/harness/backups.py. What a document is about:
test_restore_metadata."""

from __future__ import annotations

import json
import sqlite3
import zipfile

import pytest

from tests.harness.backups import lines_change, rebuild, refused, row_lines

# Restores into new data dirs; the rows' engine is SQLite.
# Sockets (pytest-socket): restored data dirs served and asked over HTTP.
pytestmark = [pytest.mark.sqlite_only, pytest.mark.enable_socket]


TITLE_RULE = ("A title may not contain /, \\, control characters or invisible formatting "
              "characters such as right-to-left overrides")


def value_cases(outer: str, alice: str, version: str) -> list[tuple]:
    """(table, the row to change {column: value} or None to add one, the values, what is said)."""
    title = f"has a title the API would refuse ({TITLE_RULE})"
    shouting = {"id": "u-shouting", "username": "ALICE", "username_key": "alice-2",
                "first_name": "", "last_name": "", "email": "", "is_active": 1, "is_staff": 0,
                "is_superuser": 0, "date_joined": "2026-01-02 03:04:05.000000",
                "password_hash": None}
    rule = {"id": "r-hostile", "owner_id": alice, "name": "Hostile", "name_key": "hostile",
            "enabled": 1, "position": 0, "match_field": "text", "match_algorithm": "any",
            "match_pattern": "x", "case_sensitive": 0, "sources": "api", "add_tags": "[]",
            "move_to": None, "set_title": "{title.__class__}", "stop": 0, "set_metadata": "{}",
            "last_error": None,
            "created_at": "2026-01-02 03:04:05.000000",
            "updated_at": "2026-01-02 03:04:05.000000"}
    webhook = {"id": "w-hostile", "owner_id": alice, "url": "https://hooks.example.org/",
               "events": '["node.exploded"]', "secret": "aesgcm1:x", "enabled": 1,
               "created_at": "2026-01-02 03:04:05.000000", "last_event_id": 0, "attempts": 0,
               "next_attempt_at": 0, "failures_in_a_row": 0}
    return [
        ("node", {"id": outer}, {"title": "a/b"}, outer, title),
        ("node", {"id": outer}, {"title": "nul\x00"}, outer, title),
        ("node", {"id": outer}, {"title": "invoice\u202efdp.exe"}, outer, title),
        ("node", {"id": outer}, {"created_at": "garbage"}, outer,
         "has a created_at that is not a time ('garbage')"),
        ("user", None, shouting, "u-shouting",
         f"has the username 'ALICE', which differs only by case from that of user {alice}"),
        ("user", {"id": alice}, {"username": "not allowed!", "username_key": "not allowed!"},
         alice, "has a username the API would refuse (A username may contain only letters, "
                "digits and @ . + - _ characters)"),
        ("document_version", {"id": version}, {"source_sha256": "../../etc/passwd"}, version,
         "has a source_sha256 that is not 64 hexadecimal digits"),
        ("document_version", {"id": version}, {"short_description": "x" * 1001}, version,
         "has a short_description that is not text of at most 1000 characters"),
        # A Cyrillic "а" in "alice": the rule against mixed scripts holds in a restore too.
        ("user", {"id": alice}, {"username": "\u0430lice", "username_key": "\u0430lice"}, alice,
         "has a username the API would refuse (A username may not mix letters of different "
         "scripts (such as Latin and Cyrillic, whose letters can look alike))"),
        ("rule", None, rule, "r-hostile", "is a rule the API would refuse (A title template may "
         "use {title}, {file_name}, {created}, {mail_from}, {mail_subject}, {match} (and "
         "{created:%d.%m.%Y} for another date format); {title.__class__} is none of them)"),
        ("rule", None, {**rule, "set_title": None, "set_metadata": '{"set_correspondent": 7}'},
         "r-hostile", "is a rule the API would refuse (`set_correspondent` must be an id or "
                      "null)"),
        ("webhook", None, webhook, "w-hostile", "has events that are not a list of event types"),
        ("webhook", None, {**webhook, "events": '["node.created"]', "url": "file:///etc/passwd"},
         "w-hostile", "has a url the API would refuse (url must be an http or https URL, such as "
                      "https://example.org/dms-hook)"),
    ]


def sql_change(table, match, values):
    """A `database` change for rebuild() (format 1)."""
    def change(path):
        connection = sqlite3.connect(path)
        try:
            connection.execute("PRAGMA foreign_keys = OFF")
            if match is None:
                connection.execute(f'INSERT INTO "{table}" ({", ".join(values)}) VALUES '
                                   f'({", ".join("?" * len(values))})', list(values.values()))
            else:
                (key, wanted), = match.items()
                connection.execute(f'UPDATE "{table}" SET '
                                   + ", ".join(f"{column} = ?" for column in values)
                                   + f" WHERE {key} = ?", [*values.values(), wanted])
            connection.commit()
        finally:
            connection.close()
    return change


@pytest.mark.parametrize("case", range(13), ids=["slash", "NUL", "RLO", "garbage time",
                                                 "ALICE beside alice", "refused username",
                                                 "source_sha256", "short_description",
                                                 "mixed scripts", "a rule's template",
                                                 "a rule's metadata", "webhook events",
                                                 "webhook url"])
def test_rows_the_api_would_refuse_are_refused_in_both_formats(filled_dir, base, logical, work,
                                                               case):
    data_dir, ids = filled_dir
    connection = sqlite3.connect(data_dir / "dms.db")
    alice = connection.execute("SELECT id FROM \"user\" WHERE username = 'alice'").fetchone()[0]
    connection.close()
    table, match, values, row, what = value_cases(ids["outer"], alice, ids["versions"][0])[case]
    message = f"The backup's table {table} cannot be restored: row {row} {what}."
    refused(rebuild(base[0], work / "format1.zip", database=sql_change(table, match, values),
                    manifest=lambda m: {**m, "counts": {**m["counts"], "users": m["counts"][
                        "users"] + (match is None and table == "user")}}), message)
    refused(rebuild(logical[0], work / "format2.zip", rows={table: lines_change(match, values)},
                    manifest=lambda m: {**m, "tables": {**m["tables"], table: m["tables"][table]
                                                        + (match is None)},
                                        "counts": {**m["counts"], "users": m["counts"]["users"]
                                                   + (match is None and table == "user")}}),
            message)


def test_a_value_of_the_wrong_type_in_a_table_file_is_refused(filled_dir, logical, work):
    """SQLite would quietly store the integer as the text of a title (in format 1 that is what
    the file holds: the title "7")."""
    _, ids = filled_dir

    def integer_title(lines):
        header, rows = row_lines(lines)
        for row in rows:
            if row[header.index("id")] == ids["outer"]:
                row[header.index("title")] = 7
        return [lines[0]] + [json.dumps(row) + "\n" for row in rows]

    with zipfile.ZipFile(logical[0]) as zipped:
        lines = zipped.read("tables/node.jsonl").decode().splitlines()
    line = next(number for number, text in enumerate(lines, 1) if ids["outer"] in text)
    refused(rebuild(logical[0], work / "typed.zip", rows={"node": integer_title}),
            f"The backup's table node cannot be restored: line {line} has a title of the wrong "
            "type (7).")
