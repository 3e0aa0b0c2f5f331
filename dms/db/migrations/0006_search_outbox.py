"""Search moves out of SQLite into an embedded tantivy index; the database keeps an outbox of the
nodes whose indexed state changed.

Dropped: the FTS5 table `search_index` (a second copy of every text, about two thirds of dms.db)
and its triggers. Added: `search_outbox`, one row per change that search must see, written by
triggers in the same transaction as the change itself — a node created, renamed or deleted
(cascades from a deleted user included), a document whose text was set (its status becomes
`succeeded` or `failed`). The indexer applies the rows to the index and deletes them only after
the index committed, so the two never drift; a row whose node_id is '*' asks for a full rebuild.
Moves change nothing the index holds. A data dir upgraded here has no index yet: the server
builds it at start-up. The freed pages are returned to the file system by a VACUUM that
dms.db runs right after this migration.
"""


def up(migrator, db):
    for trigger in ("node_search_insert", "node_search_title", "node_search_delete"):
        db.execute_sql(f"DROP TRIGGER IF EXISTS {trigger}")
    db.execute_sql("DROP TABLE IF EXISTS search_index")
    db.execute_sql("""
        CREATE TABLE search_outbox (
            seq     INTEGER PRIMARY KEY AUTOINCREMENT,
            node_id TEXT NOT NULL
        )""")
    db.execute_sql("""
        CREATE TRIGGER node_outbox_insert AFTER INSERT ON node BEGIN
            INSERT INTO search_outbox (node_id) VALUES (new.id);
        END""")
    db.execute_sql("""
        CREATE TRIGGER node_outbox_title AFTER UPDATE OF title ON node BEGIN
            INSERT INTO search_outbox (node_id) VALUES (new.id);
        END""")
    db.execute_sql("""
        CREATE TRIGGER node_outbox_text AFTER UPDATE OF ocr_status ON node
        WHEN new.ocr_status IN ('succeeded', 'failed') BEGIN
            INSERT INTO search_outbox (node_id) VALUES (new.id);
        END""")
    db.execute_sql("""
        CREATE TRIGGER node_outbox_delete AFTER DELETE ON node BEGIN
            INSERT INTO search_outbox (node_id) VALUES (old.id);
        END""")
