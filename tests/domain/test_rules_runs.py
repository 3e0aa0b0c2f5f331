"""Trying a rule before trusting it (docs/api.md, "Rules"): the dry run over existing documents
changes nothing and is bounded per request; a run over 1,000 documents in the background counts
exactly what it matched and changed, writes one `rule_applied` per changed document, refuses a third
run at once (429), and fails, saying why, when its rule is deleted meanwhile; another user's run is
not found."""

from __future__ import annotations

import pytest

from tests.harness.client import NOT_FOUND, VND, assert_error
from tests.harness.database import query_sql, snapshot
from tests.harness.documents import make_folder
from tests.harness.rules import add_rule, filed, finished_run, many_documents

CASES = ["ACME invoice 11 for tools", "Stadtwerke bill", "Dear customer, your order",
         "ACME delivery note", "Invoice 12 of ACME"]


def test_the_dry_run_shows_what_a_rule_would_do_and_changes_nothing(alice, bob, config):
    documents = many_documents(alice, CASES)
    archive = make_folder(alice, "ACME", alice.home_id)
    response = alice.post(f"/api/nodes/{documents[4]}/tags/", {"tags": ["acme"]},
                          media="application/json")
    assert response.status_code == 201, response.text
    rule = add_rule(alice, "ACME", "acme", enabled=False, sources=["mail"],
                    actions={"add_tags": ["acme", "supplier"], "move_to": archive,
                             "set_title": "ACME: {title}", "stop": True})
    before = snapshot(config)
    response = alice.get(f"/api/rules/{rule['id']}/matches/?page[size]=2")
    assert (response.status_code, response.headers["Content-Type"]) == (200, VND)
    body = response.json()
    assert snapshot(config) == before
    # The most recently changed first: doc 4 (tagged just now), then 3, then 0.
    assert [item["id"] for item in body["data"]] == [documents[4], documents[3]]
    assert body["meta"] == {"pagination": {"page": 1, "pages": 2, "count": 3},
                            "examined": 5, "documents": 5, "complete": True}
    assert body["data"][0]["attributes"]["rule_match"] == {
        "field": "text", "text": "ACME", "changes": {
            "add_tags": ["supplier"], "move_to": {"id": archive, "title": "ACME"},
            "set_title": "ACME: doc-0004.txt"}}
    assert body["data"][0]["attributes"]["title"] == "doc-0004.txt"
    last = alice.get(body["links"]["next"]).json()
    assert [item["id"] for item in last["data"]] == [documents[0]]
    assert snapshot(config) == before
    assert [filed(alice, document)[:2] for document in documents] == \
        [(f"doc-{index:04d}.txt", alice.inbox_id) for index in range(5)]
    assert bob.get(f"/api/rules/{rule['id']}/matches/").json() == NOT_FOUND


@pytest.mark.config(rules_preview_documents=3)
def test_the_dry_run_examines_a_bounded_number_of_documents(alice):
    many_documents(alice, CASES)
    rule = add_rule(alice, "Stadtwerke", "stadtwerke", actions={"add_tags": ["bill"]})
    body = alice.get(f"/api/rules/{rule['id']}/matches/").json()
    # The three most recent (4, 3, 2) were examined; the bill (1) was not reached.
    assert (body["data"], body["meta"]) == ([], {
        "pagination": {"page": 1, "pages": 1, "count": 0},
        "examined": 3, "documents": 5, "complete": False})


@pytest.mark.slow
def test_a_run_over_a_thousand_documents_counts_exactly(alice, bob, admin, anon, config):
    texts = [f"Invoice {n} of ACME" if n % 5 < 3 else f"Letter {n} from a friend"
             for n in range(1000)]
    documents = many_documents(alice, texts)
    invoices = [document for n, document in enumerate(documents) if n % 5 < 3]
    for document in invoices[:100]:  # already tagged: matched, but not changed
        response = alice.post(f"/api/nodes/{document}/tags/", {"tags": ["invoice"]},
                              media="application/json")
        assert response.status_code == 201
    rule = add_rule(alice, "Invoices", "invoice acme", algorithm="all",
                    actions={"add_tags": ["invoice"]})
    nothing = add_rule(alice, "Nothing", "zebra", actions={"add_tags": ["zebra"]})
    doomed = add_rule(alice, "Doomed", "friend", actions={"add_tags": ["friend"]})

    response = alice.post(f"/api/rules/{rule['id']}/apply/")
    assert response.status_code == 202, response.text
    run = response.json()["data"]
    assert (run["type"], run["attributes"]["state"], run["attributes"]["rule_name"],
            run["relationships"]) == ("rule-runs", "queued", "Invoices",
                                      {"rule": {"data": {"type": "rules", "id": rule["id"]}}})
    second = alice.post(f"/api/rules/{nothing['id']}/apply/")
    assert second.status_code == 202, second.text
    before = snapshot(config)
    assert_error(alice.post(f"/api/rules/{doomed['id']}/apply/"), 429, "throttled",
                 "You have 2 rule runs under way; try again when one has finished.")
    for client in (bob, admin):
        assert client.get(f"/api/rule-runs/{run['id']}/").json() == NOT_FOUND
    assert anon.get(f"/api/rule-runs/{run['id']}/").status_code == 401

    done = finished_run(alice, run["id"])
    assert (done["state"], done["examined"], done["matched"], done["changed"], done["error"]) \
        == ("succeeded", 1000, 600, 500, None)
    assert finished_run(alice, second.json()["data"]["id"])["matched"] == 0
    assert snapshot(config) != before
    user_id = alice.get("/api/users/me/").json()["data"]["id"]
    assert query_sql(config, "SELECT count(*), count(DISTINCT node_id) FROM event WHERE "
                             "owner_id = ? AND action = 'rule_applied'", user_id) == [(500, 500)]
    tagged = query_sql(config, "SELECT count(*) FROM node_tag AS nt JOIN tag AS t "
                               "ON t.id = nt.tag_id WHERE t.owner_id = ? AND t.name = 'invoice'",
                       user_id)
    assert tagged == [(600,)]

    # A run whose rule is deleted while it runs fails, saying so, with what it did so far.
    response = alice.post(f"/api/rules/{doomed['id']}/apply/")
    assert response.status_code == 202, response.text
    assert alice.delete(f"/api/rules/{doomed['id']}/").status_code == 204
    failed = finished_run(alice, response.json()["data"]["id"])
    assert (failed["state"], failed["error"]) == ("failed", "The rule was deleted while it ran.")
    assert failed["examined"] < 1000
