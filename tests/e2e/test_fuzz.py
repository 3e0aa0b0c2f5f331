"""Property-based fuzzing with schemathesis against /openapi.json on a live server (bounded
examples): no 5xx, every response matches the document, every error has the envelope."""

from __future__ import annotations

import threading

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import checks

from dms.config import Config
from dms.web.server import Server
from tests.harness.client import Client
from tests.harness.users import ADMIN_PASSWORD

# Sockets (pytest-socket): schemathesis calls a server over HTTP.
pytestmark = pytest.mark.enable_socket

MAX_EXAMPLES = 15
# What the document promises: no server error, only documented statuses and content types,
# bodies (errors included) of the documented shape. Not included: schemathesis' guesses about
# which schema-valid requests must succeed (a valid UUID that names no folder is still a 400).
CHECKS = [checks.not_a_server_error, checks.status_code_conformance,
          checks.content_type_conformance, checks.response_schema_conformance]
# Logging out would revoke the token the fuzzer uses for every later case.
SKIPPED = {("POST", "/auth/logout/"), ("POST", "/auth/logoutall/"),
           ("POST", "/api/auth/logout/"), ("POST", "/api/auth/logoutall/")}


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    # Event streams end after a second: each example of GET /events/ is one.
    config = Config(host="127.0.0.1", port=0, data_dir=tmp_path_factory.mktemp("fuzz") / "data",
                    threads=4, admin_password=ADMIN_PASSWORD, ocr_workers=1,
                    events_max_seconds=1)
    server = Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    admin = Client(server.url).login("admin", ADMIN_PASSWORD)
    yield server, admin
    server.stop()
    thread.join(15)


def fuzz(operation, headers) -> None:
    @given(case=operation.as_strategy())
    @settings(max_examples=MAX_EXAMPLES, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    def run(case):
        case.call_and_validate(headers=headers, checks=CHECKS)

    run()


@pytest.mark.slow
def test_every_operation_conforms_to_the_document(live):
    server, admin = live
    schema = schemathesis.openapi.from_url(server.url + "/openapi.json")
    failures = []
    for result in schema.get_all_operations():
        operation = result.ok()
        if (operation.method.upper(), operation.path) in SKIPPED:
            continue
        try:
            fuzz(operation, {"Authorization": f"Token {admin.token}"})
        except (Exception, BaseExceptionGroup) as error:  # collect all: one report lists every one
            failures.append(f"{operation.method.upper()} {operation.path}: {error}")
    assert failures == [], "\n\n".join(failures)
