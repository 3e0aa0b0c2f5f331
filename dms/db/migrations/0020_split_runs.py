"""Splits in the background (docs/api.md, "Splits in the background").

- `split_run`: `POST /documents/{id}/split/` too large for one request (more parts than one
  batch, or many pages to look at for separator sheets): its source (`document_id`, no foreign
  key: the source goes to the trash and later away, the run stays readable), the version and the
  folder it was split from and its title then, the form (`kind`), the parts as JSON `plan`
  ([[first, last], ...]; NULL until the separator sheets are found) and their count, the cursor
  `parts_made`, committed with each batch's parts, and the lease of the worker running it
  (`worker_id`, `lease_until`), so a run killed half-way resumes after its last committed batch
  and never makes a part twice.
- `split_part`: the documents a run made, by part number (GET /split-runs/{id}/documents/); a
  part deleted for good leaves the list with its node.
"""

from peewee import PostgresqlDatabase


def up(migrator, db):
    postgresql = isinstance(db, PostgresqlDatabase)
    text = 'TEXT COLLATE "C"' if postgresql else "TEXT"
    db.execute_sql(f"""
        CREATE TABLE split_run (
            id          {text} PRIMARY KEY NOT NULL,
            owner_id    {text} NOT NULL REFERENCES "user" (id) ON DELETE CASCADE,
            document_id {text} NOT NULL,
            version_id  {text} NOT NULL,
            folder_id   {text} NOT NULL,
            title       {text} NOT NULL,
            kind        {text} NOT NULL,
            plan        {text},
            parts       INTEGER,
            parts_made  INTEGER NOT NULL DEFAULT 0,
            state       {text} NOT NULL,
            error       {text},
            worker_id   {text},
            lease_until DOUBLE PRECISION,
            created_at  {text} NOT NULL,
            started_at  {text},
            finished_at {text}
        )""")
    db.execute_sql("CREATE INDEX split_run_owner ON split_run (owner_id, created_at)")
    # Runs to resume, and the one run under way of a document (a second split of it is 409).
    db.execute_sql("CREATE INDEX split_run_unfinished ON split_run (document_id) "
                   "WHERE state IN ('queued', 'running')")
    db.execute_sql(f"""
        CREATE TABLE split_part (
            run_id      {text} NOT NULL REFERENCES split_run (id) ON DELETE CASCADE,
            number      INTEGER NOT NULL,
            document_id {text} NOT NULL REFERENCES node (id) ON DELETE CASCADE,
            PRIMARY KEY (run_id, number)
        )""")
    # A node deleted for good looks for the rows naming it (the foreign key's check).
    db.execute_sql("CREATE INDEX split_part_document ON split_part (document_id)")
