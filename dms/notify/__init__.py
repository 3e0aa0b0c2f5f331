"""Telling scripts what changed, instead of making them poll (docs/api.md, "Webhooks and the
event stream"): the event log (dms.db.events) as webhook bodies and stream events (dms.notify.feed),
its delivery to users' webhooks, durable and once per cluster (dms.notify.deliverer), and the live
event stream (dms.notify.streams). What leaves dms, as dms.intake is what comes in; the connections
go through the outbound rule (dms.files.outbound)."""
