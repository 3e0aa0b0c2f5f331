"""A dry run of more than a few documents, and each slice of a rule run, match in a child process
of its own (dms.domain.rules.matcher, `dms _rules-match`), behind the server's threads: it finds
what the request's own thread finds (every kind of step: tags, folder, a title from a template, a
correspondent, a type, a custom field, the date read from the text), it stops at the dry run's
deadline (the first document always examined), and a child that fails or overruns is killed: a dry
run is answered 503 with nothing changed, a run goes on in its own thread. A run's slice starts one
child for all its batches.

On the fast tier (the domain's functions, no server; documents written straight into the database
as read); the child is a real `python -m dms _rules-match` reading the same database (SQLite's
file, or PostgreSQL's URL given on its stdin)."""

from __future__ import annotations

import os
import time

import pytest

from dms.db.models import RuleRun
from dms.domain.metadata import fields, labels
from dms.domain.rules import matcher, preview, runs
from dms.files.fairness import BEHIND_NICENESS, MOST_NICENESS
from tests.harness.database import add_document
from tests.harness.domaintier import assert_refused, home_id, inbox_id, new_folder, new_user
from tests.harness.processes import own_children
from tests.harness.rules import make_rule

LETTERS = ["Stadtwerke Musterstadt, Köln, 14. März 2024. Ihre Jahresabrechnung 2023",
           "Dear customer, your order", "Jahresabrechnung der Stadtwerke, 2. Mai 2023",
           "ACME delivery note", "Stadtwerke: Ihre Jahresabrechnung"]
# Long letters, and a long fuzzy pattern scored against every run of their words.
LONG = " ".join(f"Sehr geehrte Kundin, Ihre Rechnung Nummer {n} vom Stadtwerk Musterstadt"
                for n in range(400))
PATTERN = "Krankenversicherung Beitragsrechnung Mitgliedsnummer Versichertennummer Zahlung"


@pytest.fixture(params=["in a child", "in the thread"])
def where(request, monkeypatch):
    """Either way of matching, whatever the number of documents."""
    monkeypatch.setattr(matcher, "IN_PROCESS_DOCUMENTS",
                        0 if request.param == "in a child" else 10**6)
    return request.param


def matcher_children() -> list[int]:
    """The pids of this process' `dms _rules-match` children still there."""
    return own_children(matcher.MATCH_COMMAND)


def test_the_child_finds_what_the_thread_finds_every_kind_of_step(services, where):
    alice = new_user("alice")
    documents = [add_document(alice.id, inbox_id(alice), f"doc-{index}.txt", text)
                 for index, text in enumerate(LETTERS)]
    bills = new_folder(services, alice, "Bills", home_id(alice))
    power = labels.create(labels.CORRESPONDENTS, alice, {"name": "Stadtwerke"})
    bill = labels.create(labels.DOCUMENT_TYPES, alice, {"name": "Abrechnung"})
    amount = fields.create_field(alice, {"name": "Betrag", "data_type": "monetary"})
    rule = make_rule(alice, "Strom", "jahresabrechnung", actions={
        "add_tags": ["strom", "bill"], "move_to": bills, "set_title": "{match}: {title}",
        "set_correspondent": power.id, "set_document_type": bill.id,
        "set_custom_field": {"field": amount.id, "value": "EUR80.00"},
        "set_document_date_from_text": True})

    def changes(title: str, date: str | None) -> dict:
        return {"add_tags": ["strom", "bill"], "move_to": {"id": bills, "title": "Bills"},
                "set_title": f"Jahresabrechnung: {title}", "set_correspondent": "Stadtwerke",
                "set_document_type": "Abrechnung",
                "set_custom_field": {"field": "Betrag", "value": "EUR80.00"},
                "set_document_date": date}

    assert preview.preview(services, alice, rule.id) == preview.Preview(hits=[
        preview.Hit(documents[4], "text", "Jahresabrechnung", changes("doc-4.txt", None)),
        preview.Hit(documents[2], "text", "Jahresabrechnung",
                    changes("doc-2.txt", "2023-05-02")),
        preview.Hit(documents[0], "text", "Jahresabrechnung",
                    changes("doc-0.txt", "2024-03-14"))],
        examined=5, documents=5, complete=True)
    assert matcher_children() == []


def test_a_child_that_fails_is_answered_503_and_changes_nothing(services, config, monkeypatch):
    alice = new_user("alice")
    documents = [add_document(alice.id, inbox_id(alice), f"doc-{index}.txt", text)
                 for index, text in enumerate(LETTERS)]
    rule = make_rule(alice, "Strom", "jahresabrechnung", actions={"add_tags": ["strom"]})
    # A command the child does not know: it ends with status 2 and answers nothing.
    monkeypatch.setattr(matcher, "MATCH_COMMAND", "_no-such-command")
    monkeypatch.setattr(matcher, "IN_PROCESS_DOCUMENTS", 5)  # five: no child
    result = preview.preview(services, alice, rule.id)
    assert ([hit.document_id for hit in result.hits], result.examined) == (
        [documents[4], documents[2], documents[0]], 5)
    monkeypatch.setattr(matcher, "IN_PROCESS_DOCUMENTS", 4)  # more: the child
    assert_refused(config, lambda: preview.preview(services, alice, rule.id), "unavailable",
                   matcher.FAILED, None)
    assert services.dry_runs.held() == {}
    assert matcher_children() == []


