"""Users, API tokens, and the tree of nodes (folders and documents) with owner and parent."""


def up(migrator, db):
    db.execute_sql("""
        CREATE TABLE user (
            id            TEXT PRIMARY KEY NOT NULL,
            username      TEXT NOT NULL UNIQUE,
            password_hash TEXT,
            first_name    TEXT NOT NULL DEFAULT '',
            last_name     TEXT NOT NULL DEFAULT '',
            email         TEXT NOT NULL DEFAULT '',
            is_active     INTEGER NOT NULL DEFAULT 1,
            is_staff      INTEGER NOT NULL DEFAULT 0,
            is_superuser  INTEGER NOT NULL DEFAULT 0,
            date_joined   TEXT NOT NULL
        )""")
    db.execute_sql("""
        CREATE TABLE token (
            digest    TEXT PRIMARY KEY NOT NULL,
            token_key TEXT NOT NULL UNIQUE,
            user_id   TEXT NOT NULL REFERENCES user (id) ON DELETE CASCADE,
            name      TEXT NOT NULL DEFAULT '',
            created   TEXT NOT NULL,
            expiry    TEXT
        )""")
    db.execute_sql("CREATE INDEX token_user_created ON token (user_id, created)")
    db.execute_sql("""
        CREATE TABLE node (
            id         TEXT PRIMARY KEY NOT NULL,
            owner_id   TEXT NOT NULL REFERENCES user (id) ON DELETE CASCADE,
            parent_id  TEXT REFERENCES node (id) ON DELETE CASCADE,
            kind       TEXT NOT NULL CHECK (kind IN ('folder', 'document')),
            special    TEXT CHECK (special IN ('home', 'inbox')),
            title      TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )""")
    db.execute_sql("CREATE INDEX node_parent ON node (parent_id)")
    db.execute_sql(
        "CREATE UNIQUE INDEX node_owner_special ON node (owner_id, special) "
        "WHERE special IS NOT NULL")
