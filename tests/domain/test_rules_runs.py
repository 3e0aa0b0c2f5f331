"""Trying a rule before trusting it (docs/api.md, "Rules"): the dry run over existing documents
changes nothing and is bounded per request; a run over 1,000 documents in the background counts
exactly what it matched and changed, writes one `rule_applied` per changed document, refuses a third
run at once (429), and fails, saying why, when its rule is deleted meanwhile; another user's run is
not found.

The rules on the fast tier (the domain's functions, no server; the documents written straight into
the database as read, a run driven slice by slice in the test's thread as a node's worker drives
it); through the API what a client sees of them: the dry run's page of documents with `rule_match`,
a run answered 202 and followed, 429 at once, another user's 404, anonymous 401."""

from __future__ import annotations

import pytest

from dms.db.models import RuleRun
from dms.domain import tags
from dms.domain.rules import preview, runs, store
from tests.harness.client import NOT_FOUND, VND, assert_error
from tests.harness.database import add_document, execute_sql, query_sql, snapshot
from tests.harness.documents import make_folder
from tests.harness.domaintier import (
    assert_refused,
    filed,
    home_id,
    inbox_id,
    new_folder,
    new_user,
)
from tests.harness.rules import add_rule, finished_run, make_rule

CASES = ["ACME invoice 11 for tools", "Stadtwerke bill", "Dear customer, your order",
         "ACME delivery note", "Invoice 12 of ACME"]
UNDER_WAY = "You have 2 rule runs under way; try again when one has finished."

# What the rule would set of a document's metadata (api.md §16): nothing here.
NO_METADATA = {"set_correspondent": None, "set_document_type": None, "set_custom_field": None,
               "set_document_date": None}


def documents_of(user_id: str, inbox: str, texts: list[str]) -> list[str]:
    """A read text document in the inbox for each of `texts`, titled doc-0000.txt, doc-0001.txt,
    ..., in that order (the last one the most recently changed); their ids."""
    return [add_document(user_id, inbox, f"doc-{index:04d}.txt", text)
            for index, text in enumerate(texts)]


def test_the_dry_run_shows_what_a_rule_would_do_and_changes_nothing(services, config):
    alice = new_user("alice")
    documents = documents_of(alice.id, inbox_id(alice), CASES)
    archive = new_folder(services, alice, "ACME", home_id(alice))
    tags.change_node_tags(alice, documents[4], ["acme"], "replace")
    rule = make_rule(alice, "ACME", "acme", enabled=False, sources=["mail"],
                     actions={"add_tags": ["acme", "supplier"], "move_to": archive,
                              "set_title": "ACME: {title}", "stop": True})
    before = snapshot(config)
    result = preview.preview(services, alice, rule.id)
    assert snapshot(config) == before
    # The most recently changed first: doc 4, then 3, then 0.
    assert (result.examined, result.documents, result.complete) == (5, 5, True)
    assert result.hits == [
        preview.Hit(documents[4], "text", "ACME", {
            "add_tags": ["supplier"], "move_to": {"id": archive, "title": "ACME"},
            "set_title": "ACME: doc-0004.txt", **NO_METADATA}),
        preview.Hit(documents[3], "text", "ACME", {
            "add_tags": ["acme", "supplier"], "move_to": {"id": archive, "title": "ACME"},
            "set_title": "ACME: doc-0003.txt", **NO_METADATA}),
        preview.Hit(documents[0], "text", "ACME", {
            "add_tags": ["acme", "supplier"], "move_to": {"id": archive, "title": "ACME"},
            "set_title": "ACME: doc-0000.txt", **NO_METADATA})]
    assert [filed(alice, document)[:2] for document in documents] == \
        [(f"doc-{index:04d}.txt", inbox_id(alice)) for index in range(5)]
    bob = new_user("bob")
    assert_refused(config, lambda: preview.preview(services, bob, rule.id), "not_found",
                   "Not found.", None)


def test_the_dry_run_is_answered_a_page_of_documents_with_what_would_change(alice, bob, config):
    """Through the API: the matched documents as node resources with `rule_match`, paginated,
    with the dry run's counts in `meta`; another user's rule is not found."""
    documents = documents_of(alice.user_id, alice.inbox_id, CASES)
    archive = make_folder(alice, "ACME", alice.home_id)
    rule = add_rule(alice, "ACME", "acme", actions={"add_tags": ["supplier"],
                                                   "move_to": archive})
    before = snapshot(config)
    response = alice.get(f"/api/rules/{rule['id']}/matches/?page[size]=2")
    assert (response.status_code, response.headers["Content-Type"]) == (200, VND)
    body = response.json()
    assert [item["id"] for item in body["data"]] == [documents[4], documents[3]]
    assert body["meta"] == {"pagination": {"page": 1, "pages": 2, "count": 3},
                            "examined": 5, "documents": 5, "complete": True}
    assert (body["data"][0]["type"], body["data"][0]["attributes"]["title"],
            body["data"][0]["attributes"]["rule_match"]) == ("documents", "doc-0004.txt", {
                "field": "text", "text": "ACME", "changes": {
                    "add_tags": ["supplier"], "move_to": {"id": archive, "title": "ACME"},
                    "set_title": None, **NO_METADATA}})
    last = alice.get(body["links"]["next"]).json()
    assert [item["id"] for item in last["data"]] == [documents[0]]
    assert snapshot(config) == before
    assert bob.get(f"/api/rules/{rule['id']}/matches/").json() == NOT_FOUND


