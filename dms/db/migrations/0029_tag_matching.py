"""Tags that file themselves (api.md §8a, §17): as correspondents and document types do
(migration 0021), a tag has a `match` pattern, a `matching_algorithm` (`none` by default: never
put on by itself) and `is_insensitive`; a new document whose text the pattern finds gets the tag.
`is_inbox_tag`: every new document gets it (Paperless-ngx's inbox tags, which its apps show as
the inbox). Existing tags keep doing nothing by themselves."""

from peewee import PostgresqlDatabase


def up(migrator, db):
    postgresql = isinstance(db, PostgresqlDatabase)
    boolean, true, false = ("BOOLEAN", "TRUE", "FALSE") if postgresql else ("INTEGER", "1", "0")
    db.execute_sql("ALTER TABLE tag ADD COLUMN match TEXT NOT NULL DEFAULT ''")
    db.execute_sql("ALTER TABLE tag ADD COLUMN matching_algorithm TEXT NOT NULL DEFAULT 'none'")
    db.execute_sql(f"ALTER TABLE tag ADD COLUMN is_insensitive {boolean} NOT NULL DEFAULT {true}")
    db.execute_sql(f"ALTER TABLE tag ADD COLUMN is_inbox_tag {boolean} NOT NULL DEFAULT {false}")
