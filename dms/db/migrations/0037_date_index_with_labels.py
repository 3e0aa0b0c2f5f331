"""Names and dates without words at a million documents (docs/performance.md, issue 45): a
search such as `correspondent:"Sender 03" created:2019` is the list of all documents with those
conditions, and SQLite read it through `node_owner_document_date`, the year's range, visiting
the row of each of its ~83,000 entries to compare the correspondent (434 ms). With the
correspondent and the type as the index's last columns those comparisons are made on the index
entry (SQLite defers the row until a column the index lacks is needed): only the ~4,000
matching rows are visited (47 ms, the same data).

SQLite only: PostgreSQL can combine the label's and the date's indexes (a bitmap AND) and plans
by its statistics; its names-and-dates search is not measured at this scale yet."""

from peewee import PostgresqlDatabase

DOCUMENT_DATE = "coalesce(document_date, substr(created_at, 1, 10))"  # as dms.db.models says


def up(migrator, db):
    if isinstance(db, PostgresqlDatabase):
        return
    db.execute_sql("DROP INDEX node_owner_document_date")
    db.execute_sql(f"CREATE INDEX node_owner_document_date ON node (owner_id, kind, "
                   f"{DOCUMENT_DATE}, id, correspondent_id, document_type_id) "
                   "WHERE trash_id IS NULL")
