"""waitress, hardened: the HTTP server dms.web.server drives.

waitress' defaults let anyone stop the server without logging in: it stops accepting once
`connection_limit` (100) connections are open, and a connection that sends one header line per
second is never "inactive", so `channel_timeout` never closes it. Here:

- At the connection limit, the idle and slow connections are closed, oldest activity first, to
  make room for new clients; a connection whose request a worker is serving is never closed.
  Only when every connection has a request in flight does the server stop accepting (until one
  finishes), as waitress does. One warning per overload episode, one line when it is over.
- A connection that has started a request but not finished its headers within `header_timeout`
  seconds is closed, however busily it trickles bytes (slowloris).
- Idle keep-alive connections close after waitress' `channel_timeout`.
- waitress' own error answers (malformed request → 400, headers too large → 431, body too large
  → 413, a crash before the first byte → 500) are the JSON:API error envelope, not plain text.
- A chunked body's framing is checked line by line before waitress reads it: a size line over
  MAX_CHUNK_LINE, a trailer over the header limit, or a line ended by a bare LF is a prompt 400.
- A request body past waitress' `inbuf_overflow` is spooled once, into the data dir's tmp/, hashed
  on the way, for the store to adopt without a second copy (dms.files.spool); waitress would
  write it to a temporary file elsewhere, for dms to copy again.
- `with_nosniff` adds `X-Content-Type-Options: nosniff` to every answer of the application.
- At most `served_at_once` requests are served at once (event streams not counted), shared
  equally among the callers asking, and a user refused with a 429 waits its Retry-After in the
  queue, not in a thread (dms.web.turns).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser, ParsingError
from waitress.receiver import ChunkedReceiver
from waitress.server import TcpWSGIServer
from waitress.task import ErrorTask, ThreadedTaskDispatcher
from waitress.utilities import BadRequest, RequestEntityTooLarge, find_double_newline

from dms.files.spool import SpooledBody
from dms.web.jsonapi import VND, ApiError, encode
from dms.web.turns import TurnDispatcher

log = logging.getLogger("dms.httpserver")

# An overload episode is over once no connection had to be closed for this many seconds.
OVERLOAD_QUIET_SECONDS = 30.0
# The fewest connections served when the open-files limit is too small for the configured ones.
MIN_CONNECTIONS = 16
# Longest part of waitress' own reason quoted in a 400 (it may quote the client's header line).
MAX_REASON_CHARS = 200
MAX_CHUNK_LINE = 1024  # bytes of a chunk's size line (hex digits and extensions), CRLF not counted
CRLF = b"\r\n"


def with_nosniff(app: Callable) -> Callable:
    """WSGI middleware: `X-Content-Type-Options: nosniff` on every response that lacks it, so no
    browser ever guesses a download's or an error's type. The app's iterable is returned as it
    is (wsgi.file_wrapper keeps working)."""

    def nosniff_app(environ, start_response):
        def start(status, headers, exc_info=None):
            if not any(name.lower() == "x-content-type-options" for name, _ in headers):
                headers = list(headers) + [("X-Content-Type-Options", "nosniff")]
            return start_response(status, headers, exc_info)

        return app(environ, start)

    return nosniff_app


def fit_connection_limit(limit: int, reserve: int) -> int:
    """Raise the process' soft limit of open files (RLIMIT_NOFILE) towards its hard limit so that
    `limit` connections plus `reserve` other files (database, uploads, OCR pipes) fit. Returns
    the connection limit to use: `limit`, or less if the files do not fit (logged once)."""
    try:
        import resource
    except ImportError:  # not a POSIX system: nothing to raise, nothing to check
        return limit
    wanted = limit + reserve
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            log.debug("raised the limit of open files from %d to %d", soft, target)
            soft = target
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return limit
    fitted = max(MIN_CONNECTIONS, soft - reserve)
    log.warning("DMS_CONNECTION_LIMIT=%d does not fit this process' limit of %d open files "
                "(hard limit %s); serving at most %d connections", limit, soft,
                "unlimited" if hard == resource.RLIM_INFINITY else hard, fitted)
    return fitted


def error_envelope(error, adj: Adjustments, upload_limit_mb: int | None) -> ApiError:
    """waitress' error (waitress.utilities.Error: code, reason, body) as our ApiError."""
    status = error.code
    reason = str(error.body or error.reason).strip().rstrip(".")
    if len(reason) > MAX_REASON_CHARS:
        reason = reason[:MAX_REASON_CHARS] + "…"
    if status == 400:
        return ApiError(400, "parse_error", f"The request could not be understood: {reason}.")
    if status == 413:
        if upload_limit_mb is not None:
            return ApiError(413, "too_large", "The request body is larger than the maximum of "
                                              f"{upload_limit_mb} MiB.")
        return ApiError(413, "too_large", "The request body is too large.")
    if status == 431:
        return ApiError(431, "too_large", "The request headers are larger than "
                                          f"{adj.max_request_header_size // 1024} KiB.")
    if status == 501:
        return ApiError(501, "not_implemented", f"The request cannot be served: {reason}.")
    if status == 500:
        return ApiError(500, "server_error", "A server error occurred.")
    return ApiError(status, "invalid", f"{error.reason}.")


