"""Fixtures of the intake tests: the consume folder of the test's server (test_consume_*, whose
servers poll it), a throwaway Dovecot, started once for each module, with a new IMAP user for
each test (test_mail_import, test_mail_accounts, test_mail_recovery), and servers that let their
users reach those loopback IMAP servers."""

from __future__ import annotations

import dataclasses

import pytest

from tests.harness.imapserver import ImapServer
from tests.harness.mail import MAIL_PASSWORD, names


@pytest.fixture
def config(config, request):
    """The test's config with DMS_OUTBOUND_ALLOW=127.0.0.1: the mail servers of these tests are
    on loopback, which an ordinary user reaches only when the administrator allows it (api.md,
    "Outbound connections"). A test that sets outbound_allow with its config marker gets what it
    says."""
    marker = request.node.get_closest_marker("config")
    if marker is not None and "outbound_allow" in marker.kwargs:
        return config
    return dataclasses.replace(config, outbound_allow=("127.0.0.1",))


@pytest.fixture
def consume_dir(config):
    return config.consume_dir


@pytest.fixture(scope="module")
def imap():
    server = ImapServer().start()
    yield server
    server.stop()


@pytest.fixture
def mailbox(imap):
    """A new IMAP user of its own: (name, password)."""
    name = f"mailuser{next(names)}"
    imap.add_user(name, MAIL_PASSWORD)
    return name, MAIL_PASSWORD
