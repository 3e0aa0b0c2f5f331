"""Helpers for the tests: an HTTP client for the API and a snapshot of the whole database."""

from __future__ import annotations

import json
import sqlite3
import time

import requests

VND = "application/vnd.api+json"
JSON = "application/json"
NOT_FOUND = {"errors": [{"detail": "Not found.", "status": "404", "code": "not_found"}]}


class Client:
    """requests.Session bound to the server's base URL, with an optional token; `verify`: the
    certificate to trust for https (passed with each request: REQUESTS_CA_BUNDLE in the
    environment would override a session's)."""

    def __init__(self, base_url: str, token: str | None = None, verify: str | None = None):
        self.base_url = base_url
        self.session = requests.Session()
        self.token = token
        self.verify = verify
        self.user_id: str | None = None
        self.home_id: str | None = None
        self.inbox_id: str | None = None
        self.username: str | None = None

    def request(self, method: str, path: str, *, json_body=None, media: str | None = None,
                data: bytes | None = None, headers: dict | None = None, **kwargs):
        headers = dict(headers or {})
        if self.token is not None:
            headers.setdefault("Authorization", f"Token {self.token}")
        if json_body is not None:
            data = json.dumps(json_body).encode()
            headers.setdefault("Content-Type", media or VND)
        url = path if path.startswith("http") else self.base_url + path
        kwargs.setdefault("timeout", 120)  # a hung server fails the test instead of hanging it
        if self.verify is not None:
            kwargs.setdefault("verify", self.verify)
        return self.session.request(method, url, data=data, headers=headers, **kwargs)

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, json_body=body, **kw)

    def patch(self, path, body=None, **kw):
        return self.request("PATCH", path, json_body=body, **kw)

    def put(self, path, **kw):
        return self.request("PUT", path, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)

    def as_anonymous(self) -> "Client":
        return Client(self.base_url, verify=self.verify)

    def login(self, username: str, password: str) -> "Client":
        response = self.as_anonymous().post("/api/auth/login/",
                                            {"username": username, "password": password},
                                            media=JSON)
        assert response.status_code == 200, response.text
        client = Client(self.base_url, response.json()["token"], self.verify)
        me = client.get("/api/users/me/").json()["data"]
        client.user_id = me["id"]
        client.username = me["attributes"]["username"]
        client.home_id = me["relationships"]["home_folder"]["data"]["id"]
        client.inbox_id = me["relationships"]["inbox_folder"]["data"]["id"]
        return client


def error(status: int, code: str, detail: str, pointer: str | None = None) -> dict:
    """The whole expected error envelope."""
    entry = {"detail": detail, "status": str(status), "code": code}
    if pointer is not None:
        entry["source"] = {"pointer": pointer}
    return {"errors": [entry]}


def assert_error(response, status: int, code: str, detail: str, pointer: str | None = None,
                 media: str = VND) -> None:
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"] == media
    assert response.json() == error(status, code, detail, pointer)


# Work queues the server empties in the background (whatever a request changes shows in the
# tables they point at), and the rows of running processes: workers' heartbeats, leases, periodic
# job claims, failed logins (a refused login counts one: tests/test_auth.py checks those).
NOT_STATE = ("search_outbox", "worker", "lease", "periodic_job", "login_failure")


def _connect(target):
    """A DB-API connection to the database of `target`: a Config (its PostgreSQL database or its
    SQLite file) or the path of an SQLite file; and the SQL dialect's placeholder fix."""
    url = getattr(target, "database_url", None)
    if url:
        import psycopg
        from dms.db import postgresql_sql
        return psycopg.connect(url), postgresql_sql
    path = target.db_path if hasattr(target, "db_path") else target
    return sqlite3.connect(path), lambda sql: sql


def _tables(connection, url: str | None) -> list[str]:
    if url:
        sql = ("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
               "ORDER BY table_name")
    else:
        sql = ("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
               "ORDER BY name")
    return [row[0] for row in connection.execute(sql) if row[0] not in NOT_STATE]


def snapshot(target) -> dict:
    """Every row of every table, to prove that a refused request changed nothing. `target`: the
    test's Config (either engine) or an SQLite file."""
    connection, _ = _connect(target)
    try:
        url = getattr(target, "database_url", None)
        return {table: sorted(map(repr, connection.execute(f'SELECT * FROM "{table}"')))
                for table in _tables(connection, url)}
    finally:
        connection.close()


def execute_sql(target, sql: str, *params) -> None:
    """Change the database behind the server's back (to age a token, to break a table)."""
    connection, dialect = _connect(target)
    try:
        connection.execute(dialect(sql), params)
        connection.commit()
    finally:
        connection.close()


def query_sql(target, sql: str, *params) -> list[tuple]:
    """Read the database behind the server's back."""
    connection, dialect = _connect(target)
    try:
        return [tuple(row) for row in connection.execute(dialect(sql), params).fetchall()]
    finally:
        connection.close()


def wait_for(client, document_id, timeout=90):
    """Poll the document until processing ended; returns every status seen, in order."""
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = client.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]["ocr_status"]
        if not seen or seen[-1] != status:
            seen.append(status)
        if status in ("succeeded", "failed"):
            return seen
        time.sleep(0.1)
    raise AssertionError(f"processing did not end: {seen}")


def wait_indexed(target, timeout: float = 30) -> None:
    """Wait until the search index holds every change committed so far: the indexer deletes
    outbox rows only after the index committed them (dms.search.indexer). `target`: a Config or
    the path of an SQLite file. PostgreSQL's search is written in each change's own transaction:
    nothing to wait for."""
    if getattr(target, "database_url", None):
        return
    path = target.db_path if hasattr(target, "db_path") else target
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        connection = sqlite3.connect(path)
        try:
            left = connection.execute("SELECT count(*) FROM search_outbox").fetchone()[0]
        finally:
            connection.close()
        if left == 0:
            return
        time.sleep(0.02)
    raise AssertionError(f"the search index did not catch up: {left} changes left")


def config_args(config) -> list[str]:
    """The command-line options of a `dms` command on the data dir and database of `config`."""
    url = ["--database-url", config.database_url] if config.database_url else []
    return ["--data-dir", str(config.data_dir), *url]
