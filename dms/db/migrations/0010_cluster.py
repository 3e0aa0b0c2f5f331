"""Several processes on one database (docs/scaling.md, "Several machines"): what was kept in one
process's memory or files moves into rows every node sees.

- `worker`: each process that reads pages (a `dms worker`, or `dms serve` with its embedded
  workers) with its host, OCR languages and last heartbeat; GET /health lists them and web nodes
  accept the languages the live ones share. A worker is live until `live_until` (its last
  heartbeat plus its lease time).
- `lease`: the version a worker is reading, until `expires_at` (renewed by its heartbeat); an
  expired lease is taken over by another worker. Removed with its version.
- `periodic_job`: the last period each periodic job ran for, so that one worker of the cluster
  runs it per period.
- `login_failure`: failed logins by hashed key (client address, username), so that throttling
  counts them across nodes.
- `verify_result`: the last `dms verify` report (it was verify.json in one node's data dir).

None of them is backed up: they describe running processes, not the user's data.
Times are seconds since the epoch (the nodes' clocks, kept by NTP)."""


def up(migrator, db):
    db.execute_sql("""
        CREATE TABLE worker (
            id           TEXT PRIMARY KEY NOT NULL,
            host         TEXT NOT NULL,
            pid          INTEGER NOT NULL,
            languages    TEXT NOT NULL,
            concurrency  INTEGER NOT NULL,
            started_at   DOUBLE PRECISION NOT NULL,
            heartbeat_at DOUBLE PRECISION NOT NULL,
            live_until   DOUBLE PRECISION NOT NULL
        )""")
    db.execute_sql("""
        CREATE TABLE lease (
            version_id TEXT PRIMARY KEY NOT NULL
                       REFERENCES document_version (id) ON DELETE CASCADE,
            worker_id  TEXT NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL
        )""")
    db.execute_sql("CREATE INDEX lease_worker ON lease (worker_id)")
    db.execute_sql("""
        CREATE TABLE periodic_job (
            name   TEXT PRIMARY KEY NOT NULL,
            period BIGINT NOT NULL
        )""")
    db.execute_sql("""
        CREATE TABLE login_failure (
            key       TEXT NOT NULL,
            failed_at DOUBLE PRECISION NOT NULL
        )""")
    db.execute_sql("CREATE INDEX login_failure_key ON login_failure (key, failed_at)")
    db.execute_sql("""
        CREATE TABLE verify_result (
            id     INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
            report TEXT NOT NULL
        )""")
