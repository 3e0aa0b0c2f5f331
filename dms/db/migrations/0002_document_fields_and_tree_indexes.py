"""Documents' fields, a case-folded sort key for titles, and the indexes that keep listing a folder
flat as the tree grows.

The node table is rebuilt (SQLite cannot alter a foreign key) so that `parent_id` no longer
cascades: a cascade through a deep tree stops at SQLite's trigger-depth limit (1000 levels).
Subtrees are deleted in one statement instead, checked at its end."""


def up(migrator, db):
    db.execute_sql("""
        CREATE TABLE node_new (
            id         TEXT PRIMARY KEY NOT NULL,
            owner_id   TEXT NOT NULL REFERENCES user (id) ON DELETE CASCADE,
            parent_id  TEXT REFERENCES node (id),
            kind       TEXT NOT NULL CHECK (kind IN ('folder', 'document')),
            special    TEXT CHECK (special IN ('home', 'inbox')),
            title      TEXT NOT NULL,
            title_sort TEXT NOT NULL,
            lang       TEXT,
            ocr        INTEGER,
            ocr_status TEXT CHECK (ocr_status IN ('received', 'started', 'succeeded', 'failed')),
            ocr_error  TEXT,
            file_name  TEXT,
            size       INTEGER NOT NULL DEFAULT 0,
            page_count INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            CHECK ((special IS NULL) = (parent_id IS NOT NULL))
        )""")
    db.execute_sql("""
        INSERT INTO node_new (id, owner_id, parent_id, kind, special, title, title_sort, lang, ocr,
                              ocr_status, created_at, updated_at)
        SELECT id, owner_id, parent_id, kind, special, title, title,
               CASE kind WHEN 'document' THEN 'eng' END,
               CASE kind WHEN 'document' THEN 1 END,
               CASE kind WHEN 'document' THEN 'received' END,
               created_at, updated_at
        FROM node""")
    rows = db.execute_sql("SELECT id, title FROM node_new").fetchall()
    for node_id, title in rows:
        db.execute_sql("UPDATE node_new SET title_sort = ? WHERE id = ?",
                       (title.casefold(), node_id))
    db.execute_sql("DROP TABLE node")
    db.execute_sql("ALTER TABLE node_new RENAME TO node")
    db.execute_sql(
        "CREATE UNIQUE INDEX node_owner_special ON node (owner_id, special) "
        "WHERE special IS NOT NULL")
    # One index per order a folder can be listed in (api.md, "Listing a folder": folders first, then
    # by title).
    db.execute_sql("CREATE INDEX node_children ON node (parent_id, kind DESC, title_sort, id)")
    db.execute_sql("CREATE INDEX node_children_title ON node (parent_id, title_sort, id)")
    db.execute_sql("CREATE INDEX node_children_created ON node (parent_id, created_at, id)")
    db.execute_sql("CREATE INDEX node_children_updated ON node (parent_id, updated_at, id)")
    # The flat lists /folders/ and /documents/, and the owner's foreign key.
    db.execute_sql("CREATE INDEX node_owner_kind ON node (owner_id, kind, title_sort, id)")
