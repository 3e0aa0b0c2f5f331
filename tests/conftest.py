"""Fixtures: an isolated config on a tmp data dir, a real waitress server on an ephemeral port,
and logged-in clients for the admin and for ordinary users made through the API. The clients
call the server's WSGI app in-process; a test marked `socket` gets clients that go through
waitress on the socket instead (tests/README.md says which tests need that)."""

from __future__ import annotations

import contextlib
import itertools
import os
import socket

import pytest
import pytest_socket
import requests

from dms.config import Config
from dms.domain import credentials
from dms.files.modes import restrict_umask
from tests.harness import appserver, domaintier
from tests.harness.client import Client
from tests.harness.inprocess import WsgiAdapter
from tests.harness.pgcluster import Cluster
from tests.harness.s3server import S3Server
from tests.harness.users import ADMIN_PASSWORD, add_user

# Tests only: a cheap scrypt cost (each hash stores its own cost, so checks still work). The
# servers started as subprocesses (test_cli, test_dist) keep the real cost.
credentials.SCRYPT_N = 2 ** 8

# As every dms command does at its start (dms.cli.main): what the servers of this process write is
# owner-only, as in production. Throwaway servers of other programs chmod what they share.
restrict_umask()


def pytest_addoption(parser):
    parser.addoption("--engine", choices=("sqlite", "postgresql"),
                     default=os.environ.get("DMS_TEST_ENGINE", "sqlite"),
                     help="the database of every test's server: SQLite files in tmp dirs, or "
                          "databases of a throwaway PostgreSQL cluster "
                          "(tests/harness/pgcluster.py)")


def pytest_collection_modifyitems(config, items):
    """--engine postgresql runs the tests that touch the database through dms; those about
    SQLite itself are left to the SQLite run, and those about PostgreSQL itself to this one."""
    unwanted = "sqlite_only" if config.getoption("--engine") == "postgresql" else "postgresql_only"
    keep = [item for item in items if item.get_closest_marker(unwanted) is None]
    for item in keep:  # a test on the socket may open one (pytest-socket's --disable-socket)
        if item.get_closest_marker("socket") is not None:
            item.add_marker(pytest.mark.enable_socket)
    config.hook.pytest_deselected(items=[item for item in items if item not in keep])
    items[:] = keep


@contextlib.contextmanager
def sockets_allowed():
    """The session's own servers start on loopback (a free port is found with a socket) whatever
    the test that first needs them allows: pytest-socket blocks sockets test by test, and a
    fast-tier test may come first. The blocking the test had is put back after."""
    saved = socket.socket, socket.getaddrinfo, socket.gethostbyname
    pytest_socket.enable_socket()
    try:
        yield
    finally:
        socket.socket, socket.getaddrinfo, socket.gethostbyname = saved


@pytest.fixture(scope="session")
def engine(pytestconfig) -> str:
    return pytestconfig.getoption("--engine")


@pytest.fixture(scope="session")
def postgres(engine):
    """The session's PostgreSQL cluster (None on the SQLite run)."""
    if engine != "postgresql":
        yield None
        return
    with sockets_allowed():
        cluster = Cluster().start()
    try:
        cluster.make_template()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def s3_server():
    """A throwaway S3 server for the module (SeaweedFS on loopback, tests/harness/s3server.py):
    `endpoint`, `bucket`, `access_key`, `secret_key`, `region`, `client()`. A module using it
    asks for sockets (pytestmark enable_socket or socket); a test that kills or pauses it brings
    it back before it ends."""
    with sockets_allowed():
        server = S3Server().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def database_url(postgres) -> str | None:
    """A fresh, migrated database for this test on PostgreSQL; None on SQLite."""
    return postgres.new_database() if postgres is not None else None


@pytest.fixture
def config(tmp_path, request, database_url) -> Config:
    """A config on a fresh data dir (and database); `@pytest.mark.config(name=value)` changes a
    setting."""
    marker = request.node.get_closest_marker("config")
    overrides = marker.kwargs if marker else {}
    # threads and events_max_streams: fewer waitress threads than a real server's (4 + 8, not
    # 8 + 50), as the suite starts hundreds of servers in one process.
    settings = dict(host="127.0.0.1", port=0, data_dir=tmp_path / "data", threads=4,
                    events_max_streams=8, admin_username="admin",
                    admin_password=ADMIN_PASSWORD, ocr_workers=1, database_url=database_url,
                    # Tests written before DMS_OCR_LANG read the installed languages (api.md §22)
                    # expect eng; the default itself has its own tests.
                    ocr_lang="eng")
    return Config(**{**settings, **overrides})


@pytest.fixture
def server(config, socket_enabled):
    """A real server on an ephemeral loopback port; the test may open sockets (pytest-socket:
    every other test may not, unless it asks for `socket_enabled` or is marked enable_socket)."""
    server = appserver.start(config, "test-server")
    # Answered once run() serves: the queue's workers and the search indexer have started. A
    # request over the socket waits for that by itself; one in-process would not.
    requests.get(server.url + "/api/version/", timeout=60).raise_for_status()
    yield server
    appserver.stop(server)


@pytest.fixture
def anon(server, request) -> Client:
    """The anonymous client, in-process unless the test is marked `socket`; `admin`, `make_user`,
    `alice` and `bob` log in through it and keep its transport."""
    if request.node.get_closest_marker("socket") is not None:
        return Client(server.url)
    return Client(server.url, transport=WsgiAdapter(server.wsgi_app, server.config.url_prefix))


@pytest.fixture
def admin(anon) -> Client:
    return anon.login("admin", ADMIN_PASSWORD)


@pytest.fixture
def make_user(admin):
    """make_user(**attributes) -> a logged-in Client for a new user with USER_PASSWORD."""
    counter = itertools.count(1)

    def make(username: str | None = None, **attributes) -> Client:
        return add_user(admin, username or f"user{next(counter)}", **attributes)

    return make


@pytest.fixture
def alice(make_user) -> Client:
    return make_user("alice")


@pytest.fixture
def bob(make_user) -> Client:
    return make_user("bob")


# The fast domain tier (tests/harness/domaintier.py): domain functions called directly on a
# migrated database, no server thread, no socket.
@pytest.fixture(scope="session")
def sqlite_template(engine, tmp_path_factory):
    """The session's migrated SQLite file that each fast-tier test copies (None on PostgreSQL,
    whose test databases are clones of a migrated template already)."""
    if engine == "postgresql":
        return None
    return domaintier.migrated_sqlite(tmp_path_factory.mktemp("template"))


@pytest.fixture
def services(config, sqlite_template):
    """The domain's services on this test's own migrated database, without a server."""
    with domaintier.domain_services(config, sqlite_template) as services:
        yield services


@pytest.fixture
def reading(config, sqlite_template):
    """The fast tier with the queue's workers and the search indexer: uploads get read, searches
    find them (still no server, no socket)."""
    with domaintier.domain_services(config, sqlite_template, workers=True) as services:
        yield services


@pytest.fixture
def root(services):
    """The first superuser, as a domain User (the fast tier's `admin`)."""
    return domaintier.new_user("admin", is_superuser=True, is_staff=True)
