"""PostgreSQL's statistics of the date on the paper (issue 47).

The query language's dates (`created:2019`, dms.domain.searchquery) compare
`coalesce(document_date, substr(created_at, 1, 10))`, which the index node_owner_document_date
(migration 0021) holds. That index is partial (`WHERE trash_id IS NULL`), and PostgreSQL keeps
no statistics of a partial index's expressions, so it guessed that any range of dates holds
0.5 % of the nodes: for a year no document has, it joined every body that holds the query's word
to its node to test the date (9.6 s at a million documents), and for a year every document has,
it would walk all the owner's dates. Statistics of the expression itself (PostgreSQL 14 and
newer; ANALYZE, and autovacuum's after it, keep them) let the planner tell which side is the
narrower: 8.8 ms and 48 ms (bench/RESULTS.md, 2026-12-02). SQLite has no such planner input.
"""

from peewee import PostgresqlDatabase


def up(migrator, db):
    if not isinstance(db, PostgresqlDatabase):
        return
    db.execute_sql("CREATE STATISTICS IF NOT EXISTS node_document_day "
                   "ON (coalesce(document_date, substr(created_at, 1, 10))) FROM node")
    db.execute_sql("ANALYZE node")
