"""Known login addresses (docs/api.md, "Login").

- `login_address`: the client addresses (IPv6 by their /64) each user logged in from with a
  password, by digest (`key`, never the address in clear), and when the last such login was
  (`last_success_at`, seconds since the epoch). A login from one of them is not refused for its
  username's count of failures from everywhere, so that a guesser on many addresses cannot lock
  the owner out (dms.domain.credentials.LoginThrottle). At most a few rows per user, the oldest
  dropped; older than the bound they are forgotten. Not backed up: like `login_failure`, it
  describes recent logins, not the user's data.
"""

from peewee import PostgresqlDatabase


def up(migrator, db):
    postgresql = isinstance(db, PostgresqlDatabase)
    text = 'TEXT COLLATE "C"' if postgresql else "TEXT"
    db.execute_sql(f"""
        CREATE TABLE login_address (
            user_id         {text} NOT NULL REFERENCES "user" (id) ON DELETE CASCADE,
            key             {text} NOT NULL,
            last_success_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (user_id, key)
        )""")
