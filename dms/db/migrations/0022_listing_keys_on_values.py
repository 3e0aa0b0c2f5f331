"""Listings filtered by custom fields and correspondents at 100,000 documents (docs/performance.md,
"Listings filtered by what documents are about").

- `custom_field_value` keeps a copy of its document's listing keys: `parent_id`, `title_sort` and
  `trash_id`. With them a custom field query is answered from the values alone, in the listing's
  own order: a folder's matching documents are the index range (field_id, parent_id, trash_id IS
  NULL) read by title, a user's (GET /documents/) the range (field_id, trash_id IS NULL), the
  value itself the index entry's last column; the AND of conditions is a merge of such ordered
  ranges. Before, each child of the folder was probed against the list of matching ids: 4-7x the
  unfiltered listing at 100,000 documents. The copy is kept by triggers, so that no writer has to
  know about it: a node's move, rename, trash or restore updates its values; a new value takes
  them from its node unless it brings them (a restore loads them as they were backed up, and
  dms.ops.backup recomputes them after). The indexes (field_id, <value column>, document_id) of
  0021 go: a query the new ones do not serve in order reads the field's values from them.
- The search marks of a value's update fire only for its value columns, not for the copy.
- `correspondent_id` and `document_type_id` (NULL as '') lead listing indexes of their own, so
  that `correspondent=none` and `correspondent=<id>` read a range in order instead of every child
  (dms.domain.metadata.filters compares `coalesce(correspondent_id, '')`).
"""

from peewee import PostgresqlDatabase

KEYS = ("parent_id", "title_sort", "trash_id")
VALUE_COLUMNS = ("value_text", "value_key", "value_int", "value_float", "value_date",
                 "value_bool", "value_cents", "value_currency")
# The columns a custom field query compares without reading the row (text is not indexed: a
# longtext value is past what a PostgreSQL index entry may hold).
INDEXED = ("value_bool", "value_int", "value_float", "value_date", "value_cents")
BACKFILL = """
    UPDATE custom_field_value SET (parent_id, title_sort, trash_id) =
        (SELECT parent_id, title_sort, trash_id FROM node
         WHERE node.id = custom_field_value.document_id)
"""


def up(migrator, db):
    postgresql = isinstance(db, PostgresqlDatabase)
    text = 'TEXT COLLATE "C"' if postgresql else "TEXT"
    for key in KEYS:  # typed as node's own (PostgreSQL: collation "C"), so both sort alike
        db.execute_sql(f"ALTER TABLE custom_field_value ADD COLUMN {key} {text}")
    # The triggers first: the copy below is no change of a value for search.
    if postgresql:
        _postgresql_triggers(db)
    else:
        _sqlite_triggers(db)
    db.execute_sql(BACKFILL)
    for column in INDEXED:  # these answer what the indexes of 0021 did, and more
        db.execute_sql(f"DROP INDEX custom_field_{column}")
        # A boolean is only ever compared for equality: its value first, then the title order,
        # reads just the matching entries; other values are compared in ranges too, so they
        # follow the title order, each entry checked.
        keys = f"{column}, title_sort, document_id" if column == "value_bool" else \
            f"title_sort, document_id, {column}"
        live, where = live_values(postgresql, column)
        db.execute_sql(f"CREATE INDEX custom_field_{column}_folder ON custom_field_value "
                       f"(field_id, parent_id, {live}{keys}) WHERE {where}")
        db.execute_sql(f"CREATE INDEX custom_field_{column}_owner ON custom_field_value "
                       f"(field_id, {live}{keys}) WHERE {where}")
    # Led by the label, so that no listing without that filter is drawn to them (one led by
    # parent_id made SQLite page an unfiltered folder through it, 30x slower); `none` is '', an
    # equality like any label's (SQLite rates `IS NULL` below a plain owner index).
    for name in ("correspondent", "document_type"):
        db.execute_sql(f"CREATE INDEX node_children_{name} ON node (coalesce({name}_id, ''), "
                       "parent_id, kind DESC, title_sort, id) WHERE trash_id IS NULL")
        db.execute_sql(f"CREATE INDEX node_owner_{name} ON node (coalesce({name}_id, ''), "
                       "owner_id, kind, title_sort, id) WHERE trash_id IS NULL")


