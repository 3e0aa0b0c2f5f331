"""The command line as a user runs it: `python -m dms ...` in a subprocess."""

from __future__ import annotations

import re
import signal
import subprocess

import pytest
import requests

from dms.config import Config

from tests.harness.processes import Running, dms_command, environment

pytestmark = pytest.mark.sqlite_only  # commands on a data dir of their own


def login(url: str, username: str, password: str) -> requests.Response:
    return requests.post(url + "/api/auth/login/", json={"username": username, "password": password})


@pytest.mark.slow
def test_serve_with_a_configured_password_logs_in_and_stops_on_sigterm(tmp_path):
    server = Running(tmp_path / "data", DMS_ADMIN_PASSWORD="configured-pw", DMS_ADMIN_USERNAME="boss")
    try:
        response = login(server.url, "boss", "configured-pw")
        assert response.status_code == 200
        token = response.json()["token"]
        me = requests.get(server.url + "/api/users/me/", headers={"Authorization": f"Token {token}"})
        assert me.json()["data"]["attributes"]["is_superuser"] is True
    finally:
        status = server.stop(signal.SIGTERM)
    assert status == 0
    assert "configured-pw" not in server.output
    assert token not in server.output
    assert "dms stopped" in server.output
    assert (tmp_path / "data" / "dms.db").exists()


@pytest.mark.slow
def test_serve_without_a_password_prints_a_generated_one_once(tmp_path):
    data_dir = tmp_path / "data"
    first = Running(data_dir)
    try:
        password = re.search(r"with the password\n\n    (\S+)\n", first.output).group(1)
        assert len(password) >= 20
        assert login(first.url, "admin", password).status_code == 200
    finally:
        assert first.stop(signal.SIGINT) == 0  # Ctrl-C stops it cleanly too

    # Second start on the same data dir: no new user, no password printed, the old one still works.
    second = Running(data_dir, DMS_ADMIN_PASSWORD="ignored-now")
    try:
        assert "password" not in second.output.split("Log in as")[0]
        assert login(second.url, "admin", password).status_code == 200
        assert login(second.url, "admin", "ignored-now").status_code == 400
    finally:
        assert second.stop() == 0


@pytest.mark.slow
def test_createsuperuser_and_changepassword_from_stdin(tmp_path):
    data_dir = str(tmp_path / "data")
    created = subprocess.run(dms_command("createsuperuser", "root2", "--password-stdin",
                                         "--data-dir", data_dir),
                             input="first-password\n", capture_output=True, text=True,
                             env=environment())
    assert (created.returncode, created.stdout) == (0, "Superuser 'root2' created.\n")
    changed = subprocess.run(dms_command("changepassword", "root2", "--password-stdin",
                                         "--data-dir", data_dir),
                             input="second-password\n", capture_output=True, text=True,
                             env=environment())
    assert (changed.returncode, changed.stdout) == (0, "Password changed for 'root2'.\n")
    refused = subprocess.run(dms_command("changepassword", "nobody", "--password-stdin",
                                         "--data-dir", data_dir),
                             input="whatever-password\n", capture_output=True, text=True,
                             env=environment())
    assert (refused.returncode, refused.stderr) == (1, "dms: there is no user 'nobody'.\n")
    short = subprocess.run(dms_command("createsuperuser", "root3", "--password-stdin",
                                       "--data-dir", data_dir),
                           input="short\n", capture_output=True, text=True, env=environment())
    assert (short.returncode, short.stderr) == (1, "dms: A password needs at least 8 characters.\n")

    # The server finds root2 with the new password, and no generated admin: a user existed.
    server = Running(data_dir)
    try:
        assert "with the password" not in server.output
        assert login(server.url, "root2", "second-password").status_code == 200
        assert login(server.url, "root2", "first-password").status_code == 400
    finally:
        assert server.stop() == 0


def test_a_bad_setting_is_a_clear_message_and_exit_2(tmp_path):
    result = subprocess.run(dms_command("serve", "--data-dir", str(tmp_path)),
                            env=environment(DMS_PORT="eighty"), capture_output=True, text=True)
    assert (result.returncode, result.stderr) == (2, "dms: DMS_PORT must be a whole number, not 'eighty'.\n")


def test_flags_win_over_environment_over_defaults():
    env = {"DMS_PORT": "9000", "DMS_HOST": "0.0.0.0", "DMS_THREADS": "3", "DMS_LOG_LEVEL": "DEBUG",
           "DMS_ADMIN_PASSWORD": "", "DMS_MAX_UPLOAD_MB": "64", "UNRELATED": "x"}
    config = Config.load({"port": "9100", "data_dir": "/srv/dms", "host": None}, env)
    assert (config.port, config.host, config.threads, config.log_level, str(config.data_dir),
            config.admin_password, config.max_upload_mb, config.admin_username) == \
           (9100, "0.0.0.0", 3, "debug", "/srv/dms", None, 64, "admin")
    assert Config.load({}, {}) == Config()
    assert "secret" not in repr(Config.load({}, {"DMS_ADMIN_PASSWORD": "secret"}))
