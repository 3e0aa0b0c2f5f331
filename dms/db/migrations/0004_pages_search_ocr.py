"""Pages of versions, OCR attempts, and the full-text index (SQLite FTS5) kept in step with the
node table by triggers.

The node table is rebuilt once more to get an INTEGER PRIMARY KEY (`seq`): the FTS rows are keyed
by it, and unlike SQLite's implicit rowid it survives VACUUM unchanged. `id` stays the public,
unique key every foreign key refers to."""

import uuid

NODE_COLUMNS = ("id, owner_id, parent_id, kind, special, title, title_sort, lang, ocr, ocr_status, "
                "ocr_error, file_name, size, page_count, created_at, updated_at")


def up(migrator, db):
    db.execute_sql("""
        CREATE TABLE node_new (
            seq          INTEGER PRIMARY KEY,
            id           TEXT NOT NULL UNIQUE,
            owner_id     TEXT NOT NULL REFERENCES user (id) ON DELETE CASCADE,
            parent_id    TEXT REFERENCES node (id),
            kind         TEXT NOT NULL CHECK (kind IN ('folder', 'document')),
            special      TEXT CHECK (special IN ('home', 'inbox')),
            title        TEXT NOT NULL,
            title_sort   TEXT NOT NULL,
            lang         TEXT,
            ocr          INTEGER,
            ocr_status   TEXT CHECK (ocr_status IN ('received', 'started', 'succeeded', 'failed')),
            ocr_error    TEXT,
            ocr_attempts INTEGER NOT NULL DEFAULT 0,
            file_name    TEXT,
            size         INTEGER NOT NULL DEFAULT 0,
            page_count   INTEGER NOT NULL DEFAULT 0,
            created_at   TEXT NOT NULL,
            updated_at   TEXT NOT NULL,
            CHECK ((special IS NULL) = (parent_id IS NOT NULL))
        )""")
    db.execute_sql(f"INSERT INTO node_new ({NODE_COLUMNS}) SELECT {NODE_COLUMNS} FROM node")
    db.execute_sql("DROP TABLE node")
    db.execute_sql("ALTER TABLE node_new RENAME TO node")
    for statement in (
            "CREATE UNIQUE INDEX node_owner_special ON node (owner_id, special) "
            "WHERE special IS NOT NULL",
            "CREATE INDEX node_children ON node (parent_id, kind DESC, title_sort, id)",
            "CREATE INDEX node_children_title ON node (parent_id, title_sort, id)",
            "CREATE INDEX node_children_created ON node (parent_id, created_at, id)",
            "CREATE INDEX node_children_updated ON node (parent_id, updated_at, id)",
            "CREATE INDEX node_owner_kind ON node (owner_id, kind, title_sort, id)",
            # Documents waiting for OCR, found by reconcile() at start-up and periodically.
            "CREATE INDEX node_ocr_pending ON node (ocr_status) "
            "WHERE ocr_status IN ('received', 'started')"):
        db.execute_sql(statement)

    db.execute_sql("""
        CREATE TABLE page (
            id         TEXT PRIMARY KEY NOT NULL,
            version_id TEXT NOT NULL REFERENCES document_version (id) ON DELETE CASCADE,
            number     INTEGER NOT NULL,
            text       TEXT NOT NULL DEFAULT '',
            -- how the text was read: NULL (not yet), 'text' (plain file), 'layer' (the PDF's
            -- own text), 'ocr' (Tesseract), 'skipped' (needs OCR but the document says ocr=false)
            method     TEXT,
            UNIQUE (version_id, number)
        )""")
    db.execute_sql("CREATE INDEX document_version_document "
                   "ON document_version (document_id, number)")

    # Titles and text, accent- and case-insensitive. `owner` holds the owner's id without dashes
    # (one token), so a search filters by owner inside the index instead of after it.
    db.execute_sql("""
        CREATE VIRTUAL TABLE search_index USING fts5(
            title, body, owner, tokenize = 'unicode61 remove_diacritics 2')""")
    db.execute_sql("""
        CREATE TRIGGER node_search_insert AFTER INSERT ON node BEGIN
            INSERT INTO search_index (rowid, title, body, owner)
            VALUES (new.seq, new.title, '', replace(new.owner_id, '-', ''));
        END""")
    db.execute_sql("""
        CREATE TRIGGER node_search_title AFTER UPDATE OF title ON node BEGIN
            UPDATE search_index SET title = new.title WHERE rowid = new.seq;
        END""")
    db.execute_sql("""
        CREATE TRIGGER node_search_delete AFTER DELETE ON node BEGIN
            DELETE FROM search_index WHERE rowid = old.seq;
        END""")
    db.execute_sql("INSERT INTO search_index (rowid, title, body, owner) "
                   "SELECT seq, title, '', replace(owner_id, '-', '') FROM node")
    # Versions uploaded before this schema get their page rows (text comes from re-running OCR).
    versions = db.execute_sql("SELECT id, page_count FROM document_version").fetchall()
    for version_id, page_count in versions:
        for number in range(1, page_count + 1):
            db.execute_sql("INSERT INTO page (id, version_id, number) VALUES (?, ?, ?)",
                           (str(uuid.uuid4()), version_id, number))
