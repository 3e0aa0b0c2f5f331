"""Rules on what the intake brings in (docs/api.md, "Rules"): a real Dovecot mailbox's
attachments filed by their sender into a folder and retitled from the message's subject; the consume
folder's files and `dms import`'s run the rules of their source, not those of others."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from tests.harness import samples
from tests.harness.consume import CONSUME, inbox_titles
from tests.harness.documents import make_folder
from tests.harness.mail import add_account, check, message
from tests.harness.processes import config_args, environment
from tests.harness.rules import add_rule, applied, filed
from tests.harness.waiting import wait_for, wait_processed

BILL = samples.pdf(["Stadtwerke Musterstadt", "Electricity bill November 2026",
                    "Total 93.20 EUR"])


@pytest.fixture
def config(config, tmp_path):
    """The server polls a consume folder five times a second."""
    return dataclasses.replace(config, consume_dir=tmp_path / "consume", **CONSUME)


def test_a_mailbox_attachment_is_filed_by_its_sender(alice, mailbox, imap):
    bills = make_folder(alice, "Utility bills", alice.home_id)
    rule = add_rule(alice, "Utility bills", "billing@stadtwerke.example", field="mail_from",
                    algorithm="exact", sources=["mail"],
                    actions={"move_to": bills, "add_tags": ["utilities"],
                             "set_title": "{mail_subject} ({created:%Y})"})
    add_rule(alice, "Only consumed", "stadtwerke", field="any", sources=["consume"],
             actions={"add_tags": ["consumed"]})
    raw, _ = message("Your bill November", [("bill.pdf", BILL, "application/pdf")])
    imap.append(*mailbox, raw)
    account = add_account(alice, mailbox, imap)
    assert check(alice, account["id"])["attributes"]["imported_count"] == 1
    document = inbox_titles(alice)["bill.pdf"]  # until its text is known
    assert wait_processed(alice, document)[-1] == "succeeded"
    created = alice.get(f"/api/documents/{document}/").json()["data"]["attributes"]["created_at"]
    title = f"Your bill November ({created[:4]})"
    assert filed(alice, document) == (title, bills, ["utilities"])
    assert applied(alice, document) == [{
        "rule": {"id": rule["id"], "name": "Utility bills"}, "field": "mail_from",
        "tags": ["utilities"], "renamed": {"from": "bill.pdf", "to": title},
        "moved": {"from": {"id": alice.inbox_id, "title": ".inbox"},
                  "to": {"id": bills, "title": "Utility bills"}}}]


def test_the_consume_folder_runs_its_rules(alice, consume_dir):
    add_rule(alice, "Consumed bills", "electricity bill", algorithm="exact",
             sources=["consume"], actions={"add_tags": ["consumed"]})
    add_rule(alice, "Mail only", "stadtwerke", sources=["mail"], actions={"add_tags": ["mail"]})
    target = consume_dir / alice.username / "bill.pdf"
    target.parent.mkdir(parents=True)
    target.write_bytes(BILL)
    document = wait_for(lambda: inbox_titles(alice).get("bill.pdf"))
    assert wait_processed(alice, document)[-1] == "succeeded"
    assert filed(alice, document) == ("bill.pdf", alice.inbox_id, ["consumed"])


def test_dms_import_runs_the_rules_of_its_source(alice, config, tmp_path):
    add_rule(alice, "Imported", "stadtwerke", sources=["import"],
             actions={"add_tags": ["imported"], "set_title": "Bill {file_name}"})
    add_rule(alice, "From the API", "stadtwerke", sources=["api"], actions={"add_tags": ["api"]})
    scan = tmp_path / "old bill.pdf"
    scan.write_bytes(BILL)
    result = subprocess.run([sys.executable, "-m", "dms", "import", str(scan),
                             "--user", alice.username, *config_args(config)],
                            env=environment(), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    document = wait_for(lambda: inbox_titles(alice).get("old bill.pdf")
                        or inbox_titles(alice).get("Bill old bill.pdf"))
    assert wait_processed(alice, document)[-1] == "succeeded"
    assert filed(alice, document) == ("Bill old bill.pdf", alice.inbox_id, ["imported"])
