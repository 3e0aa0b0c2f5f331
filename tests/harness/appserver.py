"""The dms server of a test inside the test process: the passwords of the fixtures' admin and
users, a Server started in a thread, and the Config of an empty restore target."""

from __future__ import annotations

import threading

from dms.config import Config
from dms.web.server import Server

ADMIN_PASSWORD = "admin-password-1"
USER_PASSWORD = "user-password-1"


def empty_target(config, request, data_dir) -> Config:
    """Where a restore of `config`'s backup goes on the same engine: a new data dir, and on
    PostgreSQL a new, empty database."""
    url = request.getfixturevalue("postgres").new_database(empty=True) if config.database_url \
        else None
    return Config(**{**config.__dict__, "data_dir": data_dir, "database_url": url})


def served(config):
    server = Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    return server, thread
