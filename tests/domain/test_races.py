"""Concurrency: check-then-write sequences hold under many threads, and no write undoes another.
Each test calls the domain's functions from many threads at once (the fast tier: no server, each
thread its own connection, as each of waitress' threads has; the queue's workers reading what is
uploaded meanwhile), then checks the whole data dir with `dms verify`'s own checks (loops,
unreachable nodes, documents whose attributes disagree with their latest version)."""

from __future__ import annotations

import io
import itertools
import json
import random
import threading
import time

import pytest

from dms.db import database, events
from dms.db.models import Event, Node, utcnow
from dms.domain import accounts, credentials, documents, listings, sessions, trash, tree, uploads
from dms.errors import DomainError, NotFound
from dms.ops import health, verify
from tests.harness import samples
from tests.harness.database import unreachable
from tests.harness.domaintier import (
    assert_refused,
    domain_thread,
    home_id,
    new_document,
    new_folder,
    new_user,
)

SECONDS = 6
PASSWORD = "user-password-1"



def run_threads(targets) -> list[str]:
    """Run each callable in its own thread (which then gives its database connection back)
    until SECONDS have passed; returns what went wrong."""
    problems: list[str] = []
    deadline = time.monotonic() + SECONDS
    threads = [domain_thread(target, deadline, problems) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return problems


def clean(config) -> list[str]:
    """The problems `dms verify` finds in the data dir (stored files included)."""
    report = verify.run(config.data_dir)
    return [] if report.ok else report.lines()


def upload(services, user, document_id: str, name: str, data: bytes) -> Node:
    return uploads.upload_version(services, user, document_id, io.BytesIO(data), len(data), name)


def test_renames_during_moves_never_make_a_loop(services, config):
    alice = new_user("alice")
    home = home_id(alice)
    folders = [new_folder(services, alice, f"F{i}", home) for i in range(5)]

    def mover(seed):
        def run(deadline, problems):
            rnd = random.Random(seed)
            while time.monotonic() < deadline:
                moved, target = rnd.sample(folders, 2)
                if rnd.random() < 0.3:
                    target = home
                try:
                    tree.move_nodes(alice, [moved], target, config.max_tree_depth)
                except DomainError as error:  # a loop refused (400 through the API)
                    if error.code != "invalid":
                        problems.append(f"move: {error.code} {error}")
                except Exception as error:
                    problems.append(f"move: {error!r}")
        return run

    def renamer(seed):
        def run(deadline, problems):
            rnd = random.Random(seed)
            while time.monotonic() < deadline:
                folder = rnd.choice(folders)
                try:
                    tree.update_node(alice, folder, Node.FOLDER, {"title": f"T{rnd.random()}"})
                except Exception as error:
                    problems.append(f"rename: {error!r}")
        return run

    assert run_threads([mover(1), mover(2), mover(3), renamer(4), renamer(5), renamer(6)]) == []
    assert unreachable(config) == []
    assert clean(config) == []
    crumbs = tree.breadcrumbs(folders)
    for folder in folders:  # every folder still hangs below .home, with a finite breadcrumb
        assert crumbs[folder][0] == [".home", home] and crumbs[folder][-1][1] == folder
    health.check(services.jobs)  # what GET /health checks: the database and the queue


def test_creations_while_their_parents_move_change_name_and_go_to_the_trash(services, config):
    """A create reads its parent again inside its write transaction (dms.domain.tree.create_node):
    whatever other threads do to the parents meanwhile, no node is made deeper than the limit nor
    inside the trash, and each `created` event names its parent's title of that moment."""
    limit = 4
    alice = new_user("alice")
    home = home_id(alice)
    folders = [new_folder(services, alice, f"F{i}", home) for i in range(4)]
    made: list[str] = []
    titles = itertools.count()  # each rename a title of its own

    def repeating(what, seed, step):
        """A thread's work: `step(rnd)` until the deadline; refusals (too deep, a loop, gone into
        the trash meanwhile) are expected, anything else is a problem."""
        def run(deadline, problems):
            rnd = random.Random(seed)
            while time.monotonic() < deadline:
                try:
                    step(rnd)
                except DomainError as error:
                    if error.code not in {"invalid", "does_not_exist", "not_found"}:
                        problems.append(f"{what}: {error.code} {error}")
                except Exception as error:
                    problems.append(f"{what}: {error!r}")
        return run

    def create(rnd):
        made.append(tree.create_node(alice, Node.FOLDER, {"title": "c"},
                                     rnd.choice(folders + made[-20:]), parent_field="parent",
                                     default_lang="eng", max_depth=limit).id)

    def move(rnd):
        moved, target = rnd.sample(folders, 2)
        tree.move_nodes(alice, [moved], home if rnd.random() < 0.3 else target, limit)

    def rename(rnd):
        tree.update_node(alice, rnd.choice(folders), Node.FOLDER, {"title": f"T{next(titles)}"})

    def trash_and_restore(rnd):
        folder = rnd.choice(folders)
        trash.delete(services, alice, folder)
        time.sleep(0.002)
        trash.restore(services, alice, folder)

    assert run_threads([repeating("create", 1, create), repeating("create", 2, create),
                        repeating("create", 3, create), repeating("move", 4, move),
                        repeating("rename", 5, rename),
                        repeating("trash", 6, trash_and_restore)]) == []
    assert len(made) > 20
    live = [row[0] for row in database.execute_sql(
        "SELECT id FROM node WHERE owner_id = ? AND trash_id IS NULL", (alice.id,))]
    assert max(tree.depths(live).values()) <= limit
    assert database.execute_sql(
        "SELECT count(*) FROM node AS n JOIN node AS p ON p.id = n.parent_id "
        "WHERE n.trash_id IS NULL AND p.trash_id IS NOT NULL").fetchone()[0] == 0
    title_of: dict[str, str] = {}  # each node's title as the events so far left it
    for event in Event.select().where(Event.owner == alice.id).order_by(Event.id):
        if event.action == events.CREATED and event.node_id in made:
            parent = json.loads(event.details)["parent"]
            assert parent["title"] == title_of[parent["id"]], event.id
        title_of[event.node_id] = event.node_title
    assert unreachable(config) == []
    assert clean(config) == []


def test_renames_during_uploads_keep_the_latest_versions_attributes(reading, config):
    alice = new_user("alice")
    document_id = new_document(reading, alice, "report", home_id(alice))
    bodies = [samples.text("x" * size + "\n") for size in (10, 200, 3000)]

    def uploader(deadline, problems):
        """The only thread that uploads: right after each upload, nothing may have written the
        document's attributes back from before it (a rename's stale read once did)."""
        rnd = random.Random(7)
        while time.monotonic() < deadline:
            size = rnd.randrange(len(bodies))
            try:
                upload(reading, alice, document_id, f"v{size}.txt", bodies[size])
            except Exception as error:
                problems.append(f"upload: {error!r}")
            node = tree.owned_node(alice, document_id)
            latest = documents.versions(document_id)[-1]
            if (node.file_name, node.size) != (latest.file_name, latest.size):
                problems.append(f"stale attributes {node.file_name} {node.size} "
                                f"after uploading version {latest.number}")

    def renamer(seed):
        def run(deadline, problems):
            rnd = random.Random(seed)
            while time.monotonic() < deadline:
                try:
                    tree.update_node(alice, document_id, Node.DOCUMENT, {
                        "title": f"T{rnd.random()}", "ocr": rnd.random() < 0.5})
                except Exception as error:
                    problems.append(f"rename: {error!r}")
        return run

    assert run_threads([uploader, renamer(1), renamer(2), renamer(3)]) == []
    node = tree.owned_node(alice, document_id)
    versions = documents.versions(document_id)
    latest = versions[-1]
    assert (node.file_name, node.size, node.page_count) == \
        (latest.file_name, latest.size, latest.page_count)
    assert [v.number for v in versions] == list(range(1, len(versions) + 1))
    assert clean(config) == []


def test_uploads_into_a_document_whose_folder_is_deleted_meanwhile(reading, config):
    """Each round: a folder with a document, deleted while uploads go into the document. Every
    upload succeeds or finds the document gone (404 through the API; never anything else) and
    nothing is left behind."""
    alice = new_user("alice")
    problems = []
    for round_number in range(15):
        folder = new_folder(reading, alice, f"round {round_number}", home_id(alice))
        document_id = new_document(reading, alice, "doc", folder)
        barrier = threading.Barrier(4)

        def uploader(seed, barrier=barrier, document_id=document_id,
                     round_number=round_number):
            barrier.wait()
            for attempt in range(3):
                try:
                    upload(reading, alice, document_id, f"{seed}-{attempt}.txt",
                           samples.text(f"round {round_number}\n"))
                except NotFound:
                    pass
                except Exception as error:
                    problems.append(f"upload: {error!r}")

        def deleter(barrier=barrier, round_number=round_number, folder=folder):
            barrier.wait()
            time.sleep(0.002 * round_number)
            try:
                trash.delete(reading, alice, folder)
            except Exception as error:
                problems.append(f"delete: {error!r}")

        threads = [domain_thread(uploader, n) for n in range(3)]
        threads.append(domain_thread(deleter))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert problems == []
    assert listings.of_kind(alice, Node.DOCUMENT).count() == 0
    assert clean(config) == []


def test_usernames_that_differ_only_by_case_cannot_be_created_at_once(root):
    names = ["carol", "Carol", "CAROL", "cArOl", "caroL", "CaRoL"]
    outcomes = {}

    def create(name):
        try:
            outcomes[name] = accounts.create_user_by(root, {"username": name})
        except DomainError as error:
            outcomes[name] = error

    threads = [domain_thread(create, name) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    refused = [outcome for outcome in outcomes.values() if isinstance(outcome, DomainError)]
    assert len(refused) == len(names) - 1
    assert {(error.code, str(error), error.field) for error in refused} == \
        {("invalid", "A user with that username already exists.", "username")}
    listed = [user.username for user in accounts.all_users()]
    assert len([name for name in listed if name.lower() == "carol"]) == 1


@pytest.mark.config(max_tokens_per_user=5)
def test_the_token_cap_holds_under_concurrent_creation(services, config):
    alice = new_user("alice", PASSWORD)
    first_login = accounts.login("alice", PASSWORD, "127.0.0.1", services.throttle,
                                 config.max_tokens_per_user)
    held = credentials.tokens_of(alice).count()  # alice's login token
    outcomes = []

    def create(number):
        try:
            credentials.create_token(alice, None, f"t{number}", config.max_tokens_per_user)
            outcomes.append("created")
        except DomainError as error:
            outcomes.append((error.code, str(error), error.field))

    threads = [domain_thread(create, n) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    full = ("You already have 5 API tokens, the most one user may hold; revoke the ones you no "
            "longer use first.")
    assert sorted(outcomes, key=str) == sorted(
        ["created"] * (5 - held) + [("invalid", full, None)] * (12 - 5 + held), key=str)
    assert credentials.tokens_of(alice).count() == 5
    assert_refused(config, lambda: credentials.create_token(alice, 1, None, 5), "invalid", full,
                   None)
    # A login at the cap still works: it revokes the oldest login token (alice's first one).
    accounts.login("alice", PASSWORD, "127.0.0.1", services.throttle, config.max_tokens_per_user)
    assert credentials.tokens_of(alice).count() == 5
    assert sessions.find_token(first_login, utcnow()) is None  # the oldest login token went
