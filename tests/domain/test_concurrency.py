"""Each check-then-write of api.md holds when the calls that race for it arrive together, on
SQLite (BEGIN IMMEDIATE behind one lock) and on PostgreSQL (READ COMMITTED, advisory locks per
scope): unique usernames, the last active superuser, the move cycle check, version numbers of
one document, the first superuser of two processes starting on an empty database. A barrier
releases the racing calls at once; each race is run several rounds. The domain's functions are
called from the racing threads directly (the fast tier: no server, each thread its own
connection, as each of waitress' threads has); the two servers are processes of their own."""

from __future__ import annotations

import io
import re
import threading

import pytest

from dms.db.models import User
from dms.domain import accounts, documents, trash, tree, uploads
from dms.errors import DomainError
from tests.harness import samples
from tests.harness.client import Client
from tests.harness.database import unreachable
from tests.harness.domaintier import (
    domain_thread,
    home_id,
    new_document,
    new_folder,
    new_user,
)
from tests.harness.processes import Running

ROUNDS = 8


def race(*calls) -> list:
    """Run the callables at the same moment, each in its own thread (which then gives its
    database connection back); their results (or the exceptions they raised) in order."""
    barrier = threading.Barrier(len(calls))
    results: list = [None] * len(calls)

    def run(index, call):
        barrier.wait()
        try:
            results[index] = call()
        except Exception as error:  # kept: the caller asserts on it (and cleans up the rest)
            results[index] = error

    threads = [domain_thread(run, i, c) for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def refusal(results: list) -> tuple[str, str, str | None]:
    """Of two racers, one went through and one was refused: the refusal's code, sentence and
    field (the pointer's tail through the API)."""
    refused = [result for result in results if isinstance(result, Exception)]
    assert len(refused) == 1 and isinstance(refused[0], DomainError), results
    return refused[0].code, str(refused[0]), refused[0].field


def test_one_of_two_racing_usernames_is_created_the_other_is_refused(root):
    for round_ in range(ROUNDS):
        name = f"racer{round_}"
        results = race(*(lambda n=n: accounts.create_user_by(root, {"username": n})
                         for n in (name, name.upper())))
        assert refusal(results) == ("invalid", "A user with that username already exists.",
                                    "username")
    listed = [user.username.lower() for user in accounts.all_users()]
    assert sorted(n for n in listed if n.startswith("racer")) == \
        [f"racer{i}" for i in range(ROUNDS)]


def test_two_superusers_stepping_down_together_leave_one(root):
    other = new_user("root2")
    grant = {"is_superuser": True, "is_staff": True}
    accounts.update_user_by(root, other.id, grant, None)
    for _ in range(ROUNDS):
        # Each racer acts as itself as it is now, as a request reads its token's user.
        first, second = User.get_by_id(root.id), User.get_by_id(other.id)
        results = race(
            lambda first=first: accounts.update_user_by(first, first.id,
                                                        {"is_superuser": False}, None),
            lambda second=second: accounts.update_user_by(second, second.id,
                                                          {"is_superuser": False}, None))
        assert refusal(results) == (
            "invalid", "The last active superuser must stay an active superuser.",
            "is_superuser")
        remaining, stepped = (first, second) if isinstance(results[0], Exception) \
            else (second, first)
        assert [user.username for user in accounts.all_users() if user.is_superuser] == \
            [remaining.username]
        accounts.update_user_by(User.get_by_id(remaining.id), stepped.id, grant, None)


def test_folders_moved_into_each_other_at_once_never_make_a_loop(services, config):
    alice = new_user("alice")
    for _ in range(ROUNDS):
        a = new_folder(services, alice, "A", home_id(alice))
        b = new_folder(services, alice, "B", home_id(alice))
        results = race(lambda: tree.move_nodes(alice, [a], b),  # noqa: B023 (run in this iteration)
                       lambda: tree.move_nodes(alice, [b], a))  # noqa: B023 (run in this iteration)
        assert refusal(results) == (
            "invalid", "A folder cannot be moved into itself or into one of its own folders.",
            "/target_parent/id")
        assert unreachable(config) == []
        outer = b if not isinstance(results[0], Exception) else a  # the one left in .home
        trash.delete(services, alice, outer)


def test_uploads_racing_into_one_document_are_numbered_one_to_n(services):
    alice = new_user("alice")

    def upload(document_id: str, n: int):
        body = samples.text(f"version {n}\n")
        return uploads.upload_version(services, alice, document_id, io.BytesIO(body), len(body),
                                      f"v{n}.txt")

    for _ in range(3):
        document_id = new_document(services, alice, "raced", home_id(alice))
        results = race(*(lambda d=document_id, n=n: upload(d, n) for n in range(6)))
        assert not [r for r in results if isinstance(r, Exception)], results
        versions = documents.versions(document_id)
        assert sorted(v.number for v in versions) == [1, 2, 3, 4, 5, 6]
        assert sorted(v.file_name for v in versions) == [f"v{n}.txt" for n in range(6)]


@pytest.mark.slow
@pytest.mark.enable_socket  # servers of their own, in subprocesses, and clients to them
def test_two_servers_starting_on_an_empty_database_create_one_superuser(tmp_path, engine, request):
    """PostgreSQL: two nodes with data dirs of their own on one new database; SQLite: two
    processes on one new data dir. Both also race to create the schema."""
    if engine == "postgresql":
        url = request.getfixturevalue("postgres").new_database(empty=True)
        places = [(tmp_path / "node1", {"DMS_DATABASE_URL": url}),
                  (tmp_path / "node2", {"DMS_DATABASE_URL": url})]
    else:
        places = [(tmp_path / "data", {}), (tmp_path / "data", {})]
    servers = race(*(lambda d=d, env=env: Running(d, **env) for d, env in places))
    try:
        assert all(isinstance(server, Running) for server in servers), servers
        passwords = [re.search(r"with the password\n\n    (\S+)\n", s.output) for s in servers]
        assert len([p for p in passwords if p]) == 1, [s.output for s in servers]
        password = next(p for p in passwords if p).group(1)
        for server in servers:
            users = Client(server.url).login("admin", password).get("/api/users/").json()["data"]
            assert [u["attributes"]["username"] for u in users] == ["admin"]
    finally:
        for server in servers:
            if isinstance(server, Running):
                server.stop()
