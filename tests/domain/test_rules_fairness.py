"""Rules may not slow everyone: a user's dry runs run one at a time and a process runs two at once
(past either, 429 at once, so a storm of dry runs holds no request threads), and the threads that
run rules over existing documents take users in turns, a slice at a time.

Over real sockets where waitress' threads are the point."""

from __future__ import annotations

import threading

import pytest

from tests.harness.client import assert_error
from tests.harness.rules import add_rule, finished_run, many_documents

MINE = "Your other dry run of a rule is still running; try again when it has answered."
OTHERS = "Other users' dry runs of rules are running; try again in a moment."
# Long letters, and a long fuzzy pattern scored against every run of their words: a dry run
# over them takes a while.
LETTER = " ".join(f"Sehr geehrte Kundin, Ihre Rechnung Nummer {n} vom Stadtwerk Musterstadt"
                  for n in range(400))
PATTERN = "Krankenversicherung Beitragsrechnung Mitgliedsnummer Versichertennummer Zahlung"


@pytest.mark.socket  # 16 requests at once through waitress' threads, beside another user's
@pytest.mark.config(rules_preview_seconds=30)
def test_a_storm_of_one_users_dry_runs_runs_one_and_refuses_the_rest_at_once(
        server, alice, bob, config):
    many_documents(alice, [LETTER] * 30)
    rule = add_rule(alice, "Insurance", PATTERN, algorithm="fuzzy",
                    actions={"add_tags": ["insurance"]})
    answers: list = []
    lock = threading.Lock()

    def dry_run():
        response = alice.get(f"/api/rules/{rule['id']}/matches/")
        with lock:
            answers.append(response)

    storm = [threading.Thread(target=dry_run) for _ in range(16)]
    for thread in storm:
        thread.start()
    dry_runs = server.runtime.services.dry_runs
    seen_running = []
    while any(thread.is_alive() for thread in storm):
        me = bob.get("/api/users/me/")  # another user, answered while alice's storm runs
        assert me.status_code == 200
        seen_running.append(dry_runs.held().get(alice.user_id, 0))
    for thread in storm:
        thread.join()
    assert 1 in seen_running  # bob was answered while alice's dry run held its place
    assert max(seen_running) == 1
    statuses = sorted(answer.status_code for answer in answers)
    assert statuses.count(200) >= 1 and statuses.count(200) + statuses.count(429) == 16
    for answer in answers:
        if answer.status_code == 429:
            assert_error(answer, 429, "throttled", MINE)
            assert answer.headers["Retry-After"] == "5"
        else:
            assert answer.json()["meta"]["examined"] == 30
    assert dry_runs.held() == {}


def test_dry_runs_of_two_users_fill_the_process_and_a_third_user_is_told_so(
        server, alice, bob, make_user):
    carol = make_user("carol")
    rules = {client.user_id: add_rule(client, "Any", "invoice", actions={"add_tags": ["x"]})
             for client in (alice, bob, carol)}
    dry_runs = server.runtime.services.dry_runs
    # Alice's and Bob's dry runs are under way (their places taken as their requests would).
    dry_runs.acquire(alice.user_id, 0)
    dry_runs.acquire(bob.user_id, 0)
    try:
        assert_error(carol.get(f"/api/rules/{rules[carol.user_id]['id']}/matches/"), 429,
                     "throttled", OTHERS)
        assert_error(alice.get(f"/api/rules/{rules[alice.user_id]['id']}/matches/"), 429,
                     "throttled", MINE)
        # Another user's rule is not found, whatever the places.
        assert alice.get(f"/api/rules/{rules[carol.user_id]['id']}/matches/").status_code == 404
    finally:
        dry_runs.release(alice.user_id)
        dry_runs.release(bob.user_id)
    response = carol.get(f"/api/rules/{rules[carol.user_id]['id']}/matches/")
    assert response.status_code == 200, response.text
    assert response.json()["meta"]["documents"] == 0
    assert dry_runs.held() == {}


def run_state(client, run_id: str) -> str:
    return client.get(f"/api/rule-runs/{run_id}/").json()["data"]["attributes"]["state"]


def test_one_users_two_runs_take_one_thread_and_another_users_run_goes_beside_them(alice, bob):
    """Both of alice's runs over 100 long letters are still under way when bob's run over his
    three has ended: her second run waited for her first, not bob's for hers."""
    many_documents(alice, [LETTER] * 100)
    many_documents(bob, ["Stadtwerke bill", "Invoice 7", "Dear Bob"])
    slow = add_rule(alice, "Insurance", PATTERN, algorithm="fuzzy",
                    actions={"add_tags": ["insurance"]})
    quick = add_rule(bob, "Bills", "bill", actions={"add_tags": ["bill"]})
    alices = [alice.post(f"/api/rules/{slow['id']}/apply/").json()["data"]["id"]
              for _ in range(2)]
    response = bob.post(f"/api/rules/{quick['id']}/apply/")
    assert response.status_code == 202, response.text
    bobs = finished_run(bob, response.json()["data"]["id"])
    states = [run_state(alice, run_id) for run_id in alices]
    assert (bobs["state"], bobs["examined"], bobs["changed"]) == ("succeeded", 3, 1)
    assert "succeeded" not in states, states
    for run_id in alices:
        assert finished_run(alice, run_id)["state"] == "succeeded"


@pytest.mark.config(rule_runs_minutes=100_000)  # no periodic resume takes the run meanwhile
def test_a_run_gives_its_thread_back_after_a_slice_and_goes_on_where_it_stopped(
        server, alice, config):
    from dms.db.models import User
    from dms.domain.rules import runs

    many_documents(alice, [f"Invoice {n}" for n in range(120)])
    rule = add_rule(alice, "Invoices", "invoice", actions={"add_tags": ["invoice"]})
    run = runs.start_run(User.get_by_id(alice.user_id), rule["id"])
    worker = "test-worker"
    slices = 0
    while runs.execute(config, run.id, worker, lambda: False, slice_seconds=0) is not None:
        slices += 1
        attributes = alice.get(f"/api/rule-runs/{run.id}/").json()["data"]["attributes"]
        # One batch of 50 per slice; between slices the run keeps its lease and state.
        assert (attributes["state"], attributes["examined"]) == ("running",
                                                                 min(50 * slices, 120))
    assert slices == 3  # 50, 50 and 20; the next slice finds nothing left and ends it
    attributes = alice.get(f"/api/rule-runs/{run.id}/").json()["data"]["attributes"]
    assert (attributes["state"], attributes["examined"], attributes["matched"],
            attributes["changed"]) == ("succeeded", 120, 120, 120)
