"""Webhooks and the event stream (docs/api.md, "Webhooks and the event stream").

- `event.node_kind`, `event.node_title`, `event.parent_id`: the node as the change left it, so
  that a webhook's body and the stream's data of an event are the same whenever they are made
  (NULL for events recorded before: they are read with the node as it is now).
- `webhook`: a user's URL, the event types it wants (a JSON list) and its secret (sealed with the
  data dir's key, dms.files.sealing, bound to the row: it must be read back to sign). How far
  delivery got is `last_event_id` (every event of the owner up to it was delivered, or given up);
  the event after it is being tried (`attempts`, `retry_since`, `next_attempt_at`). `lease_holder`
  and `lease_until` claim the webhook for one deliverer of the cluster at a time. The log itself
  stays the one source of what happened: this is only where delivery stands.
- `event_stream`: the open event streams (GET /events/), so that the cap per user holds across
  every node; each server process renews the expiry of its own and the rows of a process that
  died expire. Not backed up: it describes running processes.
"""

from peewee import PostgresqlDatabase


def up(migrator, db):
    postgresql = isinstance(db, PostgresqlDatabase)
    text = 'TEXT COLLATE "C"' if postgresql else "TEXT"
    boolean = "BOOLEAN" if postgresql else "INTEGER"
    true = "TRUE" if postgresql else "1"
    db.execute_sql("ALTER TABLE event ADD COLUMN node_kind TEXT")
    db.execute_sql("ALTER TABLE event ADD COLUMN node_title TEXT")
    db.execute_sql(f"ALTER TABLE event ADD COLUMN parent_id {text}")
    db.execute_sql(f"""
        CREATE TABLE webhook (
            id                {text} PRIMARY KEY NOT NULL,
            owner_id          {text} NOT NULL REFERENCES "user" (id) ON DELETE CASCADE,
            url               TEXT NOT NULL,
            events            TEXT NOT NULL,
            secret            TEXT NOT NULL,
            enabled           {boolean} NOT NULL DEFAULT {true},
            created_at        {text} NOT NULL,
            last_event_id     BIGINT NOT NULL,
            attempts          INTEGER NOT NULL DEFAULT 0,
            retry_since       DOUBLE PRECISION,
            next_attempt_at   DOUBLE PRECISION NOT NULL DEFAULT 0,
            lease_holder      TEXT,
            lease_until       DOUBLE PRECISION,
            last_delivery_at  {text},
            last_status       INTEGER,
            last_error        TEXT,
            failures_in_a_row INTEGER NOT NULL DEFAULT 0
        )""")
    db.execute_sql("CREATE INDEX webhook_owner ON webhook (owner_id, created_at)")
    db.execute_sql("CREATE INDEX webhook_due ON webhook (next_attempt_at)")
    db.execute_sql(f"""
        CREATE TABLE event_stream (
            id         {text} PRIMARY KEY NOT NULL,
            owner_id   {text} NOT NULL REFERENCES "user" (id) ON DELETE CASCADE,
            server_id  TEXT NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL
        )""")
    db.execute_sql("CREATE INDEX event_stream_owner ON event_stream (owner_id, expires_at)")
    db.execute_sql("CREATE INDEX event_stream_server ON event_stream (server_id)")