@pytest.mark.config(rules_preview_seconds=0.1, rules_max_seconds=0.01)
def test_a_child_that_overruns_is_killed(services, config, monkeypatch):
    monkeypatch.setattr(matcher, "IN_PROCESS_DOCUMENTS", 0)
    monkeypatch.setattr(matcher, "GRACE_SECONDS", -0.1)  # waited for ~0.01 s: less than a start
    alice = new_user("alice")
    add_document(alice.id, inbox_id(alice), "doc.txt", LETTERS[0])
    rule = make_rule(alice, "Strom", "jahresabrechnung", actions={"add_tags": ["strom"]})
    assert_refused(config, lambda: preview.preview(services, alice, rule.id), "unavailable",
                   matcher.FAILED, None)
    assert matcher_children() == []
    assert services.dry_runs.held() == {}


@pytest.mark.config(rules_preview_seconds=0.5)
def test_the_child_stops_at_the_dry_runs_deadline(services):
    alice = new_user("alice")
    for index in range(300):
        add_document(alice.id, inbox_id(alice), f"long-{index}.txt", LONG)
    rule = make_rule(alice, "Insurance", PATTERN, algorithm="fuzzy",
                     actions={"add_tags": ["insurance"]})
    started = time.monotonic()
    result = preview.preview(services, alice, rule.id)
    took = time.monotonic() - started
    assert (result.hits, result.documents, result.complete) == ([], 300, False)
    assert result.examined < 300
    # The deadline counts from the request: the child's start is inside it; one document's
    # matching (DMS_RULES_MAX_SECONDS at most, milliseconds here) may pass it.
    assert took < 0.5 + 1.5, took


def test_the_first_document_is_examined_even_past_the_deadline(services, config):
    """A batch whose time a child's start used up still moves its run on."""
    alice = new_user("alice")
    documents = [add_document(alice.id, inbox_id(alice), f"doc-{index}.txt", text)
                 for index, text in enumerate(LETTERS)]
    rule = make_rule(alice, "Strom", "jahresabrechnung", actions={"add_tags": ["strom"]})
    late = matcher.match_here(alice.id, rule.id, documents, time.monotonic() - 1,
                              config.rules_max_text_chars, config.rules_max_seconds)
    assert (late.examined, [found[0] for found in late.matched]) == (1, [documents[0]])
    with matcher.Child(config, 1) as child:
        answered = child.match(alice.id, rule.id, documents, 0)
    assert (answered.examined, [found[0] for found in answered.matched]) == (1, [documents[0]])
    assert matcher_children() == []


class Recorded(matcher.Child):
    """matcher.Child, its processes noted (which the run's slices start, that they end) with
    their CPU priority as started."""
    started: list = []

    def __init__(self, config, seconds, behind=BEHIND_NICENESS):
        super().__init__(config, seconds, behind)
        Recorded.started.append((self.process, os.getpriority(os.PRIO_PROCESS, self.process.pid)))


def run_slices(config, run_id: str) -> int:
    """The run driven slice by slice, as a node's worker drives it; how many slices it took."""
    slices = 1
    while runs.execute(config, run_id, "test-worker", lambda: False) == 0:
        slices += 1
    return slices


def test_a_runs_slice_matches_all_its_batches_in_one_child(services, config, monkeypatch):
    monkeypatch.setattr(Recorded, "started", [])
    monkeypatch.setattr(matcher, "Child", Recorded)
    alice = new_user("alice")
    for index in range(130):
        add_document(alice.id, inbox_id(alice), f"doc-{index}.txt", LETTERS[index % 5])
    rule = make_rule(alice, "Strom", "jahresabrechnung", actions={"add_tags": ["strom"]})
    run = runs.start_run(alice, rule.id)
    assert run_slices(config, run.id) == 1  # three batches of 50, 50 and 30 in the one slice
    done = RuleRun.get_by_id(run.id)
    assert (done.state, done.examined, done.matched, done.changed) == (
        "succeeded", 130, 78, 78)
    # One child, at the lowest priority there is (behind the children that serve requests),
    # that ended on its own.
    assert [(process.returncode, niceness) for process, niceness in Recorded.started] == [
        (0, MOST_NICENESS)]
    assert matcher_children() == []

    # A run over a few documents matches them in its thread: no child.
    bob = new_user("bob")
    for index in range(matcher.IN_PROCESS_DOCUMENTS):
        add_document(bob.id, inbox_id(bob), f"doc-{index}.txt", LETTERS[index % 5])
    rule = make_rule(bob, "Strom", "jahresabrechnung", actions={"add_tags": ["strom"]})
    run = runs.start_run(bob, rule.id)
    assert run_slices(config, run.id) == 1
    assert (RuleRun.get_by_id(run.id).matched, len(Recorded.started)) == (12, 1)
    assert matcher_children() == []


def test_a_run_whose_child_fails_goes_on_in_its_thread(services, config, monkeypatch, caplog):
    monkeypatch.setattr(matcher, "MATCH_COMMAND", "_no-such-command")
    alice = new_user("alice")
    for index in range(60):
        add_document(alice.id, inbox_id(alice), f"doc-{index}.txt", LETTERS[index % 5])
    rule = make_rule(alice, "Strom", "jahresabrechnung", actions={"add_tags": ["strom"]})
    run = runs.start_run(alice, rule.id)
    assert run_slices(config, run.id) == 1
    done = RuleRun.get_by_id(run.id)
    assert (done.state, done.examined, done.matched, done.changed) == (
        "succeeded", 60, 36, 36)
    waited = runs.BATCH_SECONDS + config.rules_max_seconds + matcher.GRACE_SECONDS
    assert [record.getMessage() for record in caplog.records if record.name == "dms.rules"] == [
        f"a rule's matching in a child process failed or took longer than {waited:.0f} s "
        f"(status 2)"]  # once: the rest of the slice in the thread
    assert matcher_children() == []
