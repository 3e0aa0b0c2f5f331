"""A throwaway PostgreSQL cluster for the tests: Debian's server binaries, `initdb` in a temp dir
as the `postgres` user, on 127.0.0.1 and a free port, fsync off; one template database migrated
once, cloned for each test (CREATE DATABASE ... TEMPLATE is a file copy: milliseconds)."""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.harness.processes import free_port

TEMPLATE = "dms_template"


def server_binaries() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parent.parent.name))
    if not found:
        raise RuntimeError("PostgreSQL's server is not installed: run scripts/setup.sh --test")
    return Path(found[-1]).parent


class Cluster:
    def __init__(self):
        self.bin = server_binaries()
        self.dir = Path(tempfile.mkdtemp(prefix="dms-pg-"))
        self.data = self.dir / "data"
        self.port = free_port()
        self._names = itertools.count(1)
        self._as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    def _run(self, *command: str) -> None:
        subprocess.run([*self._as_postgres, *command], check=True, capture_output=True,
                       timeout=120)

    def start(self) -> Cluster:
        if self._as_postgres:
            shutil.chown(self.dir, "postgres")
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres",
                  "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8")
        options = (f"-c listen_addresses=127.0.0.1 -c port={self.port} -c fsync=off "
                   f"-c synchronous_commit=off -c full_page_writes=off -c max_connections=300 "
                   f"-c unix_socket_directories={self.dir} -c shared_buffers=64MB")
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options,
                  "-l", str(self.dir / "log"), "-w", "start")
        return self

    def stop(self) -> None:
        try:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def admin_sql(self, sql: str) -> None:
        import psycopg
        with psycopg.connect(self.url("postgres"), autocommit=True) as connection:
            connection.execute(sql)

    def make_template(self) -> None:
        """The template: an empty database migrated by dms (in a child process, so that this
        process' database object stays unbound)."""
        self.admin_sql(f"CREATE DATABASE {TEMPLATE}")
        subprocess.run([os.sys.executable, "-m", "dms", "migrate", "--database-url",
                        self.url(TEMPLATE), "--data-dir", str(self.dir / "unused")],
                       check=True, capture_output=True, timeout=120,
                       cwd=Path(__file__).resolve().parents[2])

    def new_database(self, empty: bool = False) -> str:
        """A fresh database (a clone of the migrated template unless `empty`); its URL."""
        name = f"test_{next(self._names)}"
        self.admin_sql(f"CREATE DATABASE {name}" + ("" if empty else f" TEMPLATE {TEMPLATE}"))
        return self.url(name)
