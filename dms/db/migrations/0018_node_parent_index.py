"""An index on `node.parent_id` for the whole tree, trash included.

Migration 0013 made the listing indexes partial (`WHERE trash_id IS NULL`), and with that the
tree lost its last index led by parent_id. Two things need one over every node: the recursive
walk down a subtree (delete, trash, restore, archives: each step looks up the children of the
nodes found so far, trashed ones too), and the foreign key `parent_id REFERENCES node (id)`,
which SQLite checks for each deleted node by looking for its children. Without the index, SQLite
built an automatic index over the whole table for each walk and scanned it for each deleted row:
putting one document in the trash took ~30 ms at 20,000 nodes and grew with the tree.

And `node_trash` becomes partial (`WHERE trash_id IS NOT NULL`): it holds only the trashed nodes,
which is all it is asked for (`trash_id = ?`), and a query that wants live nodes can no longer
pick it to step over every live node of the table (SQLite did, for `trash_id IS NULL AND id IN
(...)`).
"""


def up(migrator, db):
    db.execute_sql("CREATE INDEX node_parent_all ON node (parent_id)")
    db.execute_sql("DROP INDEX node_trash")
    db.execute_sql("CREATE INDEX node_trash ON node (trash_id) WHERE trash_id IS NOT NULL")
