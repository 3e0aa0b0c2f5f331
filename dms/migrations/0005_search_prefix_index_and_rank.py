"""A faster search index: prefix indexes for 2-4 letter prefixes (every query word is matched as a
prefix) and the ranking stored as the index's own `rank`, so a query reads only the best rows'
snippets. The index is rebuilt from the nodes and the text of each document's latest version."""


def up(migrator, db):
    db.execute_sql("DROP TABLE search_index")
    db.execute_sql("""
        CREATE VIRTUAL TABLE search_index USING fts5(
            title, body, owner, tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3 4')""")
    # Title words weigh five times text words; the owner column never counts.
    db.execute_sql("INSERT INTO search_index (search_index, rank) VALUES ('rank', 'bm25(5.0, 1.0, 0.0)')")
    db.execute_sql("""
        INSERT INTO search_index (rowid, title, body, owner)
        SELECT node.seq, node.title,
               coalesce((SELECT group_concat(page.text, char(10) || char(10))
                         FROM (SELECT text FROM page WHERE page.version_id = (
                                   SELECT id FROM document_version
                                   WHERE document_id = node.id ORDER BY number DESC LIMIT 1)
                               ORDER BY number) AS page), ''),
               replace(node.owner_id, '-', '')
        FROM node""")
