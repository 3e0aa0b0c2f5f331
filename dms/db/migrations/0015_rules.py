"""Rules: documents that file themselves (docs/api.md, "Rules").

- `rule`: a user's matching rule: its name (unique per user by `name_key`, as tags are), whether
  it runs, its `position` (the API's `order`: rules run in ascending position, then by name), what
  it matches (`match_field`, `match_algorithm`, `match_pattern`, `case_sensitive`), which new
  documents it looks at (`sources`: the intake sources, comma-separated), what it does
  (`add_tags`: a JSON list of names, `move_to`: a folder id, `set_title`: a template, `stop`), and
  `last_error` (why dms disabled it, e.g. its folder was deleted). `move_to` has no foreign key:
  the rule outlives its folder, disabled, with the reason.
- `rule_pending`: a document whose first file has arrived and whose rules have not run yet, with
  the source it came from. Written in the transaction that adds the first file, deleted in the
  transaction that ends its reading (which also applies the rules), so they run exactly once.
- `rule_run`: `POST /rules/{id}/apply/`: a run of one rule over the owner's existing documents in
  the background; `after_id` (the last document done, by id), the counts, and the lease of the
  worker running it (`worker_id`, `lease_until`) are committed with each batch's changes, so a run
  killed half-way resumes where it stopped without applying anything twice. No foreign key to the
  rule: a run whose rule was deleted fails with that reason and stays readable.
"""

from peewee import PostgresqlDatabase


def up(migrator, db):
    postgresql = isinstance(db, PostgresqlDatabase)
    text = 'TEXT COLLATE "C"' if postgresql else "TEXT"
    boolean = "BOOLEAN" if postgresql else "INTEGER"
    false, true = ("FALSE", "TRUE") if postgresql else ("0", "1")
    db.execute_sql(f"""
        CREATE TABLE rule (
            id              {text} PRIMARY KEY NOT NULL,
            owner_id        {text} NOT NULL REFERENCES "user" (id) ON DELETE CASCADE,
            name            TEXT NOT NULL,
            name_key        {text} NOT NULL,
            enabled         {boolean} NOT NULL DEFAULT {true},
            position        INTEGER NOT NULL DEFAULT 0,
            match_field     TEXT NOT NULL,
            match_algorithm TEXT NOT NULL,
            match_pattern   TEXT NOT NULL,
            case_sensitive  {boolean} NOT NULL DEFAULT {false},
            sources         TEXT NOT NULL,
            add_tags        TEXT NOT NULL,
            move_to         {text},
            set_title       TEXT,
            stop            {boolean} NOT NULL DEFAULT {false},
            last_error      TEXT,
            created_at      {text} NOT NULL,
            updated_at      {text} NOT NULL
        )""")
    db.execute_sql("CREATE UNIQUE INDEX rule_owner_name ON rule (owner_id, name_key)")
    db.execute_sql("CREATE INDEX rule_owner_position ON rule (owner_id, position, name_key)")
    # The rules a deleted folder disables (dms.domain.trash).
    db.execute_sql("CREATE INDEX rule_move_to ON rule (move_to) WHERE move_to IS NOT NULL")
    db.execute_sql(f"""
        CREATE TABLE rule_pending (
            document_id {text} PRIMARY KEY NOT NULL REFERENCES node (id) ON DELETE CASCADE,
            source      TEXT NOT NULL,
            created_at  {text} NOT NULL
        )""")
    db.execute_sql(f"""
        CREATE TABLE rule_run (
            id          {text} PRIMARY KEY NOT NULL,
            owner_id    {text} NOT NULL REFERENCES "user" (id) ON DELETE CASCADE,
            rule_id     {text} NOT NULL,
            rule_name   TEXT NOT NULL,
            state       TEXT NOT NULL,
            examined    INTEGER NOT NULL DEFAULT 0,
            matched     INTEGER NOT NULL DEFAULT 0,
            changed     INTEGER NOT NULL DEFAULT 0,
            after_id    {text},
            error       TEXT,
            worker_id   {text},
            lease_until DOUBLE PRECISION,
            created_at  {text} NOT NULL,
            started_at  {text},
            finished_at {text}
        )""")
    db.execute_sql("CREATE INDEX rule_run_owner ON rule_run (owner_id, created_at)")
    # A run goes through the owner's live documents by id, a batch at a time.
    db.execute_sql("CREATE INDEX node_owner_documents ON node (owner_id, kind, id) "
                   "WHERE trash_id IS NULL")
    db.execute_sql("CREATE INDEX rule_run_unfinished ON rule_run (state) "
                   "WHERE state IN ('queued', 'running')")
