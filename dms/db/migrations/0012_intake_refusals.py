"""What the intake refused, for its owner to see: a file of the consume folder moved to `.failed/`,
an attachment a mail check could not take. Bounded by dms.domain.refusals (the newest hundred per
user, none older than 30 days); deleted with the user."""

from peewee import PostgresqlDatabase


def up(migrator, db):
    text = 'TEXT COLLATE "C"' if isinstance(db, PostgresqlDatabase) else "TEXT"
    db.execute_sql(f"""
        CREATE TABLE intake_refusal (
            id         {text} PRIMARY KEY NOT NULL,
            owner_id   {text} NOT NULL REFERENCES "user" (id) ON DELETE CASCADE,
            source     TEXT NOT NULL,
            name       TEXT NOT NULL,
            origin     TEXT,
            reason     TEXT NOT NULL,
            refused_at {text} NOT NULL
        )""")
    db.execute_sql("CREATE INDEX intake_refusal_owner ON intake_refusal (owner_id, refused_at)")
    db.execute_sql("CREATE INDEX intake_refusal_time ON intake_refusal (refused_at)")
