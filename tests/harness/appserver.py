"""The dms server of a test inside the test process: a Server started in a thread (for the
length of a block, or until the test stops it), and the Config of an empty restore target."""

from __future__ import annotations

import contextlib
import threading

from dms.config import Config
from dms.web.server import Server


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


@contextlib.contextmanager
def running(config):
    """A real server on the config's data dir for the duration of the block."""
    server = Server(config)
    thread = threading.Thread(target=server.run, name="verify-test-server", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.stop()
        thread.join(timeout=15)
        assert not thread.is_alive(), "the server did not stop"
