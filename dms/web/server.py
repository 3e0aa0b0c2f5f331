"""Running the appliance: one process, waitress serving the Bottle app.

Start-up order: open and migrate the database and sweep the file store (create_app), create the
first superuser on an empty data dir, bind the socket, start the background work (dms.runtime:
the search indexer, which opens or rebuilds the index in its own thread, then unfinished work
queued and the processing workers, the webhooks' deliverer and the event streams' watch), then
serve. Shut-down order (SIGTERM, Ctrl-C or stop()): stop accepting, end the event streams, let
the worker threads finish the requests they are on while the event loop still sends their
answers, stop the threads, close the connections, stop the background work (the pages being read
may finish), then close the database. We drive waitress' event loop ourselves (instead of
`server.run()`) to get that order.
"""

from __future__ import annotations

import errno
import gc
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable

from waitress import wasyncore

from dms.config import Config
from dms.db import describe_url, release_connection
from dms.domain.accounts import ensure_first_superuser
from dms.runtime import CannotStart, start_failure
from dms.web.app import create_app
from dms.web.endpoints import with_cors
from dms.web.httpserver import create_server, fit_connection_limit, with_nosniff
from dms.web.turns import with_refusals_held

log = logging.getLogger("dms.server")

# waitress refuses bodies past this itself (with a plain-text 413), so it sits above the app's own
# limit: the app answers oversized uploads first, with the JSON:API envelope.
BODY_LIMIT_SLACK = 1024 * 1024
# waitress reads sockets 8 KiB at a time by default, which caps uploads well below the disk's speed.
RECEIVE_CHUNK = 256 * 1024
MAX_HEADER_BYTES = 64 * 1024  # all request headers together; waitress refuses more with a 431
LOOP_TIMEOUT = 1.0  # seconds the event loop sleeps when idle; stop() wakes it sooner
GRACE_SECONDS = 10.0  # how long a stop waits for requests in flight
CLEANUP_INTERVAL = 1  # seconds between checks for idle connections and overdue headers
# Open files besides the connections: the listening socket and trigger, SQLite (database, WAL and
# shared memory per thread), uploads and buffers spilled to temporary files, OCR pipes, logs.
FILES_RESERVE = 64
FILES_PER_THREAD = 8
# How long a thread running Python holds the interpreter before a waiting one gets it (Python's
# default is 5 ms). Background work that computes in Python (a rule's dry run, a mail message
# parsed, rules matched) holds it in such slices, and a request thread waits for one at each of
# its steps: with three such threads busy, a probe's p99 was 169 ms at 5 ms and 36 ms at 1 ms,
# for a few per cent of those threads' own speed.
SWITCH_INTERVAL_SECONDS = 0.001

# The cyclic collector's youngest generation runs once this many more container objects have been
# made than freed (CPython's default: 700). A page of 100 nodes holds ~1,000 of them until its
# JSON is written, so at 700 nearly every such page paid a collection that walked them all and
# moved them to older generations (more full collections), only for them to be freed when the
# page was sent: 0.05-0.07 ms of a page's ~1.2 ms in-process. At 7,000, room for several pages
# built at once, a young collection comes every few hundred requests. Requests leave no
# reference cycles behind (tests/web/test_reference_cycles.py), so the higher threshold holds
# no request's memory longer.
YOUNG_GENERATION_THRESHOLD = 7_000

def listen_failure(error: Exception, config: Config) -> str:
    where = f"{config.host}:{config.port}"
    reasons = {errno.EADDRINUSE: "the port is in use (is dms already running? choose another "
                                 "port with --port)",
               errno.EACCES: "permission denied (ports below 1024 need privileges: use a port "
                             "from 1024 up, behind a reverse proxy)",
               errno.EADDRNOTAVAIL: "this machine has no such address (see --host)"}
    reason = reasons.get(getattr(error, "errno", None)) or \
        (getattr(error, "strerror", None) or str(error) or type(error).__name__)
    return f"cannot listen on {where}: {reason}"


def proxy_options(config: Config) -> dict:
    """waitress' trusted-proxy handling: only the configured proxy may set X-Forwarded-*;
    the headers are removed from everyone else's requests."""
    if not config.trusted_proxy:
        return {}
    return {"trusted_proxy": config.trusted_proxy, "clear_untrusted_proxy_headers": True,
            "trusted_proxy_headers": {"x-forwarded-for", "x-forwarded-host", "x-forwarded-proto",
                                      "x-forwarded-port"}}