def live_values(postgresql, column):
    """(the key column saying a value's document is live, or ""; the index's condition). Queries
    say `trash_id IS NULL`. SQLite takes it as an equality on a key column and then reads the
    index alone (as a term of a partial index's condition it reads each row again); PostgreSQL
    keeps a key column's order only after equalities, and `IS NULL` is none, so there it is the
    partial index's condition."""
    if postgresql:
        return "", f"{column} IS NOT NULL AND trash_id IS NULL"
    return "trash_id, ", f"{column} IS NOT NULL"


def _sqlite_triggers(db):
    changed = " OR ".join(f"old.{key} IS NOT new.{key}" for key in KEYS)
    db.execute_sql(f"""
        CREATE TRIGGER node_listing_keys AFTER UPDATE OF {', '.join(KEYS)} ON node
        WHEN {changed} BEGIN
            UPDATE custom_field_value SET parent_id = new.parent_id,
                title_sort = new.title_sort, trash_id = new.trash_id
            WHERE document_id = new.id;
        END""")
    db.execute_sql("""
        CREATE TRIGGER custom_field_value_listing_keys AFTER INSERT ON custom_field_value
        WHEN new.title_sort IS NULL BEGIN
            UPDATE custom_field_value SET (parent_id, title_sort, trash_id) =
                (SELECT parent_id, title_sort, trash_id FROM node WHERE id = new.document_id)
            WHERE document_id = new.document_id AND field_id = new.field_id;
        END""")
    db.execute_sql("DROP TRIGGER custom_field_value_update_outbox")
    db.execute_sql(f"""
        CREATE TRIGGER custom_field_value_update_outbox
        AFTER UPDATE OF {', '.join(VALUE_COLUMNS)} ON custom_field_value BEGIN
            INSERT INTO search_outbox (node_id) VALUES (new.document_id);
        END""")


def _postgresql_triggers(db):
    changed = " OR ".join(f"OLD.{key} IS DISTINCT FROM NEW.{key}" for key in KEYS)
    db.execute_sql("""
        CREATE FUNCTION dms_node_listing_keys() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE custom_field_value SET parent_id = NEW.parent_id,
                title_sort = NEW.title_sort, trash_id = NEW.trash_id
            WHERE document_id = NEW.id;
            RETURN NULL;
        END
        $$""")
    db.execute_sql(f"""
        CREATE TRIGGER node_listing_keys AFTER UPDATE OF {', '.join(KEYS)} ON node
            FOR EACH ROW WHEN ({changed}) EXECUTE FUNCTION dms_node_listing_keys()""")
    db.execute_sql("""
        CREATE FUNCTION dms_value_listing_keys() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            SELECT parent_id, title_sort, trash_id INTO NEW.parent_id, NEW.title_sort,
                NEW.trash_id FROM node WHERE id = NEW.document_id;
            RETURN NEW;
        END
        $$""")
    db.execute_sql("""
        CREATE TRIGGER custom_field_value_listing_keys BEFORE INSERT ON custom_field_value
            FOR EACH ROW WHEN (NEW.title_sort IS NULL)
            EXECUTE FUNCTION dms_value_listing_keys()""")
    db.execute_sql("DROP TRIGGER custom_field_value_update_search ON custom_field_value")
    db.execute_sql(f"""
        CREATE TRIGGER custom_field_value_update_search
        AFTER UPDATE OF {', '.join(VALUE_COLUMNS)} ON custom_field_value
            FOR EACH ROW EXECUTE FUNCTION dms_search_mark_custom_field_value_update()""")
