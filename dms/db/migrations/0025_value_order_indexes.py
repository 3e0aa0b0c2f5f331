"""Listings sorted by a custom field (`sort=cf_<id>`) at 100,000 documents (docs/performance.md):
a folder's, or all of a user's, live values of a number, date or amount in value order, so that a
page of the documents with a value is read from one index range instead of sorting every
document by a value looked up for each (dms.domain.listings.FieldSortListing). The same indexes
answer the general form of a custom field query that compares a value (`id IN (SELECT
document_id ... WHERE field_id = ? AND value_cents > ?)`) by a range.
"""

ORDERED = ("value_int", "value_float", "value_date", "value_cents")


def up(migrator, db):
    for column in ORDERED:
        db.execute_sql(f"CREATE INDEX custom_field_{column}_folder_order ON custom_field_value "
                       f"(field_id, parent_id, trash_id, {column}, document_id) "
                       f"WHERE {column} IS NOT NULL")
        db.execute_sql(f"CREATE INDEX custom_field_{column}_owner_order ON custom_field_value "
                       f"(field_id, trash_id, {column}, document_id) WHERE {column} IS NOT NULL")
