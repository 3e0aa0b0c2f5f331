"""The query language's fields in the tantivy index (api.md §20): a document moved to another
folder, or given another date on the paper or serial number, is written to the search outbox, as
a new title or correspondent already is (migrations 0006, 0021), so that `folder:`, `created:` and
`asn:` find it. The index itself is rebuilt at start-up: its format changed (dms.search.index).
PostgreSQL's search reads these columns from the node row at query time: nothing to mark there."""

from peewee import PostgresqlDatabase

MARKS = (
    ("node_parent", "parent_id"),
    ("node_document_date", "document_date"),
    ("node_asn", "asn"),
)


def up(migrator, db):
    if isinstance(db, PostgresqlDatabase):
        return
    for name, column in MARKS:
        db.execute_sql(f"""
            CREATE TRIGGER {name}_outbox AFTER UPDATE OF {column} ON node
            WHEN new.{column} IS NOT old.{column} BEGIN
                INSERT INTO search_outbox (node_id) VALUES (new.id);
            END""")
