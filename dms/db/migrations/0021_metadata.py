"""What a document is about (docs/api.md §16): correspondents, document types, custom fields,
notes and archive serial numbers.

- `correspondent`, `document_type`: a user's names (unique per user by `name_key`, as tags are)
  with Paperless-ngx's automatic matching (`match`, `matching_algorithm`, `is_insensitive`).
- `node.correspondent_id`, `node.document_type_id`: deleting one clears it from its documents
  (ON DELETE SET NULL; the domain writes their events first). `node.document_date`: the date
  printed on the paper (`YYYY-MM-DD`), read from the text or set; NULL means "the upload date",
  the date of `created_at`, so that no insert anywhere has to know about it (DOCUMENT_DATE is the
  one expression reading it). `node.asn`: the archive serial number, unique per owner, trash
  included (a restore never meets a duplicate).
- `custom_field`: a user's typed field (`data_type` fixed once created, `extra_data` JSON: the
  default currency, the options of a select field).
- `custom_field_value`: one row per field a document carries, the value in the column of its type
  (text: string, longtext, url and a select's option id; int; float; date as `YYYY-MM-DD`; bool;
  monetary as `value_cents` and `value_currency`, '' for a bare amount), NULL for a field
  attached without a value. `value_key` is the casefolded text of string, longtext, url and
  monetary values: `icontains` and friends compare it, the same on both engines.
- `custom_field_link`: a documentlink field's targets, in order (`position`); kept both ways by the
  domain. Rows whose document or target is in the trash stay (a restore brings them back) but are
  never shown.
- `note`: notes on a document, by a user, newest first.
- `rule.set_metadata`: JSON, what a rule sets of a document's metadata (a correspondent, a type,
  one custom field's value, the date read from the text); `{}` for rules that set none.

Search: correspondent and type names, the text values of custom fields (string, longtext, url, a
select's label) and notes join the heading's second part; every change of them marks the document
(SQLite: the outbox; PostgreSQL: the entry's heading stale)."""

from peewee import PostgresqlDatabase

# The heading's extra words are cut at this many characters (a tsvector holds at most 1 MiB).
SEARCH_EXTRA_CHARS = 100_000


