"""Document versions: each upload adds one; the file is stored under the version's id."""


def up(migrator, db):
    db.execute_sql("""
        CREATE TABLE document_version (
            id          TEXT PRIMARY KEY NOT NULL,
            document_id TEXT NOT NULL REFERENCES node (id) ON DELETE CASCADE,
            number      INTEGER NOT NULL,
            file_name   TEXT NOT NULL,
            mime_type   TEXT NOT NULL,
            size        INTEGER NOT NULL,
            page_count  INTEGER NOT NULL,
            sha256      TEXT NOT NULL,
            lang        TEXT NOT NULL,
            created_at  TEXT NOT NULL,
            UNIQUE (document_id, number)
        )""")
