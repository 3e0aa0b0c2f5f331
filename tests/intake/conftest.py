"""Fixtures of the intake tests: the consume folder of the test's server (test_consume_*, whose
servers poll it), and a throwaway Dovecot, started once for each module, with a new IMAP user for
each test (test_mail_import, test_mail_accounts, test_mail_recovery)."""

from __future__ import annotations

import pytest

from tests.harness.imapserver import ImapServer
from tests.harness.mail import MAIL_PASSWORD, names


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
