"""The rows of a backup (format 2, dms.ops.backup): one file per table, `tables/<table>.jsonl`, that
either engine writes and either engine reads back.

A file is JSON lines: the first line the column names, then one array of values per row, in the
same order. Values are JSON's null, true/false (PostgreSQL's booleans; SQLite's are 0/1 and
either is accepted back), whole numbers, numbers and strings: every type a dms column has.
Reading checks each line strictly (a backup is untrusted) and holds one line at a time.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Generator
from pathlib import Path
from typing import IO, Any

TABLE_MEMBER = re.compile(r"tables/([a-z_][a-z0-9_]{0,62})\.jsonl\Z")
# Tables a backup leaves out: each engine's search keeps its own (rebuilt from the rows, and
# 0039's words and parts with them), SQLite's bookkeeping, and what describes running processes
# (migrations 0010 and 0016: open event streams) or recent logins (0010's failures, 0019's known
# addresses), the leases on a bucket's objects (0036: uploads and removals under way), and
# SQLite's highest numbers of deleted rows (0042: like sqlite_sequence, a restored database goes
# on after the highest number it holds).
NOT_BACKED_UP = {"search_outbox", "search_entry", "search_owner", "search_owner_word",
                 "search_part", "sqlite_sequence", "sqlite_stat1", "worker", "lease",
                 "periodic_job", "login_failure", "verify_result", "intake_refusal",
                 "event_stream", "login_address", "blob_lease", "number_high"}
FETCH_ROWS = 1000
# A page's text is at most a few MiB; a line past this is not dms's.
MAX_LINE_BYTES = 64 * 1024 * 1024


class RowFileError(Exception):
    """A table file that is not what dms writes; the message says what is wrong."""


def member(table: str) -> str:
    return f"tables/{table}.jsonl"


def write_table(stream: Callable[[str], Any], table: str, columns: list[str], path: Path) -> int:
    """Write every row of `table` (read through `stream(sql)`, a cursor in the backup's
    snapshot that fetches as it is read) into `path`; returns the number of rows."""
    quoted = ", ".join(f'"{column}"' for column in columns)
    cursor = stream(f'SELECT {quoted} FROM "{table}"')
    count = 0
    with open(path, "w", encoding="utf-8") as out:
        out.write(json.dumps(columns) + "\n")
        while True:
            rows = cursor.fetchmany(FETCH_ROWS)
            if not rows:
                cursor.close()
                return count
            for row in rows:
                out.write(json.dumps(list(row), ensure_ascii=False, default=_plain) + "\n")
            count += len(rows)


def _plain(value: object) -> str:
    """PostgreSQL's timestamps (schema_migrations.applied) as SQLite keeps them: text."""
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
    raise TypeError(f"a {type(value).__name__} is no value of a dms column")


def read_table(path: Path, name: str
               ) -> tuple[list[str], Generator[list[Any], None, None]]:
    """(the column names, the rows one by one) of a table file; RowFileError on anything a
    table file written by dms cannot hold."""
    source = open(path, "rb")  # noqa: SIM115 (closed on a refusal, or by the rows generator)
    header = _line(source, name, 1)
    if header is None or not isinstance(header, list) or not header or not all(
            isinstance(column, str) and re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", column)
            for column in header) or len(set(header)) != len(header):
        source.close()
        raise RowFileError(f"{name} does not start with a list of column names.")

    def rows() -> Generator[list[Any], None, None]:
        with source:
            number = 1
            while True:
                number += 1
                row = _line(source, name, number)
                if row is None:
                    return
                if not isinstance(row, list) or len(row) != len(header) or not all(
                        value is None or isinstance(value, (str, int, float, bool))
                        for value in row):
                    raise RowFileError(f"line {number} of {name} is not a row of "
                                       f"{len(header)} plain values.")
                yield row

    return header, rows()


def _line(source: IO[bytes], name: str, number: int) -> Any:
    raw = source.readline(MAX_LINE_BYTES + 1)
    if not raw:
        return None
    if len(raw) > MAX_LINE_BYTES or not raw.endswith(b"\n"):
        raise RowFileError(f"line {number} of {name} is too long or unfinished.")
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise RowFileError(f"line {number} of {name} is not JSON.") from None
