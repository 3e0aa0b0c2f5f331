"""Nested tags (api.md §8a, §17): a tag may sit under another tag of its owner's (`parent_id`),
as Paperless-ngx's tags do; dms.domain.tagtree keeps the rules (at most five levels, no loops,
a tag put on brings the tags above it). Deleting a tag makes its children top-level tags
(ON DELETE SET NULL). Existing tags stay top-level."""

from peewee import PostgresqlDatabase


def up(migrator, db):
    text = 'TEXT COLLATE "C"' if isinstance(db, PostgresqlDatabase) else "TEXT"
    db.execute_sql(f"ALTER TABLE tag ADD COLUMN parent_id {text} REFERENCES tag (id) "
                   "ON DELETE SET NULL")
    db.execute_sql("CREATE INDEX tag_parent ON tag (parent_id)")
