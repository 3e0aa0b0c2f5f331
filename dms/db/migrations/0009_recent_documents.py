"""GET /search/ without words lists the caller's most recently changed documents: an index in
that order, so it reads 100 rows of a million-document collection instead of sorting them all."""


def up(migrator, db):
    db.execute_sql("CREATE INDEX node_owner_recent ON node (owner_id, kind, updated_at, id)")
