"""A data dir as an older dms wrote it: schema 1's tables with a user, a token and a small tree,
for the tests of migrations and of restoring old backups."""

from __future__ import annotations

import sqlite3

from dms import db
from dms.db import schema
from dms.domain.credentials import hash_password, token_digest

USER_ID = "11111111-1111-4111-8111-111111111111"
HOME_ID = "22222222-2222-4222-8222-222222222222"
INBOX_ID = "33333333-3333-4333-8333-333333333333"
FOLDER_ID = "44444444-4444-4444-8444-444444444444"
SECRET = "ab" * 32
STAMP = "2025-01-02 03:04:05.123456"


def make_data_dir_at_migration_1(path):
    """What dms at schema 1 wrote: a user, a token and a small tree, in that schema's own SQL."""
    db.open_database(path)
    schema.migration_runner().up(target="0001_initial")
    db.database.close()
    connection = sqlite3.connect(path)
    connection.executescript(f"""
        INSERT INTO user (id, username, password_hash, email, is_superuser, is_staff, date_joined)
        VALUES ('{USER_ID}', 'old', '{hash_password("old-password")}', 'old@example.org', 1, 1,
                '{STAMP}');
        INSERT INTO token (digest, token_key, user_id, name, created, expiry)
        VALUES ('{token_digest(SECRET)}', '{token_digest(SECRET)[:16]}', '{USER_ID}', 'script',
                '{STAMP}', NULL);
        INSERT INTO node (id, owner_id, parent_id, kind, special, title, created_at, updated_at)
        VALUES ('{HOME_ID}', '{USER_ID}', NULL, 'folder', 'home', '.home', '{STAMP}', '{STAMP}'),
               ('{INBOX_ID}', '{USER_ID}', NULL, 'folder', 'inbox', '.inbox', '{STAMP}', '{STAMP}'),
               ('{FOLDER_ID}', '{USER_ID}', '{HOME_ID}', 'folder', NULL, 'Ärchive', '{STAMP}',
                '{STAMP}');
    """)
    connection.commit()
    connection.close()
