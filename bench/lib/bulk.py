"""Rows written straight into dms's database by the benchmarks that load many documents
(bench/scale.py, bench/metadata.py): plain SQL in the loader's own transactions."""

from __future__ import annotations

import time

from dms.db import database, is_postgresql, postgresql_sql


def many(sql: str, rows: list[tuple]) -> None:
    """`sql` (with ? marks, either engine) once for each row, in one executemany."""
    if rows:
        cursor = database.connection().cursor()
        cursor.executemany(postgresql_sql(sql) if is_postgresql() else sql, rows)


def stamp() -> str:
    """Now, as dms stores a moment."""
    return time.strftime("%Y-%m-%d %H:%M:%S.000000", time.gmtime())