class Server:
    """The app behind a bound waitress socket. `run()` blocks until `stop()` is called."""

    def __init__(self, config: Config):
        self.config = config
        self.app = create_app(config)
        self.runtime = self.app.runtime
        self.processor = self.runtime.processor
        wsgi_app = with_cors(self.app, config.cors_origins) if config.cors_origins else self.app
        workers = 0 if config.no_worker else config.ocr_workers
        # Each event stream holds a waitress thread for its life (dms.notify.streams): they get
        # threads of their own beyond `threads`, and at most that many streams are served.
        threads = config.threads + config.events_max_streams
        reserve = FILES_RESERVE + FILES_PER_THREAD * (threads + workers)
        try:
            self._wsgi = create_server(
                with_refusals_held(with_nosniff(wsgi_app)), host=config.host, port=config.port,
                threads=threads, served_at_once=config.threads,
                ident="dms", max_request_body_size=config.max_upload_bytes + BODY_LIMIT_SLACK,
                recv_bytes=RECEIVE_CHUNK, max_request_header_size=MAX_HEADER_BYTES,
                url_prefix=config.url_prefix,
                connection_limit=fit_connection_limit(config.connection_limit, reserve),
                header_timeout=config.header_timeout, channel_timeout=config.channel_timeout,
                cleanup_interval=CLEANUP_INTERVAL, upload_limit_mb=config.max_upload_mb,
                spool_dir=self.runtime.services.store.tmp_dir,
                # Keep reading a connection while its request is served (one request ahead), so that
                # waitress notices a client that left: only then does the callable
                # environ["waitress.client_disconnected"], which long searches poll to stop early,
                # ever return True (without lookahead it is there but always False).
                channel_request_lookahead=1,
                **proxy_options(config))
        except (OSError, ValueError) as error:  # ValueError: waitress found no such address
            raise CannotStart(listen_failure(error, config)) from None
        # Only once the socket is bound: a start that fails must not leave a first superuser
        # whose generated password nobody was shown. The CLI prints it once; nobody logs it.
        self.generated_password = ensure_first_superuser(config.admin_username,
                                                         config.admin_password)
        release_connection()  # start-up's connection, in whichever thread built the server
        # What waitress calls for each request (its proxy-header middleware included when
        # configured): the tests call it directly for API requests that need no socket.
        self.wsgi_app = self._wsgi.application
        self._stopping = threading.Event()
        self._trigger_lock = threading.RLock()  # re-entrant: stop() may run in a signal handler

    @property
    def port(self) -> int:
        return self._wsgi.effective_port

    @property
    def url(self) -> str:
        host = self._wsgi.effective_host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}{self.config.url_prefix}"

    def run(self) -> None:
        # The queue's workers and the search indexer start before the first request and stop
        # after the last one.
        self.runtime.start(index=True, read_pages=not self.config.no_worker, notify=True)
        release_connection()  # this thread now only drives the event loop
        where = f"data dir {self.config.data_dir.resolve()}"
        if self.config.database_url:
            where += f", database {describe_url(self.config.database_url)}"
        if self.config.storage == "s3":
            where += f", files in the bucket {self.config.s3_bucket}"
        elif self.config.files_dir is not None:
            where += f", files in {self.config.files_dir.resolve()}"
        if not self.config.embedded_queue:
            where += ", queue in Redis" + (", web only" if self.config.no_worker else "")
        log.info("dms listening on %s (%s)", self.url, where)
        wsgi, channels = self._wsgi, self._wsgi._map
        try:
            while not self._stopping.is_set():
                wasyncore.loop(timeout=LOOP_TIMEOUT, use_poll=True, map=channels, count=1)
            # Stop accepting, end the event streams (they would hold their threads for up to
            # an hour), but keep pumping the loop so requests in flight can finish and their
            # answers reach the client.
            wasyncore.dispatcher.close(wsgi)
            self.runtime.streams.stop()
            # The shared PDF readers stop too: a call waiting for one is refused, one in flight
            # ends now (a user's uploads in line behind a bomb held a stop for half a minute).
            self.runtime.pdf.stop()
            self.runtime.pdf.interrupt()
            deadline = time.monotonic() + GRACE_SECONDS
            while (wsgi.task_dispatcher.active_count or wsgi.task_dispatcher.queue) \
                    and time.monotonic() < deadline:
                wasyncore.loop(timeout=0.05, use_poll=True, map=channels, count=1)
            wsgi.task_dispatcher.shutdown(timeout=GRACE_SECONDS)
        finally:
            # Only now, with every worker thread gone, close the trigger and the connections:
            # closing them earlier races with workers that still write to them. The lock keeps
            # a stop() that is just pulling the trigger from writing to a closed pipe.
            with self._trigger_lock:
                wsgi.trigger.close()
            wasyncore.close_all(channels)
            self.runtime.stop()
            log.info("dms stopped")

    def stop(self) -> None:
        """Ask run() to finish; safe from any thread and from a signal handler."""
        with self._trigger_lock:
            if not self._stopping.is_set():
                self._stopping.set()
                self._wsgi.pull_trigger()  # wakes the loop at once instead of after LOOP_TIMEOUT


def say(text: str) -> None:
    """A line for the person who started dms, on its standard output at once: to a file or a pipe
    (a service's log, nohup) Python writes in blocks, and the first start's one-time password
    reached the file only when dms stopped (issue 44)."""
    print(text, flush=True)


def serve(config: Config, announce: Callable[[str], None] = say, command: str = "dms") -> int:
    """Serve until SIGTERM or Ctrl-C; returns the exit status (0 on a clean stop). `command` runs
    this dms from any shell (the first start's hint names it); a failure before serving raises
    CannotStart."""
    try:
        server = Server(config)
    except CannotStart:
        raise
    except Exception as error:
        reason = start_failure(error, config)
        if reason is None:
            raise
        raise CannotStart(reason) from None
    if server.generated_password is not None:
        where = f" --data-dir {config.data_dir.resolve()}"
        if config.database_url:
            where += " (with the same DMS_DATABASE_URL)"
        announce(
            f"First start: created the superuser {config.admin_username!r} with the password\n\n"
            f"    {server.generated_password}\n\n"
            "It is shown only this once. Change it with\n\n"
            f"    {command} changepassword {config.admin_username}{where}\n")
    announce(f"Log in as {config.admin_username!r} at {server.url}/ or get an API token with "
             f"POST {server.url}/api/auth/login/")

    def on_signal(signum, frame):
        log.info("received %s, stopping", signal.Signals(signum).name)
        server.stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    tune_interpreter()
    server.run()
    return 0


def tune_interpreter() -> None:
    """The interpreter's settings for serving, once start-up is done."""
    sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)
    # What start-up made (modules, routes, schemas: ~45,000 objects) lives as long as the
    # process. Out of the cyclic collector's reach, a full collection under load walks only what
    # requests made since: it holds the GIL, so every request waits for it (bench/load.py's mixed
    # load: 27-73 ms each, five in 90 s, before; 3.5-9 ms after).
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD, *gc.get_threshold()[1:])