class JsonErrorTask(ErrorTask):
    """waitress' error answer as the JSON:API envelope, closing the connection after it."""

    def execute(self):
        error = self.request.error
        server = self.channel.server
        api_error = error_envelope(error, server.adj, getattr(server, "upload_limit_mb", None))
        body = encode(api_error.envelope())
        self.status = f"{error.code} {error.reason}"
        self.response_headers.extend([("Content-Type", VND),
                                      ("X-Content-Type-Options", "nosniff")])
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class DmsChunkedReceiver(ChunkedReceiver):
    """waitress' de-chunker, strict about the framing lines of a chunked body.

    waitress looks at a size line only once its CRLF has arrived, so a whole line of any length
    (a 5,000-byte extension) was served, and an LF without its CR ends no line for it, so a client
    ending its lines with bare LFs got no answer until channel_timeout. Its trailer grew without
    bound. Here each framing line is checked before waitress sees it, and waitress is given one
    step at a time (a chunk's data, the CRLF after it, a size line, the trailer): a size line
    longer than MAX_CHUNK_LINE, a trailer longer than `max_trailer`, or a bare LF is refused with
    a 400 at once."""

    def __init__(self, buf, max_trailer: int):
        super().__init__(buf)
        self.max_trailer = max_trailer

    def received(self, s):
        consumed, at = 0, 0  # an offset, not slices of `s`: one recv may hold many chunks
        while at < len(s) and not self.completed and self.error is None:
            step = self.next_step(s, at)
            if self.error is not None:
                self.all_chunks_received = True
                return consumed + len(s) - at
            consumed += super().received(s[at:at + step])
            at += step
        return consumed

    def next_step(self, s: bytes, at: int) -> int:
        """How many bytes of `s` from `at` waitress reads next; sets `error` where the framing
        is wrong."""
        if self.chunk_remainder > 0:  # a chunk's data
            return self.chunk_remainder
        if self.validate_chunk_end:  # the CRLF after a chunk's data
            pending = (self.chunk_end + s[at:at + 2])[:2]
            if b"\n" in pending and pending != CRLF:
                self.error = BadRequest("Chunked body line not ended by CRLF")
            elif not CRLF.startswith(pending):
                self.error = BadRequest("Chunk not properly terminated")
            return 2 - len(self.chunk_end)
        if not self.all_chunks_received:  # a size line: looked for within its longest
            room = MAX_CHUNK_LINE + 2 - len(self.control_line)
            end = s.find(b"\n", at, at + room)
            if end < 0:
                if len(s) - at >= room:
                    self.error = BadRequest(f"Chunk size line longer than {MAX_CHUNK_LINE} bytes")
                return len(s) - at
            before = s[end - 1:end] if end > at else self.control_line[-1:]
            if before != b"\r":
                self.error = BadRequest("Chunked body line not ended by CRLF")
            return end + 1 - at
        trailer = self.trailer + s[at:]  # header lines, then an empty line
        end = 2 if trailer.startswith(CRLF) else find_double_newline(trailer)
        framing = trailer if end < 0 else trailer[:end]  # what follows is the next request
        if framing.count(b"\n") != framing.count(CRLF):
            self.error = BadRequest("Chunked body line not ended by CRLF")
        elif len(framing) > self.max_trailer:
            self.error = BadRequest(f"Chunked trailer longer than {self.max_trailer} bytes")
        return len(s) - at


class DmsRequestParser(HTTPRequestParser):
    """waitress' request parser, stricter where a request could be read two ways:
    - `Content-Length` and `Transfer-Encoding: chunked` together are refused with 400 (the
      connection closes after the answer, as for every parse error): RFC 9112 §6.1 lets a server
      reject them and requires it to close the connection, since a proxy in front may have read
      the body by the other header (request smuggling);
    - a chunk larger than the body may be is refused once its size line arrives (413), instead
      of waiting for bytes that may never come;
    - a chunked body's framing lines are checked by DmsChunkedReceiver (400)."""

    def parse_header(self, header_plus):
        super().parse_header(header_plus)
        if self.chunked and "CONTENT_LENGTH" in self.headers:
            raise ParsingError("Content-Length and Transfer-Encoding must not be sent together")
        if self.chunked:
            self.body_rcv = DmsChunkedReceiver(self.body_rcv.buf,
                                               max_trailer=self.adj.max_request_header_size)
        spool_dir = getattr(self.adj, "spool_dir", None)
        if self.body_rcv is not None and spool_dir is not None:
            self.body_rcv.buf = SpooledBody(spool_dir, self.adj.inbuf_overflow)

    def received(self, data):
        consumed = super().received(data)
        body = self.body_rcv
        if self.chunked and body is not None and not self.completed \
                and self.body_bytes_received + body.chunk_remainder \
                >= self.adj.max_request_body_size:
            self.error = RequestEntityTooLarge("chunk larger than the body may be")
            self.completed = True
        return consumed


