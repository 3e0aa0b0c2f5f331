"""Object storage (api.md §19, dms.files.s3): an object is content-addressed and may be shared by
several versions, so it is removed only when no version names it — checked in the database, with
leases against the races: an `upload` lease keeps an object whose row is not written yet (taken
before the object is written, settled by the row's transaction), a `delete` lease marks one being
removed (an upload of the same bytes waits for it). The searchable PDFs' SHA-256 gets the index
the originals' has (0034): removals look objects up by both."""

from peewee import PostgresqlDatabase


def up(migrator, db):
    key = "BIGSERIAL PRIMARY KEY" if isinstance(db, PostgresqlDatabase) \
        else "INTEGER PRIMARY KEY AUTOINCREMENT"
    text = 'TEXT COLLATE "C"' if isinstance(db, PostgresqlDatabase) else "TEXT"
    db.execute_sql(f"CREATE TABLE blob_lease (id {key}, sha256 {text} NOT NULL, "
                   f"purpose {text} NOT NULL, created_at DOUBLE PRECISION NOT NULL)")
    db.execute_sql("CREATE INDEX blob_lease_sha256 ON blob_lease (sha256)")
    db.execute_sql("CREATE INDEX document_version_searchable_sha256 ON document_version "
                   "(searchable_sha256) WHERE searchable_sha256 IS NOT NULL")
