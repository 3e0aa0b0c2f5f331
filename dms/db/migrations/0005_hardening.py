"""Hardening: usernames unique regardless of case, a per-document processing-time budget, and an
index for the OCR queue's fairness across users.

`user.username_key` is the username casefolded (NFKC first), so `ADMIN` and `admin` cannot both
exist. Data dirs that already hold such a pair keep both accounts (renaming someone's login
silently would lock them out): the clashes are logged here and reported by `dms verify`, the
index is then not unique, and dms itself refuses new clashes inside its write transaction."""

import logging
import unicodedata

log = logging.getLogger("dms.migrations")


def username_key(username):
    return unicodedata.normalize("NFKC", username).casefold()


def up(migrator, db):
    db.execute_sql("ALTER TABLE user ADD COLUMN username_key TEXT NOT NULL DEFAULT ''")
    users = db.execute_sql("SELECT id, username FROM user").fetchall()
    seen = {}
    clashes = []
    for user_id, username in users:
        key = username_key(username)
        db.execute_sql("UPDATE user SET username_key = ? WHERE id = ?", (key, user_id))
        if key in seen:
            clashes.append((seen[key], username))
        seen.setdefault(key, username)
    if clashes:
        for first, second in clashes:
            log.warning("usernames %r and %r differ only by case; rename one of them "
                        "(PATCH /users/{id}/) so that logins stay unambiguous", first, second)
        db.execute_sql("CREATE INDEX user_username_key ON user (username_key)")
    else:
        db.execute_sql("CREATE UNIQUE INDEX user_username_key ON user (username_key)")

    # Seconds of processing spent on the latest version: a document over its budget fails.
    db.execute_sql("ALTER TABLE node ADD COLUMN ocr_seconds REAL NOT NULL DEFAULT 0")
    # Pending documents per owner: the queue orders work so that one user's backlog does not
    # hold back another user's documents.
    db.execute_sql("CREATE INDEX node_owner_pending ON node (owner_id) "
                   "WHERE ocr_status IN ('received', 'started')")
