"""Rules may not slow everyone: a user's dry runs run one at a time and a process runs two at once
(past either, 429 at once, so a storm of dry runs holds no request threads), and the threads that
run rules over existing documents take users in turns, a slice at a time.

The storm of one user's dry runs over real sockets, where waitress' threads are the point (its
refusals are the 429s with Retry-After a client sees). The rest on the fast tier (the domain's
functions, no server; the documents written straight into the database as read): the dry runs'
places, a pool of run threads of the domain's own (RunPool, as a node runs), a run driven slice by
slice in the test's thread."""

from __future__ import annotations

import threading

import pytest

from dms.db.models import RuleRun
from dms.domain.rules import preview, runs
from tests.harness.client import assert_error
from tests.harness.database import add_document
from tests.harness.domaintier import assert_refused, inbox_id, new_user
from tests.harness.rules import add_rule, make_rule, many_documents
from tests.harness.waiting import wait_for

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
    seen = threading.Event()  # Bob was answered while one of Alice's dry runs held its place

    def dry_runs_until_seen():
        # Each thread keeps asking until the test saw one dry run under way: a fast machine
        # may finish one before the test looks, so one storm of 16 alone could be missed.
        while not seen.is_set():
            response = alice.get(f"/api/rules/{rule['id']}/matches/")
            with lock:
                answers.append(response)

    storm = [threading.Thread(target=dry_runs_until_seen) for _ in range(16)]
    for thread in storm:
        thread.start()
    dry_runs = server.runtime.services.dry_runs
    seen_running = []
    try:
        for _ in range(2000):  # bounded: each turn is one request of Bob's
            before = dry_runs.held().get(alice.user_id, 0)
            me = bob.get("/api/users/me/")  # another user, answered while alice's storm runs
            assert me.status_code == 200
            after = dry_runs.held().get(alice.user_id, 0)
            seen_running += [before, after]
            if before == after == 1:
                break
    finally:
        seen.set()
        for thread in storm:
            thread.join()
    assert seen_running[-2:] == [1, 1]  # Bob answered between two looks that saw one running
    assert max(seen_running) == 1
    statuses = [answer.status_code for answer in answers]
    assert statuses.count(200) >= 1 and statuses.count(429) >= 1
    assert statuses.count(200) + statuses.count(429) == len(statuses)
    for answer in answers:
        if answer.status_code == 429:
            assert_error(answer, 429, "throttled", MINE)
            assert answer.headers["Retry-After"] == "5"
        else:
            assert answer.json()["meta"]["examined"] == 30
    assert dry_runs.held() == {}


def test_dry_runs_of_two_users_fill_the_process_and_a_third_user_is_told_so(services, config):
    alice, bob, carol = new_user("alice"), new_user("bob"), new_user("carol")
    rules = {user.id: make_rule(user, "Any", "invoice", actions={"add_tags": ["x"]})
             for user in (alice, bob, carol)}
    dry_runs = services.dry_runs
    # Alice's and Bob's dry runs are under way (their places taken as their requests would).
    dry_runs.acquire(alice.id, 0)
    dry_runs.acquire(bob.id, 0)
    try:
        for user, rule_owner, code, detail in (
                (carol, carol, "throttled", OTHERS), (alice, alice, "throttled", MINE),
                # Another user's rule is not found, whatever the places.
                (alice, carol, "not_found", "Not found.")):
            assert_refused(config, lambda user=user, rule_owner=rule_owner: preview.preview(
                services, user, rules[rule_owner.id].id), code, detail, None)
    finally:
        dry_runs.release(alice.id)
        dry_runs.release(bob.id)
    assert preview.preview(services, carol, rules[carol.id].id).documents == 0
    assert dry_runs.held() == {}


def documents_of(user, texts: list[str]) -> list[str]:
    """A read text document in the user's inbox for each of `texts`, titled doc-0000.txt, ...;
    their ids."""
    return [add_document(user.id, inbox_id(user), f"doc-{index:04d}.txt", text)
            for index, text in enumerate(texts)]


def ended(run_id: str) -> RuleRun | None:
    run = RuleRun.get_by_id(run_id)
    return run if run.state in ("succeeded", "failed") else None


def test_one_users_two_runs_take_one_thread_and_another_users_run_goes_beside_them(services,
                                                                                   config):
    """Both of alice's runs over 100 long letters are still under way when bob's run over his
    three has ended: her second run waited for her first, not bob's for hers."""
    alice, bob = new_user("alice"), new_user("bob")
    documents_of(alice, [LETTER] * 100)
    documents_of(bob, ["Stadtwerke bill", "Invoice 7", "Dear Bob"])
    slow = make_rule(alice, "Insurance", PATTERN, algorithm="fuzzy",
                     actions={"add_tags": ["insurance"]})
    quick = make_rule(bob, "Bills", "bill", actions={"add_tags": ["bill"]})
    pool = runs.RunPool(config)
    try:
        alices = [pool.apply(alice, slow.id).id for _ in range(2)]
        bobs_run = pool.apply(bob, quick.id).id
        bobs = wait_for(lambda: ended(bobs_run), timeout=120, interval=0.05,
                        message="bob's run did not finish")
        states = [RuleRun.get_by_id(run_id).state for run_id in alices]
        assert (bobs.state, bobs.examined, bobs.changed) == ("succeeded", 3, 1)
        assert "succeeded" not in states, states
        for run_id in alices:
            assert wait_for(lambda run_id=run_id: ended(run_id), timeout=120, interval=0.2,
                            message="alice's run did not finish").state == "succeeded"
    finally:
        pool.stop()


def test_a_run_gives_its_thread_back_after_a_slice_and_goes_on_where_it_stopped(services,
                                                                               config):
    alice = new_user("alice")
    documents_of(alice, [f"Invoice {n}" for n in range(120)])
    rule = make_rule(alice, "Invoices", "invoice", actions={"add_tags": ["invoice"]})
    run = runs.start_run(alice, rule.id)
    worker = "test-worker"
    slices = 0
    while runs.execute(config, run.id, worker, lambda: False, slice_seconds=0) is not None:
        slices += 1
        current = RuleRun.get_by_id(run.id)
        # One batch of 50 per slice; between slices the run keeps its lease and state.
        assert (current.state, current.worker_id, current.examined) == \
            ("running", worker, min(50 * slices, 120))
    assert slices == 3  # 50, 50 and 20; the next slice finds nothing left and ends it
    done = RuleRun.get_by_id(run.id)
    assert (done.state, done.examined, done.matched, done.changed) == \
        ("succeeded", 120, 120, 120)
