"""Groups of users (docs/api.md, "Groups"; the first part of sharing between users, §21): a group
has a name, unique regardless of case and width (`name_key`, as tags', correspondents' and
usernames' are), and members. Superusers manage them; a member sees the groups they are in.

- `user_group`: the group ("group" is a reserved word in SQL).
- `group_member`: one row per member; a user's deletion removes their memberships (ON DELETE
  CASCADE), a group's deletion its rows. Read by group (the primary key) and by user (the index:
  the groups a user is in).
"""

from peewee import PostgresqlDatabase


def up(migrator, db):
    text = 'TEXT COLLATE "C"' if isinstance(db, PostgresqlDatabase) else "TEXT"
    db.execute_sql(f"""
        CREATE TABLE user_group (
            id         {text} PRIMARY KEY NOT NULL,
            name       TEXT NOT NULL,
            name_key   {text} NOT NULL,
            created_at {text} NOT NULL
        )""")
    db.execute_sql("CREATE UNIQUE INDEX user_group_name ON user_group (name_key)")
    db.execute_sql(f"""
        CREATE TABLE group_member (
            group_id {text} NOT NULL REFERENCES user_group (id) ON DELETE CASCADE,
            user_id  {text} NOT NULL REFERENCES "user" (id) ON DELETE CASCADE,
            PRIMARY KEY (group_id, user_id)
        )""")
    db.execute_sql("CREATE INDEX group_member_user ON group_member (user_id, group_id)")
