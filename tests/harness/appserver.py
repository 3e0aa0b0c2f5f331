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


def served(config, replacing: Server | None = None):
    """A Server on `config` in a thread of its own. `replacing`: the test's server, stopped
    first and waited for. Servers in one process share the process-wide database handle, so
    the first one's background threads (its search indexer, queue, mail checks) would work on
    the second one's database: the old indexer took a restored server's outbox rows into the
    old index, and the restored server never found what was restored."""
    if replacing is not None:
        stop(replacing)
    server = Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    _threads[server] = thread
    return server, thread


_threads: dict[Server, threading.Thread] = {}  # each server started here -> the thread running it


def start(config, name: str) -> Server:
    """A Server on `config` in a thread named `name`, stopped with stop()."""
    server = Server(config)
    thread = threading.Thread(target=server.run, name=name, daemon=True)
    thread.start()
    _threads[server] = thread
    return server


def stop(server: Server) -> None:
    """Stop `server` and wait until it has (idempotent)."""
    server.stop()
    thread = _threads.pop(server, None)
    if thread is not None:
        thread.join(timeout=15)
        assert not thread.is_alive(), "the server did not stop"


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