@pytest.mark.config(rules_preview_documents=3)
def test_the_dry_run_examines_a_bounded_number_of_documents(services):
    alice = new_user("alice")
    documents_of(alice.id, inbox_id(alice), CASES)
    rule = make_rule(alice, "Stadtwerke", "stadtwerke", actions={"add_tags": ["bill"]})
    # The three most recent (4, 3, 2) were examined; the bill (1) was not reached.
    assert preview.preview(services, alice, rule.id) == preview.Preview(
        hits=[], examined=3, documents=5, complete=False)


def run_to_end(config, run_id: str) -> RuleRun:
    """The run driven slice by slice, as a node's worker drives it, until it ended."""
    while runs.execute(config, run_id, "test-worker", lambda: False) == 0:
        pass
    return RuleRun.get_by_id(run_id)


def test_a_run_over_a_thousand_documents_counts_exactly(services, config):
    alice = new_user("alice")
    texts = [f"Invoice {n} of ACME" if n % 5 < 3 else f"Letter {n} from a friend"
             for n in range(1000)]
    documents = documents_of(alice.id, inbox_id(alice), texts)
    invoices = [document for n, document in enumerate(documents) if n % 5 < 3]
    for document in invoices[:100]:  # already tagged: matched, but not changed
        tags.change_node_tags(alice, document, ["invoice"], "replace")
    rule = make_rule(alice, "Invoices", "invoice acme", algorithm="all",
                     actions={"add_tags": ["invoice"]})
    nothing = make_rule(alice, "Nothing", "zebra", actions={"add_tags": ["zebra"]})
    doomed = make_rule(alice, "Doomed", "friend", actions={"add_tags": ["friend"]})

    run = runs.start_run(alice, rule.id)
    assert (run.state, run.rule_name, run.rule_id) == ("queued", "Invoices", rule.id)
    second = runs.start_run(alice, nothing.id)
    assert_refused(config, lambda: runs.start_run(alice, doomed.id), "throttled", UNDER_WAY,
                   None)
    bob = new_user("bob")
    assert_refused(config, lambda: runs.owned_run(bob, run.id), "not_found", "Not found.", None)

    done = run_to_end(config, run.id)
    assert (done.state, done.examined, done.matched, done.changed, done.error) \
        == ("succeeded", 1000, 600, 500, None)
    assert (run_to_end(config, second.id).matched, RuleRun.get_by_id(second.id).state) == \
        (0, "succeeded")
    assert query_sql(config, "SELECT count(*), count(DISTINCT node_id) FROM event WHERE "
                             "owner_id = ? AND action = 'rule_applied'", alice.id) == [(500, 500)]
    tagged = query_sql(config, "SELECT count(*) FROM node_tag AS nt JOIN tag AS t "
                               "ON t.id = nt.tag_id WHERE t.owner_id = ? AND t.name = 'invoice'",
                       alice.id)
    assert tagged == [(600,)]

    # A run whose rule is deleted while it runs (after its first batch) fails, saying so, with
    # what it did so far.
    failing = runs.start_run(alice, doomed.id)
    assert runs.execute(config, failing.id, "test-worker", lambda: False, slice_seconds=0) == 0
    store.delete_rule(alice, doomed.id)
    failed = run_to_end(config, failing.id)
    assert (failed.state, failed.error, failed.examined) == \
        ("failed", "The rule was deleted while it ran.", runs.BATCH_DOCUMENTS)


def test_a_run_is_answered_at_once_and_only_its_owner_follows_it(alice, bob, admin, anon,
                                                                  config):
    """Through the API: 202 with the queued run, followed to its end; 429 at once (with
    Retry-After) while two runs are under way; another user's run is not found, anonymous 401."""
    document = add_document(alice.user_id, alice.inbox_id, "doc-0000.txt", "Invoice 1 of ACME")
    rule = add_rule(alice, "Invoices", "invoice acme", algorithm="all",
                    actions={"add_tags": ["invoice"]})
    response = alice.post(f"/api/rules/{rule['id']}/apply/")
    assert (response.status_code, response.headers["Content-Type"]) == (202, VND), response.text
    run = response.json()["data"]
    assert (run["type"], run["attributes"]["state"], run["attributes"]["rule_name"],
            run["relationships"]) == ("rule-runs", "queued", "Invoices",
                                      {"rule": {"data": {"type": "rules", "id": rule["id"]}}})
    for client in (bob, admin):
        assert client.get(f"/api/rule-runs/{run['id']}/").json() == NOT_FOUND
    assert anon.get(f"/api/rule-runs/{run['id']}/").status_code == 401
    done = finished_run(alice, run["id"])
    assert (done["state"], done["examined"], done["matched"], done["changed"], done["error"]) \
        == ("succeeded", 1, 1, 1, None)
    assert filed_tags(alice, document) == ["invoice"]

    # Two runs another node's worker holds: a third is refused at once.
    for number in range(2):
        execute_sql(config, "INSERT INTO rule_run (id, owner_id, rule_id, rule_name, state, "
                            "worker_id, lease_until, created_at) VALUES "
                            "(?, ?, ?, 'Invoices', 'running', 'another-node', ?, "
                            "'2026-01-01 00:00:00.000000')",
                    f"00000000-0000-4000-8000-{number:012d}", alice.user_id, rule["id"],
                    4102444800.0)
    before = snapshot(config)
    response = alice.post(f"/api/rules/{rule['id']}/apply/")
    assert_error(response, 429, "throttled", UNDER_WAY)
    assert response.headers["Retry-After"] == str(runs.RETRY_AFTER_SECONDS)
    assert snapshot(config) == before


def filed_tags(client, document_id: str) -> list[str]:
    attributes = client.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]
    return [tag["name"] for tag in attributes["tags"]]
