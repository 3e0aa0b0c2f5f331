"""The consume folder's duplicates (api.md §22, "What went wrong is visible";
dms.domain.duplicates), with the real server polling it: a file its user already has is refused
to .failed/ beside its reason, which names the existing document, and listed among the user's
intake refusals — not dropped without a word; DMS_CONSUME_IF_DUPLICATE=keep imports it again."""

from __future__ import annotations

import dataclasses

import pytest

from dms.config import Config, ConfigError
from tests.harness import samples
from tests.harness.consume import CONSUME, inbox_titles, looks
from tests.harness.database import query_sql
from tests.harness.documents import make_folder, new_document, upload_accepted
from tests.harness.waiting import wait_for

SCAN = samples.pdf(["Stadtwerke invoice 4711, scanned twice"])
REASON = "You already have this file: \u201cMarch invoice\u201d in Bills."


@pytest.fixture
def config(config, tmp_path):
    """Every server here polls a consume folder five times a second."""
    return dataclasses.replace(config, consume_dir=tmp_path / "consume", **CONSUME)


def already_filed(alice) -> str:
    bills = make_folder(alice, "Bills", alice.home_id)
    document = new_document(alice, "March invoice", bills)
    upload_accepted(alice, document, "invoice.pdf", SCAN)
    return document


def test_a_file_the_user_already_has_is_a_refusal_naming_the_existing_document(alice, config,
                                                                               consume_dir):
    already_filed(alice)
    (consume_dir / alice.username / "2026").mkdir(parents=True)
    (consume_dir / alice.username / "2026" / "scan.pdf").write_bytes(SCAN)
    failed = consume_dir / ".failed" / alice.username / "2026" / "scan.pdf"
    wait_for(lambda: failed.with_name("scan.pdf.txt").is_file())
    assert failed.read_bytes() == SCAN
    assert failed.with_name("scan.pdf.txt").read_text() == REASON + "\n"
    # The file is moved aside before its refusal is recorded: the listing may lag a moment.
    [refusal] = wait_for(lambda: alice.get("/api/intake/refusals/").json()["data"])
    assert refusal["attributes"] == {"source": "consume", "name": "2026/scan.pdf",
                                     "origin": None, "reason": REASON,
                                     "refused_at": refusal["attributes"]["refused_at"]}
    assert inbox_titles(alice) == {"2026": inbox_titles(alice)["2026"]}  # its folder, empty
    assert inbox_titles(alice, inbox_titles(alice)["2026"]) == {}
    assert query_sql(config, "SELECT count(*) FROM document_version") == [(1,)]


@pytest.mark.config(consume_if_duplicate="keep")
def test_with_keep_a_copy_is_imported_again(alice, config, consume_dir):
    already_filed(alice)
    (consume_dir / alice.username).mkdir(parents=True)
    (consume_dir / alice.username / "scan.pdf").write_bytes(SCAN)
    wait_for(lambda: "scan.pdf" in inbox_titles(alice))
    looks()
    assert alice.get("/api/intake/refusals/").json()["data"] == []
    assert query_sql(config, "SELECT count(*) FROM document_version") == [(2,)]


def test_the_setting_is_refuse_or_keep():
    assert Config.load({}, {}).consume_if_duplicate == "refuse"
    assert Config.load({}, {"DMS_CONSUME_IF_DUPLICATE": "KEEP"}).consume_if_duplicate == "keep"
    with pytest.raises(ConfigError) as refused:
        Config.load({}, {"DMS_CONSUME_IF_DUPLICATE": "drop"})
    assert str(refused.value) == "DMS_CONSUME_IF_DUPLICATE must be refuse or keep, not 'drop'."
