"""Listings sorted by a custom field (`sort=cf_<id>`) at 100,000 documents (docs/performance.md):
a folder's, or all of a user's, live values of a number, date or amount in value order, so that a
page of the documents with a value is read from one index range instead of sorting every
document by a value looked up for each (dms.domain.listings.FieldSortListing). The same indexes
answer the general form of a custom field query that compares a value (`id IN (SELECT
document_id ... WHERE field_id = ? AND value_cents > ?)`) by a range.
"""

from peewee import PostgresqlDatabase

ORDERED = ("value_int", "value_float", "value_date", "value_cents")


def up(migrator, db):
    postgresql = isinstance(db, PostgresqlDatabase)
    for column in ORDERED:
        # As 0022's: on SQLite `trash_id` is a key column, on PostgreSQL the index's condition.
        live, where = ("", f"{column} IS NOT NULL AND trash_id IS NULL") if postgresql else \
            ("trash_id, ", f"{column} IS NOT NULL")
        db.execute_sql(f"CREATE INDEX custom_field_{column}_folder_order ON custom_field_value "
                       f"(field_id, parent_id, {live}{column}, document_id) WHERE {where}")
        db.execute_sql(f"CREATE INDEX custom_field_{column}_owner_order ON custom_field_value "
                       f"(field_id, {live}{column}, document_id) WHERE {where}")
