"""E-mail attachments (docs/api.md, "Mail accounts").

- `mail_account`: a user's IMAP account; `password` is sealed (dms.files.sealing: AES-GCM with
  the key in the data dir, bound to the row's id), never stored or returned in clear.
  `checking_until` claims a check across nodes, so one account is read by one process at a time.
- `mail_import`: what was already taken from mail, per user: (Message-ID, attachment SHA-256),
  written in the transaction that adds the document, so a crash before the mailbox is told
  (seen, flagged, moved) imports nothing twice at the next check. `sha256` is '' for a message
  that held no attachment to take: it is not fetched again.
- `document_mail`: the message a document came from (subject, sender, date, Message-ID); its
  subject and sender are searchable with the tag names (the outbox on SQLite, the search_entry
  heading on PostgreSQL)."""

from peewee import PostgresqlDatabase


def up(migrator, db):
    postgresql = isinstance(db, PostgresqlDatabase)
    boolean = "BOOLEAN" if postgresql else "INTEGER"
    false, true = ("FALSE", "TRUE") if postgresql else ("0", "1")
    text = 'TEXT COLLATE "C"' if postgresql else "TEXT"
    db.execute_sql(f"""
        CREATE TABLE mail_account (
            id                {text} PRIMARY KEY NOT NULL,
            owner_id          {text} NOT NULL REFERENCES "user" (id) ON DELETE CASCADE,
            host              TEXT NOT NULL,
            port              INTEGER NOT NULL,
            security          TEXT NOT NULL,
            username          TEXT NOT NULL,
            password          TEXT NOT NULL,
            mailbox           TEXT NOT NULL,
            after_import      TEXT NOT NULL,
            move_to           TEXT,
            folder_per_sender {boolean} NOT NULL DEFAULT {false},
            enabled           {boolean} NOT NULL DEFAULT {true},
            last_checked_at   {text},
            last_error        TEXT,
            imported_count    INTEGER NOT NULL DEFAULT 0,
            checking_until    DOUBLE PRECISION,
            created_at        {text} NOT NULL
        )""")
    db.execute_sql("CREATE INDEX mail_account_owner ON mail_account (owner_id, created_at)")
    db.execute_sql(f"""
        CREATE TABLE mail_import (
            owner_id   {text} NOT NULL REFERENCES "user" (id) ON DELETE CASCADE,
            message_id TEXT NOT NULL,
            sha256     TEXT NOT NULL,
            PRIMARY KEY (owner_id, message_id, sha256)
        )""")
    db.execute_sql(f"""
        CREATE TABLE document_mail (
            document_id {text} PRIMARY KEY NOT NULL REFERENCES node (id) ON DELETE CASCADE,
            subject     TEXT NOT NULL,
            sender      TEXT NOT NULL,
            sent_at     {text},
            message_id  TEXT NOT NULL
        )""")
    if postgresql:
        _postgresql_search(db)
    else:
        db.execute_sql("""
            CREATE TRIGGER document_mail_outbox AFTER INSERT ON document_mail BEGIN
                INSERT INTO search_outbox (node_id) VALUES (new.document_id);
            END""")


def _postgresql_search(db):
    """The heading's second part (weight B) holds the tag names and now the message's subject
    and sender; a new document_mail row marks its document's heading stale."""
    db.execute_sql("""
        CREATE OR REPLACE FUNCTION dms_search_heading(target TEXT) RETURNS tsvector
        LANGUAGE sql STABLE AS $$
            SELECT dms_search_weighted(n.title, 'A')
                || dms_search_weighted(concat_ws(' ',
                       (SELECT string_agg(t.name, ' ') FROM node_tag AS nt
                        JOIN tag AS t ON t.id = nt.tag_id WHERE nt.node_id = n.id),
                       (SELECT m.subject || ' ' || m.sender FROM document_mail AS m
                        WHERE m.document_id = n.id)), 'B')
            FROM node AS n WHERE n.id = target
        $$""")
    db.execute_sql("""
        CREATE FUNCTION dms_search_mail_added() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE search_entry SET stale = stale | 1 WHERE node_id = NEW.document_id;
            RETURN NULL;
        END
        $$""")
    db.execute_sql("""
        CREATE TRIGGER document_mail_search AFTER INSERT ON document_mail
            FOR EACH ROW EXECUTE FUNCTION dms_search_mail_added()""")
