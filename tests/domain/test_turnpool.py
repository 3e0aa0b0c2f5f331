"""The leases and bookkeeping of runs in the background (dms.domain.turnpool.RunLeases), shared by
rule runs and splits: a user's runs under way are counted, and only their finished runs past the
newest ones kept are deleted. On both databases."""

from __future__ import annotations

from dms.db import owner_scope, write_transaction
from dms.domain.turnpool import RunLeases
from tests.harness.database import execute_sql, query_sql
from tests.harness.rules import add_rule


def add_run(config, run_id: str, owner_id: str, rule_id: str, state: str, minute: int) -> None:
    execute_sql(config, "INSERT INTO rule_run (id, owner_id, rule_id, rule_name, state, "
                        "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                run_id, owner_id, rule_id, "r", state, f"2026-11-28 08:{minute:02d}:00.000000")


def test_only_a_users_finished_runs_past_the_newest_kept_are_forgotten(server, alice, bob,
                                                                        config):
    rules = {client.user_id: add_rule(client, "r", "x", actions={"add_tags": ["x"]})["id"]
             for client in (alice, bob)}
    for minute, (run_id, state) in enumerate([("a1", "succeeded"), ("a2", "failed"),
                                              ("a3", "running"), ("a4", "succeeded"),
                                              ("a5", "queued")]):
        add_run(config, run_id, alice.user_id, rules[alice.user_id], state, minute)
    add_run(config, "b1", bob.user_id, rules[bob.user_id], "succeeded", 0)
    leases = RunLeases("rule_run")
    assert (leases.under_way(alice.user_id), leases.under_way(bob.user_id)) == (2, 0)
    with write_transaction(owner_scope(alice.user_id)):
        leases.forget_finished(alice.user_id, 1)
    assert sorted(row[0] for row in query_sql(config, "SELECT id FROM rule_run")) == \
        ["a3", "a4", "a5", "b1"]
    with write_transaction(owner_scope(alice.user_id)):
        leases.forget_finished(alice.user_id, 0)
    assert sorted(row[0] for row in query_sql(config, "SELECT id FROM rule_run")) == \
        ["a3", "a5", "b1"]
