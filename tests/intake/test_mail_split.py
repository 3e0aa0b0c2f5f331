"""A mail attachment that is a scanned batch is split at its separator sheets before it becomes
documents (DMS_SPLIT_ON_BARCODE), against the real Dovecot of tests/intake/conftest.py: three
documents with the message's subject and sender, each once, also when the account is checked
again."""

from __future__ import annotations

import pytest

from tests.harness.mail import SEEN, add_account, check, flags, inbox, message
from tests.harness.pdfops import six_page_batch

pytestmark = pytest.mark.config(split_on_barcode=True)


def test_a_batch_attachment_is_split_once(alice, mailbox, imap):
    raw, message_id = message("Scans from the office", [("batch.pdf", six_page_batch(),
                                                         "application/pdf")])
    uid = imap.append(*mailbox, raw)
    account = add_account(alice, mailbox, imap)
    attributes = check(alice, account["id"], timeout=120)["attributes"]
    assert (attributes["imported_count"], attributes["last_error"]) == (3, None)
    documents = inbox(alice)
    assert sorted(documents) == ["batch-1.pdf", "batch-2.pdf", "batch-3.pdf"]
    assert [documents[title]["attributes"]["page_count"] for title in sorted(documents)] == \
        [1, 2, 1]
    assert {documents[title]["attributes"]["mail"]["message_id"] for title in documents} == \
        {message_id}
    assert SEEN in flags(imap, mailbox)[uid]
    with imap.client(*mailbox) as client:  # unseen again: the next check looks at it again
        client.select_folder("INBOX")
        client.remove_flags([uid], [SEEN])
    check(alice, account["id"], timeout=120)
    assert sorted(inbox(alice)) == ["batch-1.pdf", "batch-2.pdf", "batch-3.pdf"]
