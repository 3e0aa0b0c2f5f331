"""Events and webhooks reach the people a node is shared with (api.md §21, §14).

One owner's events commit in the order of their ids; events of different owners do not. So what
follows the log for a user (their event stream, their webhooks) keeps one position per owner whose
events it reads: the user's own, and one for each owner who shares something with them.

- `node_grant.since`, `group_member.since`: an event id from which the grant (the membership) can
  have anything to show. A grant's is its owner's newest event just before it (read in the owner's
  write scope, so its own `access_granted` event and everything after come later); a
  membership's is the newest event of anyone when it began. A reader who meets an owner for the
  first time starts there. Rows from before this migration get the newest event id now: nothing
  older is sent again.
- `webhook_cursor`: a webhook's position in the events of one other owner (its own owner's stays
  `webhook.last_event_id`). Made when a grant or a membership begins and when the webhook is made
  or enabled again; removed with the webhook or the owner, and by the deliverer once that owner
  shares nothing with the webhook's owner any more.
"""

from peewee import PostgresqlDatabase


def up(migrator, db):
    text = 'TEXT COLLATE "C"' if isinstance(db, PostgresqlDatabase) else "TEXT"
    newest = db.execute_sql("SELECT coalesce(max(id), 0) FROM event").fetchone()[0]
    for table in ("node_grant", "group_member"):
        db.execute_sql(f"ALTER TABLE {table} ADD COLUMN since BIGINT NOT NULL DEFAULT 0")
        db.execute_sql(f"UPDATE {table} SET since = ?", (newest,))
    db.execute_sql(f"""
        CREATE TABLE webhook_cursor (
            webhook_id    {text} NOT NULL REFERENCES webhook (id) ON DELETE CASCADE,
            owner_id      {text} NOT NULL REFERENCES "user" (id) ON DELETE CASCADE,
            last_event_id BIGINT NOT NULL,
            PRIMARY KEY (webhook_id, owner_id)
        )""")
    db.execute_sql("CREATE INDEX webhook_cursor_owner ON webhook_cursor (owner_id)")
    # The webhooks of people something is shared with already follow its owner from now on.
    db.execute_sql("""
        INSERT INTO webhook_cursor (webhook_id, owner_id, last_event_id)
        SELECT DISTINCT w.id, n.owner_id, ? FROM webhook AS w
        JOIN node_grant AS g ON g.user_id = w.owner_id
            OR g.group_id IN (SELECT m.group_id FROM group_member AS m WHERE m.user_id = w.owner_id)
        JOIN node AS n ON n.id = g.node_id
        WHERE n.owner_id <> w.owner_id""", (newest,))