class DmsChannel(HTTPChannel):
    """One client connection; notes when the headers of its pending request started to arrive."""

    parser_class = DmsRequestParser
    error_task_class = JsonErrorTask
    # time.time() of the first byte of the request whose headers are still incomplete, or None
    headers_started: float | None = None
    _pending = None  # the parser (waitress' HTTPRequestParser) headers_started belongs to

    def handle_close(self):
        pending = self.request  # a request whose body was still arriving: its spool goes too
        if pending is not None:
            pending.close()
        super().handle_close()

    def received(self, data):
        result = super().received(data)
        pending = self.request  # the request still being received, None after a complete one
        if pending is None or pending.headers_finished or pending.completed:
            self.headers_started, self._pending = None, None
        elif pending is not self._pending:  # a new request's first bytes arrived just now
            self.headers_started, self._pending = time.time(), pending
        return result


class DmsServer(TcpWSGIServer):
    """waitress' TCP server with eviction at the connection limit and a header timeout."""

    channel_class = DmsChannel

    def __init__(self, application, *, adj: Adjustments, dispatcher: ThreadedTaskDispatcher,
                 header_timeout: float, upload_limit_mb: int | None = None, map=None):
        self.header_timeout = header_timeout
        self.upload_limit_mb = upload_limit_mb
        self.overload_since: float | None = None  # start of the current overload episode
        self.overload_last = 0.0  # when a connection last had to be closed to make room
        self.evicted = 0  # connections closed to make room in the current episode
        self.headroom = max(1, adj.connection_limit // 20)  # closed beyond the minimum, at once
        super().__init__(application, map=map, dispatcher=dispatcher, adj=adj,
                         sockinfo=adj.listen[0])

    def readable(self):
        now = time.time()
        if now >= self.next_channel_cleanup:
            self.next_channel_cleanup = now + self.adj.cleanup_interval
            self.maintenance(now)
        if not self.accepting:
            return False
        if len(self.active_channels) < self.adj.connection_limit:
            return True
        self.make_room(now)
        # Accept on the next turn of the loop, not in this one: the closed connections' numbers
        # are still registered with this turn's poll and a new connection may reuse one of them.
        return False

    def make_room(self, now: float) -> None:
        """Close the idle and slow connections that have been quiet longest, never one with a
        request in flight, until the limit leaves room for `headroom` new ones."""
        if self.overload_since is None:
            self.overload_since, self.overload_last, self.evicted = now, now, 0
            log.warning("%d connections open, the limit (DMS_CONNECTION_LIMIT): closing the idle "
                        "and slow ones to accept new clients", len(self.active_channels))
        excess = len(self.active_channels) - self.adj.connection_limit + self.headroom
        idle = sorted((channel for channel in self.active_channels.values()
                       if not channel.requests), key=lambda channel: channel.last_activity)
        victims = idle[:excess]
        for channel in victims:
            channel.handle_close()
        if victims:
            self.evicted += len(victims)
            self.overload_last = now
            self.pull_trigger()  # the next turn of the loop comes at once and accepts

    def maintenance(self, now: float) -> None:
        super().maintenance(now)  # idle connections: channel_timeout
        cutoff = now - self.header_timeout
        for channel in list(self.active_channels.values()):
            started = getattr(channel, "headers_started", None)
            if started is not None and started < cutoff and not channel.requests \
                    and not channel.will_close:
                # Closed by the event loop when it next looks at the channel (as waitress does
                # with idle ones): closing it here, inside the loop's poll set-up, is not safe.
                channel.will_close = True
                log.debug("closing %s: its request headers took longer than %s s",
                          channel.addr, self.header_timeout)
        if self.overload_since is not None and now - self.overload_last >= OVERLOAD_QUIET_SECONDS \
                and len(self.active_channels) < self.adj.connection_limit:
            log.info("connection overload over after %.0f s: %d idle or slow connections were "
                     "closed to make room", self.overload_last - self.overload_since,
                     self.evicted)
            self.overload_since = None


def create_server(application, *, header_timeout: float, upload_limit_mb: int | None = None,
                  spool_dir: Path | None = None, served_at_once: int | None = None,
                  **adjustments) -> DmsServer:
    """What waitress.create_server does for one listen address, with dms' server and channel
    classes; `adjustments` are waitress' settings (host, port, threads, connection_limit, ...).
    Large request bodies are spooled into `spool_dir` (the store's tmp/) when it is given. At most
    `served_at_once` requests (all `threads` if not given) are served at once, event streams
    not counted (dms.web.turns)."""
    adj = Adjustments(**adjustments)
    adj.spool_dir = spool_dir  # read by DmsRequestParser, which waitress builds with `adj` only
    if len(adj.listen) > 1:
        log.warning("%s has several addresses; listening on the first only",
                    adjustments.get("host"))
    dispatcher = TurnDispatcher(time.monotonic, served_at_once or adj.threads)
    dispatcher.set_thread_count(adj.threads)
    try:
        return DmsServer(application, adj=adj, dispatcher=dispatcher,
                         header_timeout=header_timeout, upload_limit_mb=upload_limit_mb, map={})
    except BaseException:
        dispatcher.shutdown(timeout=1)
        raise
