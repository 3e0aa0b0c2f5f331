"""The SQL statements an action runs, from peewee's debug log (its records: (sql, params))."""

from __future__ import annotations

import logging
from collections.abc import Callable


def logged_statements(action: Callable[[], object]) -> list[tuple[str, tuple]]:
    """Each statement `action` ran, with its parameters, in order."""
    records: list[tuple[str, tuple]] = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(  # type: ignore[method-assign]
        (str(record.msg[0]), tuple(record.msg[1] or ())))
    logger = logging.getLogger("peewee")
    level = logger.level
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    try:
        action()
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    return records
