"""Grants: a folder or document shared with a user or a group (api.md §21), as a viewer or an
editor. A grant on a folder covers everything below it, now and later: it is read by walking up
from a node to its special folder (dms.domain.access.rule), never copied onto the nodes below.

- `node_grant`: the node, exactly one of `user_id` / `group_id`, the role, who granted it and
  when. One grant per node and grantee (the partial unique indexes; a second grant changes the
  role). The node's deletion for good, the user's or the group's deletion removes it (ON DELETE
  CASCADE); the granting user's deletion keeps it (`granted_by` NULL).
- Read by node (the unique indexes lead with node_id) and by grantee (what is shared with a user,
  directly or through their groups).
"""

from peewee import PostgresqlDatabase


def up(migrator, db):
    text = 'TEXT COLLATE "C"' if isinstance(db, PostgresqlDatabase) else "TEXT"
    db.execute_sql(f"""
        CREATE TABLE node_grant (
            id         {text} PRIMARY KEY NOT NULL,
            node_id    {text} NOT NULL REFERENCES node (id) ON DELETE CASCADE,
            user_id    {text} REFERENCES "user" (id) ON DELETE CASCADE,
            group_id   {text} REFERENCES user_group (id) ON DELETE CASCADE,
            role       {text} NOT NULL CHECK (role IN ('viewer', 'editor')),
            granted_by {text} REFERENCES "user" (id) ON DELETE SET NULL,
            created_at {text} NOT NULL,
            CHECK ((user_id IS NULL) <> (group_id IS NULL))
        )""")
    db.execute_sql("CREATE UNIQUE INDEX node_grant_node_user ON node_grant (node_id, user_id) "
                   "WHERE user_id IS NOT NULL")
    db.execute_sql("CREATE UNIQUE INDEX node_grant_node_group ON node_grant (node_id, group_id) "
                   "WHERE group_id IS NOT NULL")
    db.execute_sql("CREATE INDEX node_grant_user ON node_grant (user_id, node_id) "
                   "WHERE user_id IS NOT NULL")
    db.execute_sql("CREATE INDEX node_grant_group ON node_grant (group_id, node_id) "
                   "WHERE group_id IS NOT NULL")
    db.execute_sql("CREATE INDEX node_grant_granted_by ON node_grant (granted_by) "
                   "WHERE granted_by IS NOT NULL")
