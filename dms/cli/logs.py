"""How every dms command logs: one line per message, controls escaped."""

from __future__ import annotations

import logging

from dms.text import escape_controls


class OneLineFormatter(logging.Formatter):
    """Every log message on one line as it looks: names from clients and files (a file name with
    ESC and a newline) cannot forge log lines; a traceback after the message stays as it is."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = escape_controls(record.message)
        return super().formatMessage(record)


def configure_logging(level: str, stream=None) -> None:
    handler = logging.StreamHandler(stream)
    handler.setFormatter(OneLineFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)
    # peewee logs each migration it runs; dms.db says it once for all of them (a restore or a
    # first start printed every migration twice).
    logging.getLogger("peewee.migrations").setLevel(logging.WARNING)
    # waitress warns on every request that waits for a free thread: normal under load, and
    # thousands of lines a minute with many keep-alive clients.
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)
