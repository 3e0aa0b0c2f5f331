"""The command line as a user runs it: `python -m dms ...` in a subprocess."""

from __future__ import annotations

import importlib.metadata
import re
import signal
import socket
import sqlite3
import subprocess
import sys

import pytest
import requests

from dms.cli.status import ExitStatus
from dms.config import Config
from dms.db.schema import shipped_migrations
from tests.harness.processes import (
    LISTENING,
    Running,
    dms_command,
    environment,
    free_port,
    terminate,
)
from tests.harness.waiting import wait_for

# Commands on a data dir of their own.
# Sockets (pytest-socket): `dms serve` subprocesses, asked over HTTP.
pytestmark = [pytest.mark.sqlite_only, pytest.mark.enable_socket]


def test_the_exit_statuses_keep_their_values():
    """Scripts and systemd units test these values: they never change."""
    assert {status.name: int(status) for status in ExitStatus} == \
        {"DONE": 0, "FAILED": 1, "REFUSED": 2}


def login(url: str, username: str, password: str) -> requests.Response:
    return requests.post(url + "/api/auth/login/",
                         json={"username": username, "password": password})


@pytest.mark.slow
def test_serve_with_a_configured_password_logs_in_and_stops_on_sigterm(tmp_path):
    server = Running(tmp_path / "data", DMS_ADMIN_PASSWORD="configured-pw",
                     DMS_ADMIN_USERNAME="boss")
    try:
        response = login(server.url, "boss", "configured-pw")
        assert response.status_code == 200
        token = response.json()["token"]
        me = requests.get(server.url + "/api/users/me/",
                          headers={"Authorization": f"Token {token}"})
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


def test_the_first_starts_password_reaches_a_file_while_it_runs(tmp_path):
    """Issue 44: started with its output to a file (a service's log, nohup), dms wrote the
    one-time password there only when it stopped: Python buffers a file's output in blocks."""
    env = environment()
    env.pop("PYTHONUNBUFFERED", None)  # as a user's shell has it
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    command = dms_command("serve", "--port", str(free_port()), "--data-dir", str(tmp_path / "d"))
    with open(out, "w") as stdout, open(err, "w") as stderr:
        process = subprocess.Popen(command, env=env, stdout=stdout, stderr=stderr)
    try:
        url = wait_for(lambda: LISTENING.search(err.read_text()), timeout=60).group(1)
        text = out.read_text()  # while it runs
        password = re.search(r"with the password\n\n    (\S+)\n", text).group(1)
        assert login(url, "admin", password).status_code == 200
        assert f"Log in as 'admin' at {url}/" in text
        # A first start in a new data dir has nothing to tighten, so nothing to warn of (a
        # fresh clone shipped data/.gitkeep, readable by all: issue 44).
        assert " WARNING " not in err.read_text(), err.read_text()
    finally:
        terminate(process)


@pytest.mark.slow
def test_the_first_start_names_a_changepassword_command_that_works_from_anywhere(tmp_path):
    data_dir = tmp_path / "data"
    first = Running(data_dir)
    try:
        command = re.search(r"Change it with\n\n    (.+)\n", first.output).group(1)
        assert command == f"{sys.executable} -m dms changepassword admin --data-dir {data_dir}"
        # Each migration is logged once, by dms, not again by peewee.
        shipped = shipped_migrations()
        assert re.findall(r"INFO (\S+): (applied .*)", first.output) == \
            [("dms.db", f"applied {len(shipped)} schema migration(s): {shipped[0]} to "
                        f"{shipped[-1]}")]
    finally:
        assert first.stop() == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    changed = subprocess.run([*command.split(" "), "--password-stdin"],
                             input="a-new-password\n", capture_output=True, text=True,
                             cwd=elsewhere, env=environment())
    assert (changed.returncode, changed.stdout) == (0, "Password changed for 'admin'.\n")
    second = Running(data_dir)
    try:
        assert login(second.url, "admin", "a-new-password").status_code == 200
    finally:
        assert second.stop() == 0


