"""The event stream (api.md, "The event stream"): GET /events/, the caller's events as Server-Sent
Events (dms.notify.streams serves it)."""

from __future__ import annotations

import bottle

from dms.notify import feed
from dms.web.endpoints import Context
from dms.web.jsonapi import ApiError, RouteTable
from dms.web.openapi import Operation
from dms.web.openapi.webhooks import SSE_EVENT
from dms.web.turns import streaming

routes = RouteTable()

EVENT_STREAM = "text/event-stream"


def resume_after(ctx: Context) -> feed.Cursors | None:
    """Last-Event-ID (what an EventSource sends when it reconnects) or ?since=: resume after that
    place (an event's id, or the `id:` the stream sent, dms.notify.feed); None: from now on. One
    rule for both: the value is exactly such a place and nothing else; a space, a sign or a
    non-breaking space around it is refused, not trimmed.
    An empty value is no starting point (HTTP's own spaces around a header's value are not part
    of it: waitress drops them)."""
    for given, name in ((ctx.header("Last-Event-ID"), "Last-Event-ID"),
                        (ctx.query.get("since"), "since")):
        if not given:
            continue
        place = feed.parse_place(ctx.user.id, given)
        if place is None:
            raise ApiError(400, "invalid", f"{name} must be the id of an event (a whole number "
                                           "such as 1234) or the id: of the stream's last event.")
        return place
    return None


HEADERS = {"Content-Type": EVENT_STREAM, "Cache-Control": "no-store",
           # nginx would otherwise hold the events back in its buffer.
           "X-Accel-Buffering": "no"}


@routes.get("/events/", Operation(
    "The caller's events as they happen (Server-Sent Events; resumes after Last-Event-ID or "
    "?since=)", media={EVENT_STREAM: SSE_EVENT}, query=("since",), errors=(400, 429, 503)))
def event_stream(ctx: Context):
    after = resume_after(ctx)
    if ctx.environ.get("REQUEST_METHOD") == "HEAD":  # no stream: it would run its hour unseen
        return bottle.HTTPResponse(b"", 200, HEADERS)
    stream = ctx.runtime.streams.open(ctx.user, ctx.token.digest, after)
    streaming()  # its thread is one of those beyond DMS_THREADS
    return bottle.HTTPResponse(stream.chunks(ctx.client_gone), 200, dict(HEADERS))
