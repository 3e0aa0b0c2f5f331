"""The bounds of what the intake refused (dms.domain.refusals), recorded through the domain function
the consume folder and the mail checks call, on the test's real database (both engines): each user
keeps only the newest KEEP_PER_USER, none older than KEEP_DAYS, and they go with their user.

The bounds on the fast tier (`services`, `root`: the domain's functions, no server); through the
API, what the owner is shown of them, page after page."""

from __future__ import annotations

import datetime as dt

from dms.db.models import IntakeRefusal, utcnow
from dms.domain import accounts, refusals
from tests.harness.client import NOT_FOUND
from tests.harness.database import execute_sql, query_sql, snapshot
from tests.harness.domaintier import new_user

REASON = "This type of file is not supported; upload a PDF, PNG, JPEG, TIFF or plain text file."


def names(config, owner_id) -> list[str]:
    """The owner's refusals, newest first, by name."""
    return [row[0] for row in query_sql(
        config, "SELECT name FROM intake_refusal WHERE owner_id = ? ORDER BY refused_at DESC",
        owner_id)]


def kept(user) -> list[str]:
    """What GET /intake/refusals/ lists for `user`, newest first, by name (the domain's query)."""
    return [refusal.name for refusal in refusals.refusals_of(user)]


def listed(client) -> list[str]:
    """What GET /intake/refusals/ shows the client, newest first, by name (every page)."""
    shown, page, pages = [], 1, 1
    while page <= pages:
        answer = client.get(f"/api/intake/refusals/?page[size]=50&page[number]={page}").json()
        shown += [item["attributes"]["name"] for item in answer["data"]]
        page, pages = page + 1, answer["meta"]["pagination"]["pages"]
    return shown


def age(config, owner_id, name, days) -> None:
    """Date one refusal `days` back, as if it had been recorded then."""
    at = IntakeRefusal.refused_at.db_value(utcnow() - dt.timedelta(days=days))
    execute_sql(config, "UPDATE intake_refusal SET refused_at = ? WHERE owner_id = ? AND name = ?",
                at, owner_id, name)


def test_only_the_newest_per_user_are_kept(services, config):
    alice, bob = new_user("alice"), new_user("bob")
    refusals.record(bob.id, "mail", "bob.docx", REASON, "Bob's letter")
    over = refusals.KEEP_PER_USER + 5
    for number in range(over):
        refusals.record(alice.id, "consume", f"scan-{number:03}.exe", REASON)
    newest = [f"scan-{number:03}.exe" for number in reversed(range(5, over))]
    assert names(config, alice.id) == newest
    assert kept(alice) == newest
    assert names(config, bob.id) == ["bob.docx"]  # another user's are not counted


def test_the_owner_is_shown_the_kept_ones_newest_first_page_after_page(alice, bob):
    refusals.record(bob.user_id, "mail", "bob.docx", REASON, "Bob's letter")
    over = refusals.KEEP_PER_USER + 5
    for number in range(over):
        refusals.record(alice.user_id, "consume", f"scan-{number:03}.exe", REASON)
    assert listed(alice) == [f"scan-{number:03}.exe" for number in reversed(range(5, over))]
    assert listed(bob) == ["bob.docx"]


def test_none_older_than_the_kept_days(services, config):
    alice, bob = new_user("alice"), new_user("bob")
    refusals.record(alice.id, "consume", "old.exe", REASON)
    refusals.record(alice.id, "consume", "recent.exe", REASON)
    refusals.record(bob.id, "mail", "bob-old.docx", REASON, "Old mail")
    age(config, alice.id, "old.exe", refusals.KEEP_DAYS + 1)
    age(config, alice.id, "recent.exe", refusals.KEEP_DAYS - 1)
    age(config, bob.id, "bob-old.docx", refusals.KEEP_DAYS + 1)
    refusals.record(alice.id, "mail", "new.docx", REASON, "New mail")  # the bound applies
    assert names(config, alice.id) == ["new.docx", "recent.exe"]
    assert names(config, bob.id) == []  # everyone's old ones go, not only the recorder's
    assert kept(alice) == ["new.docx", "recent.exe"]
    assert refusals.counts_since(utcnow() - dt.timedelta(hours=24)) == {"consume": 0, "mail": 1}


def test_they_are_deleted_with_their_user(root, services, config):
    alice, bob = new_user("alice"), new_user("bob")
    for name in ("a.exe", "b.exe"):
        refusals.record(alice.id, "consume", name, REASON)
    refusals.record(bob.id, "consume", "c.exe", REASON)
    accounts.delete_user_by(services, root, alice.id)
    assert names(config, alice.id) == []
    assert names(config, bob.id) == ["c.exe"]
    assert refusals.counts_since(utcnow() - dt.timedelta(hours=24)) == {"consume": 1, "mail": 0}


def test_the_owner_dismisses_one_or_all_and_no_one_else_can(alice, bob, config):
    for name in ("one.exe", "two.exe", "three.exe"):
        refusals.record(alice.user_id, "consume", name, REASON)
    refusals.record(bob.user_id, "mail", "bobs.exe", REASON)
    [three, two, one] = [item["id"] for item in
                         alice.get("/api/intake/refusals/").json()["data"]]
    before = snapshot(config)
    assert bob.delete(f"/api/intake/refusals/{two}/").json() == NOT_FOUND  # not his
    assert alice.as_anonymous().delete(f"/api/intake/refusals/{two}/").status_code == 401
    assert alice.delete("/api/intake/refusals/no-such-id/").json() == NOT_FOUND
    assert snapshot(config) == before

    dismissed = alice.delete(f"/api/intake/refusals/{two}/")
    assert (dismissed.status_code, dismissed.content) == (204, b"")
    assert listed(alice) == ["three.exe", "one.exe"]
    assert alice.delete(f"/api/intake/refusals/{two}/").json() == NOT_FOUND  # gone already
    assert alice.delete("/api/intake/refusals/").status_code == 204
    assert (listed(alice), listed(bob)) == ([], ["bobs.exe"])
    assert query_sql(config, "SELECT count(*) FROM intake_refusal WHERE id IN (?, ?)",
                     three, one) == [(0,)]