def test_a_port_in_use_is_one_line_and_leaves_no_user_behind(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(dms_command("serve", "--port", str(port), "--data-dir",
                                            str(tmp_path / "data")),
                                env=environment(), capture_output=True, text=True)
    assert (result.returncode, result.stderr.splitlines()[-1:]) == \
        (1, [f"dms: cannot listen on 127.0.0.1:{port}: the port is in use (is dms already "
             "running? choose another port with --port)"])
    assert "Traceback" not in result.stderr + result.stdout
    connection = sqlite3.connect(tmp_path / "data" / "dms.db")
    try:  # a later start generates the first password again and shows it
        assert connection.execute('SELECT count(*) FROM "user"').fetchone() == (0,)
    finally:
        connection.close()


def test_an_address_the_machine_lacks_is_one_line_and_leaves_no_user_behind(tmp_path):
    # 192.0.2.1 is TEST-NET-1 (RFC 5737): documentation only, never a local address.
    result = subprocess.run(dms_command("serve", "--host", "192.0.2.1", "--port", "8000",
                                        "--data-dir", str(tmp_path / "data")),
                            env=environment(), capture_output=True, text=True)
    assert (result.returncode, result.stderr.splitlines()[-1:]) == \
        (1, ["dms: cannot listen on 192.0.2.1:8000: this machine has no such address "
             "(see --host)"])
    assert "Traceback" not in result.stderr + result.stdout
    connection = sqlite3.connect(tmp_path / "data" / "dms.db")
    try:
        assert connection.execute('SELECT count(*) FROM "user"').fetchone() == (0,)
    finally:
        connection.close()


def test_a_database_file_that_cannot_be_opened_is_one_line(tmp_path):
    data_dir = tmp_path / "data"
    (data_dir / "dms.db").mkdir(parents=True)  # a directory where the SQLite file belongs
    result = subprocess.run(dms_command("serve", "--port", "0", "--data-dir", str(data_dir)),
                            env=environment(), capture_output=True, text=True)
    assert (result.returncode, result.stderr.splitlines()[-1:]) == \
        (1, [f"dms: cannot open the database {data_dir / 'dms.db'}: unable to open database "
             "file"])
    assert "Traceback" not in result.stderr + result.stdout
    assert "listening" not in result.stdout + result.stderr
    assert sorted(path.name for path in (data_dir / "dms.db").iterdir()) == []


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_a_data_dir_that_cannot_be_made_is_one_line(tmp_path, command):
    (tmp_path / "a-file").write_text("not a directory")
    data_dir = tmp_path / "a-file" / "data"
    options = ["--queue-url", "redis://127.0.0.1:1/0"] if command == "worker" else []
    result = subprocess.run(dms_command(command, "--data-dir", str(data_dir), *options),
                            env=environment(), capture_output=True, text=True)
    assert (result.returncode, result.stderr) == \
        (1, f"dms: cannot start: Not a directory: {data_dir}\n")


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


ON_STDIN = ("give the password on standard input with --password-stdin (e.g. --password-stdin "
            "< FILE); on the command line others could read it in `ps`.")


@pytest.mark.parametrize("args, message", [
    (["backup", "x.zip", "--password", "x"],
     f"dms backup has no --password option: to encrypt the backup, {ON_STDIN}"),
    (["backup", "x.zip", "--password"],  # once read as --password-stdin: it waited on stdin
     f"dms backup has no --password option: to encrypt the backup, {ON_STDIN}"),
    (["backup", "x.zip", "--encrypt"],
     f"dms backup has no --encrypt option: to encrypt the backup, {ON_STDIN}"),
    (["restore", "x.zip", "--password=x"],
     f"dms restore has no --password option: to restore an encrypted backup, {ON_STDIN}"),
    (["createuser", "carol", "--password", "secret-pw"],
     "dms createuser has no --password option: to set the password without being asked for "
     f"it, {ON_STDIN}"),
])
def test_a_password_option_people_guess_points_to_password_stdin(tmp_path, args, message):
    result = subprocess.run(dms_command(*args, "--data-dir", str(tmp_path / "data")),
                            input="", capture_output=True, text=True, cwd=tmp_path,
                            env=environment(), timeout=60)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", f"dms: {message}\n")
    assert sorted(path.name for path in tmp_path.iterdir()) == []  # nothing made, no x.zip


def test_options_are_never_abbreviated(tmp_path):
    result = subprocess.run(dms_command("backup", "x.zip", "--password-std", "--data-dir",
                                        str(tmp_path / "data")),
                            input="a-password\n", capture_output=True, text=True, cwd=tmp_path,
                            env=environment(), timeout=60)
    assert (result.returncode, result.stderr.splitlines()[-1]) == \
        (2, "dms: error: unrecognized arguments: --password-std")
    assert sorted(path.name for path in tmp_path.iterdir()) == []


def test_a_restore_with_a_files_dir_of_its_own_says_where_the_recipe_is(tmp_path):
    result = subprocess.run(dms_command("restore", str(tmp_path / "backup.zip"), "--data-dir",
                                        str(tmp_path / "new")),
                            env=environment(DMS_FILES_DIR=str(tmp_path / "shared")),
                            capture_output=True, text=True)
    assert (result.returncode, result.stderr) == (1, (
        "dms: dms restore puts the files into DATA_DIR/files: unset DMS_FILES_DIR for the "
        "restore and move the files to the shared directory afterwards (docs/scaling.md, "
        "\"Moving from one box to several\").\n"))
    assert sorted(path.name for path in tmp_path.iterdir()) == []


def test_a_bad_setting_is_a_clear_message_and_exit_2(tmp_path):
    result = subprocess.run(dms_command("serve", "--data-dir", str(tmp_path)),
                            env=environment(DMS_PORT="eighty"), capture_output=True, text=True)
    assert (result.returncode, result.stderr) == \
        (2, "dms: DMS_PORT must be a whole number, not 'eighty'.\n")


def test_flags_win_over_environment_over_defaults():
    env = {"DMS_PORT": "9000", "DMS_HOST": "0.0.0.0", "DMS_THREADS": "3", "DMS_LOG_LEVEL": "DEBUG",
           "DMS_ADMIN_PASSWORD": "", "DMS_MAX_UPLOAD_MB": "64", "UNRELATED": "x"}
    config = Config.load({"port": "9100", "data_dir": "/srv/dms", "host": None}, env)
    assert (config.port, config.host, config.threads, config.log_level, str(config.data_dir),
            config.admin_password, config.max_upload_mb, config.admin_username) == \
           (9100, "0.0.0.0", 3, "debug", "/srv/dms", None, 64, "admin")
    assert Config.load({}, {}) == Config()
    assert "secret" not in repr(Config.load({}, {"DMS_ADMIN_PASSWORD": "secret"}))


def test_a_server_reads_tantivys_version_without_importlib_metadata():
    """A start checks its index's marker against tantivy's version: read from tantivy's metadata
    folder's name, neither importlib.metadata (zipfile, csv, email: 0.6 MiB idle) nor the native
    module are loaded for it."""
    code = ("import sys; from dms.config import Config; "
            "from dms.cli import _import_libraries_without_unused_drivers as hide; "
            "hide(Config()); import dms.runtime; from dms.search.index import tantivy_version; "
            "print(tantivy_version(), sorted(m for m in sys.modules if m in "
            "('importlib.metadata', 'tantivy', 'zipfile', 'csv')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=environment())
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == f"{importlib.metadata.version('tantivy')} []"


def test_a_command_on_sqlite_loads_no_postgresql_or_redis_driver(tmp_path):
    """They are installed here (the test extra): peewee and huey would import them for nothing
    (16 MiB of a server's memory, bench/idle.py)."""
    code = ("import sys; from dms.cli import main; main(sys.argv[1:]); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('psycopg', 'psycopg2', 'redis')))")
    result = subprocess.run([sys.executable, "-c", code, "migrate", "--data-dir",
                             str(tmp_path / "data")], capture_output=True, text=True,
                            env=environment())
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "[]"
    with_redis = subprocess.run([sys.executable, "-c", code.replace("main(sys.argv[1:])", (
        "from dms.config import Config; from dms.cli import "
        "_import_libraries_without_unused_drivers as hide; "
        "hide(Config(queue_url='redis://127.0.0.1:1/0')); import dms.runtime")), "x"],
        capture_output=True, text=True, env=environment())
    assert "'redis'" in with_redis.stdout and "psycopg" not in with_redis.stdout
