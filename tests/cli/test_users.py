"""Users from the command line: `dms createuser`, `dms users`, `dms deactivate` and `dms activate`
as a user runs them, in subprocesses, on the lane's database (SQLite, or PostgreSQL with
--database-url), and a running server that sees what they changed."""

from __future__ import annotations

import subprocess
import time

import pytest
import requests

from tests.harness.processes import Running, config_args, config_env, dms_command, environment

# Sockets (pytest-socket): a `dms serve` subprocess, asked over HTTP.
pytestmark = pytest.mark.enable_socket


def login(url: str, username: str, password: str) -> requests.Response:
    return requests.post(url + "/api/auth/login/",
                         json={"username": username, "password": password})


@pytest.mark.slow
def test_ordinary_users_from_the_command_line(config):
    def dms(*args, stdin=None):
        result = subprocess.run(dms_command(*args, *config_args(config)), input=stdin,
                                capture_output=True, text=True, env=environment())
        return result.returncode, result.stdout, result.stderr

    assert dms("createsuperuser", "root", "--password-stdin", stdin="root-password\n")[0] == 0
    assert dms("createuser", "alice", "--password-stdin", "--email", "alice@example.org",
               stdin="alice-password\n") == (0, "User 'alice' created.\n", "")
    assert dms("createuser", "bob", "--password-stdin", "--staff", stdin="bob-password\n") == \
        (0, "Staff user 'bob' created.\n", "")
    assert dms("createuser", "ALICE", "--password-stdin", stdin="other-password\n") == \
        (1, "", "dms: A user with that username already exists.\n")
    mixed = ("dms: A username may not mix letters of different scripts (such as Latin and "
             "Cyrillic, whose letters can look alike).\n")  # a Cyrillic "а" and "о" below
    assert dms("createuser", "\u0430lice2", "--password-stdin", stdin="other-password\n") == \
        (1, "", mixed)
    assert dms("createsuperuser", "r\u043e\u043et", "--password-stdin",
               stdin="other-password\n") == (1, "", mixed)
    today = time.strftime("%Y-%m-%d", time.gmtime())
    assert dms("users") == (0, "USERNAME  ROLE       ACTIVE  JOINED\n"
                               f"alice     user       yes     {today}\n"
                               f"bob       staff      yes     {today}\n"
                               f"root      superuser  yes     {today}\n", "")
    assert dms("deactivate", "alice") == (0, "User 'alice' deactivated.\n", "")
    assert dms("deactivate", "root") == \
        (1, "", "dms: The last active superuser must stay an active superuser.\n")
    assert dms("deactivate", "nobody") == (1, "", "dms: There is no user 'nobody'.\n")
    assert dms("users")[1].splitlines()[1] == f"alice     user       no      {today}"

    server = Running(config.data_dir, **config_env(config))
    try:
        assert login(server.url, "alice", "alice-password").status_code == 400
        assert dms("activate", "alice") == (0, "User 'alice' activated.\n", "")
        response = login(server.url, "alice", "alice-password")  # the running server sees it
        assert response.status_code == 200
        me = requests.get(server.url + "/api/users/me/",
                          headers={"Authorization": f"Token {response.json()['token']}"})
        attributes = me.json()["data"]["attributes"]
        assert (attributes["email"], attributes["is_staff"], attributes["is_superuser"],
                sorted(me.json()["data"]["relationships"])) == \
            ("alice@example.org", False, False, ["home_folder", "inbox_folder", "shared_folder"])
        bob = login(server.url, "bob", "bob-password").json()["token"]
        users = requests.get(server.url + "/api/users/", headers={"Authorization": f"Token {bob}"})
        assert users.status_code == 200  # staff manage accounts
    finally:
        assert server.stop() == 0
