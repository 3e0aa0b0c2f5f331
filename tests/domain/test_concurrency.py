"""Each check-then-write of api.md holds when the requests that race for it arrive together, on
SQLite (BEGIN IMMEDIATE behind one lock) and on PostgreSQL (READ COMMITTED, advisory locks per
scope): unique usernames, the last active superuser, the move cycle check, version numbers of
one document, the first superuser of two processes starting on an empty database. A barrier
releases the racing requests at once; each race is run several rounds."""

from __future__ import annotations

import re
import threading

import pytest

from tests.harness import samples
from tests.harness.client import JSON, Client
from tests.harness.database import unreachable
from tests.harness.documents import make_folder, new_document, upload
from tests.harness.processes import Running

pytestmark = pytest.mark.socket  # racing requests on real threads through waitress

ROUNDS = 8


def race(*requests) -> list:
    """Run the callables at the same moment, each in its own thread; their results (or the
    exceptions they raised) in order."""
    barrier = threading.Barrier(len(requests))
    results: list = [None] * len(requests)

    def run(index, request):
        barrier.wait()
        try:
            results[index] = request()
        except Exception as error:  # kept: the caller asserts on it (and cleans up the rest)
            results[index] = error

    threads = [threading.Thread(target=run, args=(i, r)) for i, r in enumerate(requests)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_one_of_two_racing_usernames_is_created_the_other_is_a_400(admin):
    for round_ in range(ROUNDS):
        name = f"racer{round_}"
        clients = [Client(admin.base_url, admin.token) for _ in range(2)]
        answers = race(*(lambda c=c, n=n: c.post("/api/users/", {"data": {
            "type": "users", "attributes": {"username": n}}}) for c, n in
            zip(clients, (name, name.upper()), strict=True)))
        assert sorted(a.status_code for a in answers) == [200, 400], [a.text for a in answers]
        refused = next(a for a in answers if a.status_code == 400)
        assert refused.json() == {"errors": [{
            "detail": "A user with that username already exists.", "status": "400",
            "code": "invalid", "source": {"pointer": "/data/attributes/username"}}]}
    listed = [u["attributes"]["username"].lower()
              for u in admin.get("/api/users/?page[size]=100").json()["data"]]
    assert sorted(n for n in listed if n.startswith("racer")) == \
        [f"racer{i}" for i in range(ROUNDS)]


def test_two_superusers_stepping_down_together_leave_one(admin, make_user):
    other = make_user("root2")
    grant = {"data": {"type": "users", "attributes": {"is_superuser": True, "is_staff": True}}}
    step_down = {"data": {"type": "users", "attributes": {"is_superuser": False}}}
    assert admin.patch(f"/api/users/{other.user_id}/", grant).status_code == 200
    for _ in range(ROUNDS):
        first, second = (Client(admin.base_url, admin.token), Client(other.base_url, other.token))
        answers = race(
            lambda first=first: first.patch(f"/api/users/{admin.user_id}/", step_down),
            lambda second=second: second.patch(f"/api/users/{other.user_id}/", step_down))
        assert sorted(a.status_code for a in answers) == [200, 400], [a.text for a in answers]
        assert next(a for a in answers if a.status_code == 400).json() == {"errors": [{
            "detail": "The last active superuser must stay an active superuser.", "status": "400",
            "code": "invalid", "source": {"pointer": "/data/attributes/is_superuser"}}]}
        remaining = [c for c, a in zip((admin, other), answers, strict=True)
                     if a.status_code == 400]
        users = remaining[0].get("/api/users/?page[size]=100").json()["data"]
        assert [u["attributes"]["username"] for u in users if u["attributes"]["is_superuser"]] \
            == [("admin" if remaining[0] is admin else "root2")]
        stepped = other if remaining[0] is admin else admin
        assert remaining[0].patch(f"/api/users/{stepped.user_id}/", grant).status_code == 200


def test_folders_moved_into_each_other_at_once_never_make_a_loop(alice, config):
    move = "/api/nodes/move/"
    for _ in range(ROUNDS):
        a, b = make_folder(alice, "A", alice.home_id), make_folder(alice, "B", alice.home_id)
        clients = [Client(alice.base_url, alice.token) for _ in range(2)]
        answers = race(
            lambda: clients[0].post(move, {"nodes": [{"id": a}], "target_parent": {"id": b}},  # noqa: B023 (run in this iteration)
                                    media=JSON),
            lambda: clients[1].post(move, {"nodes": [{"id": b}], "target_parent": {"id": a}},  # noqa: B023 (run in this iteration)
                                    media=JSON))
        assert sorted(r.status_code for r in answers) == [200, 400], [r.text for r in answers]
        assert next(r for r in answers if r.status_code == 400).json()["errors"][0]["detail"] == \
            "A folder cannot be moved into itself or into one of its own folders."
        assert unreachable(config) == []
        outer = b if answers[0].status_code == 200 else a  # the one that stayed in .home
        assert alice.delete(f"/api/nodes/{outer}/").status_code == 204


def test_uploads_racing_into_one_document_are_numbered_one_to_n(alice):
    for _ in range(3):
        document_id = new_document(alice, "raced")
        clients = [Client(alice.base_url, alice.token) for _ in range(6)]
        answers = race(*(lambda c=c, n=n: upload(c, document_id, f"v{n}.txt",  # noqa: B023 (run in this iteration)
                                                 samples.text(f"version {n}\n"))
                         for n, c in enumerate(clients)))
        assert [a.status_code for a in answers] == [201] * 6, [a.text for a in answers]
        versions = alice.get(
            f"/api/documents/{document_id}/").json()["data"]["attributes"]["versions"]
        assert sorted(v["number"] for v in versions) == [1, 2, 3, 4, 5, 6]
        assert sorted(v["file_name"] for v in versions) == [f"v{n}.txt" for n in range(6)]


@pytest.mark.slow
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