def up(migrator, db):
    postgresql = isinstance(db, PostgresqlDatabase)
    text = 'TEXT COLLATE "C"' if postgresql else "TEXT"
    boolean = "BOOLEAN" if postgresql else "INTEGER"
    real = "DOUBLE PRECISION" if postgresql else "REAL"
    true = "TRUE" if postgresql else "1"
    for table in ("correspondent", "document_type"):
        db.execute_sql(f"""
            CREATE TABLE {table} (
                id                 {text} PRIMARY KEY NOT NULL,
                owner_id           {text} NOT NULL REFERENCES "user" (id) ON DELETE CASCADE,
                name               TEXT NOT NULL,
                name_key           {text} NOT NULL,
                match              TEXT NOT NULL DEFAULT '',
                matching_algorithm TEXT NOT NULL DEFAULT 'none',
                is_insensitive     {boolean} NOT NULL DEFAULT {true},
                created_at         {text} NOT NULL
            )""")
        db.execute_sql(f"CREATE UNIQUE INDEX {table}_owner_name ON {table} (owner_id, name_key)")
        db.execute_sql(f"ALTER TABLE node ADD COLUMN {table}_id {text} "
                       f"REFERENCES {table} (id) ON DELETE SET NULL")
        db.execute_sql(f"CREATE INDEX node_{table} ON node ({table}_id, id) "
                       f"WHERE {table}_id IS NOT NULL")
    db.execute_sql(f"ALTER TABLE node ADD COLUMN document_date {text}")
    db.execute_sql("ALTER TABLE node ADD COLUMN asn BIGINT")
    db.execute_sql("CREATE UNIQUE INDEX node_owner_asn ON node (owner_id, asn) "
                   "WHERE asn IS NOT NULL")
    # Listings sorted by the date on the paper: a folder's, and all of a user's documents.
    db.execute_sql("CREATE INDEX node_children_document_date ON node (parent_id, "
                   "coalesce(document_date, substr(created_at, 1, 10)), id) "
                   "WHERE trash_id IS NULL")
    db.execute_sql("CREATE INDEX node_owner_document_date ON node (owner_id, kind, "
                   "coalesce(document_date, substr(created_at, 1, 10)), id) "
                   "WHERE trash_id IS NULL")
    db.execute_sql(f"""
        CREATE TABLE custom_field (
            id         {text} PRIMARY KEY NOT NULL,
            owner_id   {text} NOT NULL REFERENCES "user" (id) ON DELETE CASCADE,
            name       TEXT NOT NULL,
            name_key   {text} NOT NULL,
            data_type  TEXT NOT NULL,
            extra_data TEXT NOT NULL DEFAULT '{{}}',
            created_at {text} NOT NULL
        )""")
    db.execute_sql("CREATE UNIQUE INDEX custom_field_owner_name ON custom_field "
                   "(owner_id, name_key)")
    db.execute_sql(f"""
        CREATE TABLE custom_field_value (
            document_id    {text} NOT NULL REFERENCES node (id) ON DELETE CASCADE,
            field_id       {text} NOT NULL REFERENCES custom_field (id) ON DELETE CASCADE,
            value_text     TEXT,
            value_key      {text},
            value_int      BIGINT,
            value_float    {real},
            value_date     {text},
            value_bool     {boolean},
            value_cents    BIGINT,
            value_currency {text},
            PRIMARY KEY (document_id, field_id)
        )""")
    # A custom field query reads the documents with a value of one field in a range. Not text:
    # a longtext value (64 KiB) is past what a PostgreSQL index entry may hold (2,704 bytes), and
    # `icontains` cannot use an index anyway.
    for column in ("value_bool", "value_int", "value_float", "value_date", "value_cents"):
        db.execute_sql(f"CREATE INDEX custom_field_{column} ON custom_field_value "
                       f"(field_id, {column}, document_id)")
    db.execute_sql(f"""
        CREATE TABLE custom_field_link (
            field_id    {text} NOT NULL REFERENCES custom_field (id) ON DELETE CASCADE,
            document_id {text} NOT NULL REFERENCES node (id) ON DELETE CASCADE,
            target_id   {text} NOT NULL REFERENCES node (id) ON DELETE CASCADE,
            position    INTEGER NOT NULL,
            PRIMARY KEY (field_id, document_id, target_id)
        )""")
    # A document's links, read by document; and the foreign keys' checks when a node is
    # deleted for good look up both ends.
    db.execute_sql("CREATE INDEX custom_field_link_document ON custom_field_link "
                   "(document_id, field_id, position)")
    db.execute_sql("CREATE INDEX custom_field_link_target ON custom_field_link "
                   "(target_id, field_id)")
    db.execute_sql(f"""
        CREATE TABLE note (
            id          {text} PRIMARY KEY NOT NULL,
            document_id {text} NOT NULL REFERENCES node (id) ON DELETE CASCADE,
            user_id     {text} REFERENCES "user" (id) ON DELETE SET NULL,
            note        TEXT NOT NULL,
            created_at  {text} NOT NULL
        )""")
    db.execute_sql("CREATE INDEX note_document ON note (document_id, created_at)")
    db.execute_sql("ALTER TABLE rule ADD COLUMN set_metadata TEXT NOT NULL DEFAULT '{}'")
    if postgresql:
        _postgresql_search(db)
    else:
        _sqlite_outbox(db)


# What marks a document for search: (trigger name, table, event, the node id expression).
MARKS = (
    ("node_correspondent", "node", "UPDATE OF correspondent_id", "new.id"),
    ("node_document_type", "node", "UPDATE OF document_type_id", "new.id"),
    ("custom_field_value_insert", "custom_field_value", "INSERT", "new.document_id"),
    ("custom_field_value_update", "custom_field_value", "UPDATE", "new.document_id"),
    ("custom_field_value_delete", "custom_field_value", "DELETE", "old.document_id"),
    ("note_insert", "note", "INSERT", "new.document_id"),
    ("note_delete", "note", "DELETE", "old.document_id"),
)
# A renamed correspondent, type or select option: every document carrying it.
RENAMES = (
    ("correspondent_rename", "correspondent", "UPDATE OF name",
     "SELECT id FROM node WHERE correspondent_id = new.id"),
    ("document_type_rename", "document_type", "UPDATE OF name",
     "SELECT id FROM node WHERE document_type_id = new.id"),
    ("custom_field_options", "custom_field", "UPDATE OF extra_data",
     "SELECT document_id FROM custom_field_value WHERE field_id = new.id"),
)


