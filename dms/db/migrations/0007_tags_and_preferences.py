"""Tags (api.md, "Tags") and each user's preferences (api.md, "Preferences").

A tag belongs to one user; its name is unique for that user regardless of case (`name_key`, the
name casefolded). `node_tag` links nodes and tags; deleting either (or the user) removes the
links. The search index holds each node's tag names, so the outbox (migration 0006) gets a row
for a node whose tags change, and for every node of a renamed tag (a deleted tag's links are
deleted one by one, which the link trigger sees).

`preference` keeps a user's own settings by identifier (`ocr__language`); a missing row means
the default."""


def up(migrator, db):
    db.execute_sql("""
        CREATE TABLE tag (
            id          TEXT PRIMARY KEY NOT NULL,
            owner_id    TEXT NOT NULL REFERENCES user (id) ON DELETE CASCADE,
            name        TEXT NOT NULL,
            name_key    TEXT NOT NULL,
            bg_color    TEXT NOT NULL DEFAULT '#c41fff',
            fg_color    TEXT NOT NULL DEFAULT '#FFFFFF',
            description TEXT NOT NULL DEFAULT '',
            pinned      INTEGER NOT NULL DEFAULT 0,
            created_at  TEXT NOT NULL,
            UNIQUE (owner_id, name_key)
        )""")
    db.execute_sql("""
        CREATE TABLE node_tag (
            node_id TEXT NOT NULL REFERENCES node (id) ON DELETE CASCADE,
            tag_id  TEXT NOT NULL REFERENCES tag (id) ON DELETE CASCADE,
            PRIMARY KEY (node_id, tag_id)
        ) WITHOUT ROWID""")
    db.execute_sql("CREATE INDEX node_tag_tag ON node_tag (tag_id, node_id)")
    db.execute_sql("""
        CREATE TRIGGER node_tag_outbox_insert AFTER INSERT ON node_tag BEGIN
            INSERT INTO search_outbox (node_id) VALUES (new.node_id);
        END""")
    db.execute_sql("""
        CREATE TRIGGER node_tag_outbox_delete AFTER DELETE ON node_tag BEGIN
            INSERT INTO search_outbox (node_id) VALUES (old.node_id);
        END""")
    db.execute_sql("""
        CREATE TRIGGER tag_outbox_rename AFTER UPDATE OF name ON tag BEGIN
            INSERT INTO search_outbox (node_id) SELECT node_id FROM node_tag WHERE tag_id = new.id;
        END""")
    db.execute_sql("""
        CREATE TABLE preference (
            user_id    TEXT NOT NULL REFERENCES user (id) ON DELETE CASCADE,
            identifier TEXT NOT NULL,
            value      TEXT NOT NULL,
            PRIMARY KEY (user_id, identifier)
        ) WITHOUT ROWID""")
