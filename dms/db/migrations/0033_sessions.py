"""Sessions (api.md §22, "Sessions"): a token has a `kind` — `api` (made on the Tokens page,
by POST /tokens/, by the Paperless-ngx dialect's POST /api/token/, or by a script's login) or
`session` (the web page's login) — and `last_used`, when a session was last seen in use,
recorded at most once an hour (dms.domain.credentials.record_use), so that a session unused for
DMS_SESSION_IDLE_DAYS expires. Tokens already there are `api`: which of them were the page's
logins cannot be told, and a script's token must not start expiring."""

from peewee import PostgresqlDatabase


def up(migrator, db):
    text = 'TEXT COLLATE "C"' if isinstance(db, PostgresqlDatabase) else "TEXT"
    db.execute_sql(f"ALTER TABLE token ADD COLUMN kind {text} NOT NULL DEFAULT 'api'")
    db.execute_sql(f"ALTER TABLE token ADD COLUMN last_used {text}")
    # The expired sessions are found by their last use (removed at each login).
    db.execute_sql("CREATE INDEX token_kind_last_used ON token (kind, last_used)")