def _sqlite_outbox(db):
    for name, table, event, node_id in MARKS:
        db.execute_sql(f"""
            CREATE TRIGGER {name}_outbox AFTER {event} ON {table} BEGIN
                INSERT INTO search_outbox (node_id) VALUES ({node_id});
            END""")
    for name, table, event, node_ids in RENAMES:
        db.execute_sql(f"""
            CREATE TRIGGER {name}_outbox AFTER {event} ON {table} BEGIN
                INSERT INTO search_outbox (node_id) {node_ids};
            END""")


def _postgresql_search(db):
    """The heading's second part (weight B) gains the document's metadata words, cut at
    SEARCH_EXTRA_CHARS; each change marks the heading stale (bit 1)."""
    db.execute_sql(METADATA_WORDS)
    db.execute_sql(f"""
        CREATE OR REPLACE FUNCTION dms_search_heading(target TEXT) RETURNS tsvector
        LANGUAGE sql STABLE AS $$
            SELECT dms_search_weighted(n.title, 'A')
                || dms_search_weighted(concat_ws(' ',
                       (SELECT string_agg(t.name, ' ') FROM node_tag AS nt
                        JOIN tag AS t ON t.id = nt.tag_id WHERE nt.node_id = n.id),
                       (SELECT m.subject || ' ' || m.sender FROM document_mail AS m
                        WHERE m.document_id = n.id),
                       left(dms_search_metadata(n.id), {SEARCH_EXTRA_CHARS})), 'B')
            FROM node AS n WHERE n.id = target
        $$""")
    for name, table, event, node_id in MARKS:
        row = "OLD" if node_id.startswith("old.") else "NEW"
        column = node_id.split(".", 1)[1]
        db.execute_sql(f"""
            CREATE FUNCTION dms_search_mark_{name}() RETURNS trigger
            LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE search_entry SET stale = stale | 1 WHERE node_id = {row}.{column};
                RETURN NULL;
            END
            $$""")
        db.execute_sql(f"""
            CREATE TRIGGER {name}_search AFTER {event} ON {table}
                FOR EACH ROW EXECUTE FUNCTION dms_search_mark_{name}()""")
    for name, table, event, node_ids in RENAMES:
        db.execute_sql(f"""
            CREATE FUNCTION dms_search_mark_{name}() RETURNS trigger
            LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE search_entry SET stale = stale | 1 WHERE node_id IN ({node_ids});
                RETURN NULL;
            END
            $$""")
        db.execute_sql(f"""
            CREATE TRIGGER {name}_search AFTER {event} ON {table}
                FOR EACH ROW EXECUTE FUNCTION dms_search_mark_{name}()""")


METADATA_WORDS = """
    CREATE FUNCTION dms_search_metadata(target TEXT) RETURNS TEXT
    LANGUAGE sql STABLE AS $$
        SELECT concat_ws(' ',
            (SELECT c.name FROM node AS n JOIN correspondent AS c ON c.id = n.correspondent_id
             WHERE n.id = target),
            (SELECT d.name FROM node AS n JOIN document_type AS d ON d.id = n.document_type_id
             WHERE n.id = target),
            (SELECT string_agg(CASE WHEN f.data_type = 'select'
                                    THEN (SELECT o ->> 'label' FROM jsonb_array_elements(
                                              f.extra_data::jsonb -> 'select_options') AS o
                                          WHERE o ->> 'id' = v.value_text LIMIT 1)
                                    ELSE v.value_text END, ' ' ORDER BY f.name_key)
             FROM custom_field_value AS v JOIN custom_field AS f ON f.id = v.field_id
             WHERE v.document_id = target
               AND f.data_type IN ('string', 'longtext', 'url', 'select')),
            (SELECT string_agg(note, ' ' ORDER BY created_at DESC, id) FROM note
             WHERE document_id = target))
    $$"""
