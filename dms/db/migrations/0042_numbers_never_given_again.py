"""SQLite: a number of the Paperless-ngx dialect is never given again (api.md §17).

A document's number is its node's rowid (migration 0004), the other objects' one more than the
highest in their table (the triggers of migrations 0027 and 0031): both gave the number of the
row that had the highest one again once that row was deleted (a document purged from the trash,
a tag deleted) — and a client that kept it (an app's cached thumbnail, a script's list of ids)
then meant another object. PostgreSQL's identity columns never give a number twice; Paperless-ngx
(AUTOINCREMENT) neither.

`number_high` keeps, per table, the highest number a deleted row had, written only when the
deleted row held the table's highest number (an index lookup per deleted row). A new number is
one more than the highest in use or kept; a new node whose rowid is not (its rowid is chosen
before a trigger runs) is renumbered by its insert's trigger, in the same transaction. Like
`sqlite_sequence`, the table is SQLite's bookkeeping, not backed up: a restored database goes on
after the highest number it holds (dms.ops.backup).
"""

from peewee import PostgresqlDatabase

# Those numbered by a trigger (migrations 0027 and 0031); the node is numbered by its rowid.
NUMBERED = ("user", "user_group", "tag", "correspondent", "document_type", "custom_field", "note",
            "saved_search", "share_link")


def up(migrator, db):
    if isinstance(db, PostgresqlDatabase):
        return
    db.execute_sql("CREATE TABLE number_high (name TEXT PRIMARY KEY NOT NULL, "
                   "high INTEGER NOT NULL) WITHOUT ROWID")
    for table in (*NUMBERED, "node"):
        db.execute_sql(f"""
            CREATE TRIGGER {table}_seq_kept AFTER DELETE ON "{table}"
            WHEN old.seq > coalesce((SELECT max(seq) FROM "{table}"), 0)
            BEGIN
                INSERT INTO number_high (name, high) VALUES ('{table}', old.seq)
                ON CONFLICT (name) DO UPDATE SET high = max(high, excluded.high);
            END""")
    for table in NUMBERED:
        db.execute_sql(f"DROP TRIGGER {table}_seq")
        db.execute_sql(f"""
            CREATE TRIGGER {table}_seq AFTER INSERT ON "{table}" WHEN new.seq IS NULL
            BEGIN
                UPDATE "{table}" SET seq = max(
                    (SELECT coalesce(max(seq), 0) FROM "{table}"),
                    coalesce((SELECT high FROM number_high WHERE name = '{table}'), 0)) + 1
                WHERE rowid = new.rowid;
            END""")
    db.execute_sql("""
        CREATE TRIGGER node_seq AFTER INSERT ON node
        WHEN new.seq <= (SELECT high FROM number_high WHERE name = 'node')
        BEGIN
            UPDATE node SET seq = (SELECT high FROM number_high WHERE name = 'node') + 1
            WHERE seq = new.seq;
        END""")
