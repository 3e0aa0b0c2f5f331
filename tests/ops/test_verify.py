"""`dms verify` and `dms verify --repair` on a data dir made by a real server and then broken
behind its back with sqlite3 (README, "Backup and restore")."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time

import pytest

from dms.ops.verify import REPAIRED_ERROR
from dms.ops.verify.documents import gaps
from dms.ops.verify.tree import LOST_AND_FOUND, check_tree
from dms.text import ranges, runs_text
from tests.harness import samples
from tests.harness.appserver import running
from tests.harness.client import Client
from tests.harness.documents import create_node, upload_accepted
from tests.harness.users import ADMIN_PASSWORD, add_user
from tests.harness.waiting import wait_for, wait_processed

# Damages the SQLite file and the tantivy index.
# Sockets (pytest-socket): servers on damaged and repaired data dirs.
pytestmark = [pytest.mark.sqlite_only, pytest.mark.enable_socket]

PAGE_ROWS = "SELECT number, text, method FROM page WHERE version_id = ? ORDER BY number"


def dms(*args):
    return subprocess.run([sys.executable, "-m", "dms", *map(str, args)], capture_output=True,
                          text=True)


def sql(config, statement: str, *params):
    connection = sqlite3.connect(config.db_path)
    try:
        rows = connection.execute(statement, params).fetchall()
        connection.commit()
        return rows
    finally:
        connection.close()


def row(config, statement: str, *params):
    rows = sql(config, statement, *params)
    assert len(rows) == 1, rows
    return rows[0]


def report(sections: list[tuple[str, list[str]]], files: int, ok: bool = False) -> str:
    lines = [f"Checked {files} stored files."]
    for title, items in sections:
        lines.append(f"{len(items)} {title}:")
        lines.extend(f"  {item}" for item in items)
    return "\n".join(lines + ["No problems found." if ok else "Problems found.", ""])


LOOPS = "nodes in a loop (their parents lead back to them)"
UNREACHABLE = ("nodes unreachable from their owner's .home and .inbox (below a loop or a "
               "misplaced node)")
MISPLACED = "nodes whose parent belongs to another user or is a document"
ATTRIBUTES = "documents whose file_name, size or page_count disagree with their latest version"
PAGES = "documents whose page rows do not number 1 to their page count"
UNREAD = "documents marked succeeded with unread pages"
FAILED = "documents marked failed without an error"
CLASHES = "usernames that differ only by case"


@pytest.fixture
def broken(config):
    """A data dir made through the API by a real server (stopped again), then broken with
    sqlite3 in every way verify --repair can fix. Returns the ids involved."""
    ids = {}
    with running(config) as server:
        admin = Client(server.url).login("admin", ADMIN_PASSWORD)
        alice, bob = add_user(admin, "alice"), add_user(admin, "bob")
        ids.update(alice=alice.user_id, bob=bob.user_id, alice_home=alice.home_id,
                   bob_home=bob.home_id, alice_token=alice.token)
        ids["loop_a"] = create_node(alice, "folders", "Loop A", alice.home_id)
        ids["loop_b"] = create_node(alice, "folders", "Loop B", ids["loop_a"])
        ids["below"] = create_node(alice, "folders", "Below the loop", ids["loop_b"])
        ids["under_document"] = create_node(alice, "folders", "Under a document", alice.home_id)
        ids["bobs"] = create_node(bob, "folders", "Bob's", bob.home_id)
        for name, data in (("renamed", samples.text("renamed\n")),
                           ("recounted", samples.text("recounted\n")),
                           ("pages", samples.pdf(["one", "two", "three"])),
                           ("unread", samples.text("unread\n")),
                           ("failed", samples.text("failed\n"))):
            ids[name] = create_node(alice, "documents", name, alice.home_id)
            upload_accepted(alice, ids[name], f"{name}.{'pdf' if name == 'pages' else 'txt'}", data)
        ids["empty"] = create_node(alice, "documents", "no file yet", alice.inbox_id)
        for name in ("renamed", "recounted", "pages", "unread", "failed"):
            assert wait_processed(alice, ids[name])[-1] == "succeeded"
    for name in ("renamed", "recounted", "pages", "unread", "failed"):
        ids[f"{name}_version"] = row(
            config, "SELECT id FROM document_version WHERE document_id = ?", ids[name])[0]
    assert dms("verify", "--data-dir", config.data_dir).stdout == report([], 6, ok=True)
    ids["pages_rows"] = sql(config, PAGE_ROWS, ids["pages_version"])

    sql(config, "UPDATE node SET parent_id = ? WHERE id = ?", ids["loop_b"], ids["loop_a"])
    sql(config, "UPDATE node SET parent_id = ? WHERE id = ?", ids["empty"], ids["under_document"])
    sql(config, "UPDATE node SET parent_id = ? WHERE id = ?", ids["alice_home"], ids["bobs"])
    sql(config, "UPDATE node SET file_name = 'wrong.txt', size = 999 WHERE id = ?", ids["renamed"])
    sql(config, "UPDATE node SET page_count = 5 WHERE id = ?", ids["recounted"])
    sql(config, "UPDATE node SET size = 7 WHERE id = ?", ids["empty"])
    sql(config, "DELETE FROM page WHERE version_id = ? AND number = 2", ids["pages_version"])
    sql(config, "UPDATE page SET method = NULL WHERE version_id = ?", ids["unread_version"])
    sql(config, "UPDATE node SET ocr_status = 'failed', ocr_error = NULL WHERE id = ?",
        ids["failed"])
    return ids


def test_verify_finds_loops_misplaced_nodes_and_documents_that_disagree(config, broken):
    ids = broken
    loop = sorted([("loop_a", "loop_b"), ("loop_b", "loop_a")], key=lambda pair: ids[pair[0]])
    result = dms("verify", "--data-dir", config.data_dir)
    assert result.returncode == 1, result.stderr
    assert result.stdout == report([
        (LOOPS, [f"node {ids[node]} (parent {ids[parent]})" for node, parent in loop]),
        (UNREACHABLE, [f"node {ids['below']} (parent {ids['loop_b']})"]),
        (MISPLACED, sorted([f"node {ids['under_document']} (parent {ids['empty']}, a document)",
                            f"node {ids['bobs']} (parent {ids['alice_home']}, another user's "
                            f"folder)"])),
        (ATTRIBUTES, sorted([
            f"document {ids['renamed']}: file_name is 'wrong.txt', should be 'renamed.txt'; "
            f"size is 999, should be 8",
            f"document {ids['recounted']}: page_count is 5, should be 1",
            f"document {ids['empty']}: size is 7, should be 0"])),
        (PAGES, [f"document {ids['pages']} (version {ids['pages_version']}): page rows 2 missing"]),
        (UNREAD, [f"document {ids['unread']} (version {ids['unread_version']}): pages 1 unread"]),
        (FAILED, [f"document {ids['failed']}"]),
    ], 6)


def test_repair_fixes_it_all_and_a_server_lists_lost_and_found(config, broken):
    ids = broken
    result = dms("verify", "--data-dir", config.data_dir, "--repair")
    assert result.returncode == 0, result.stdout + result.stderr
    found = {owner: row(config, "SELECT id FROM node WHERE parent_id = ? AND title = ?",
                        ids[f"{owner}_home"], LOST_AND_FOUND)[0] for owner in ("alice", "bob")}
    loop_start = min(ids["loop_a"], ids["loop_b"])
    moves = sorted([
        (ids["under_document"], "alice", "its parent is a document"),
        (ids["bobs"], "bob", "its parent is another user's folder"),
        (loop_start, "alice", "it was in a loop")])
    tree_lines, created = [], set()
    for node_id, owner, why in moves:
        if owner not in created:
            created.add(owner)
            tree_lines.append(f"Created the folder {LOST_AND_FOUND} ({found[owner]}) in the .home "
                              f"of {owner}.")
        tree_lines.append(f"Moved node {node_id} into {LOST_AND_FOUND} ({found[owner]}): {why}.")
    assert result.stdout.splitlines() == [
        *sorted([f"Document {ids['renamed']}: file_name, size set from its latest version.",
                 f"Document {ids['recounted']}: page_count set from its latest version.",
                 f"Document {ids['empty']}: size cleared, as it has no version."],
                key=lambda line: line.split()[1]),
        f"Document {ids['pages']}: added the missing page rows 2; set back to received, to be "
        f"processed again.",
        f"Document {ids['unread']}: succeeded with unread pages; set back to received, to be "
        f"processed again.",
        f"Document {ids['failed']}: failed without an error; its error now reads: "
        f"{REPAIRED_ERROR}",
        *tree_lines,
        "Checked 6 stored files.", "No problems found."]

    # The database after: lost+found folders in each .home, one node of the loop moved into it
    # and the rest of the loop (and what hung below it) with it, attributes from the versions.
    for owner, folder_id in found.items():
        assert row(config, "SELECT owner_id, kind, special, title, title_sort FROM node "
                           "WHERE id = ?", folder_id) == \
            (ids[owner], "folder", None, LOST_AND_FOUND, LOST_AND_FOUND)
    other = ids["loop_b"] if loop_start == ids["loop_a"] else ids["loop_a"]
    parents = dict(sql(config, "SELECT id, parent_id FROM node"))
    assert (parents[loop_start], parents[other], parents[ids["below"]]) == \
        (found["alice"], loop_start, ids["loop_b"])
    assert parents[ids["under_document"]] == found["alice"]
    assert parents[ids["bobs"]] == found["bob"]
    attributes = "SELECT file_name, size, page_count, ocr_status, ocr_error FROM node WHERE id = ?"
    assert row(config, attributes, ids["renamed"]) == ("renamed.txt", 8, 1, "succeeded", None)
    assert row(config, attributes, ids["recounted"]) == ("recounted.txt", 10, 1, "succeeded", None)
    assert row(config, attributes, ids["empty"]) == (None, 0, 0, "received", None)
    assert row(config, attributes, ids["pages"]) == ("pages.pdf", row(
        config, "SELECT size FROM document_version WHERE id = ?", ids["pages_version"])[0], 3,
        "received", None)
    assert row(config, attributes, ids["unread"])[3:] == ("received", None)
    assert row(config, attributes, ids["failed"])[3:] == ("failed", REPAIRED_ERROR)
    first, second, third = ids["pages_rows"]
    assert [r[:2] for r in ids["pages_rows"]] == [(1, "one"), (2, "two"), (3, "three")]
    assert sql(config, PAGE_ROWS, ids["pages_version"]) == [first, (2, "", None), third]

    again = dms("verify", "--data-dir", config.data_dir)
    assert (again.returncode, again.stdout) == (0, report([], 6, ok=True))

    # A server on the repaired data dir lists lost+found and processes the documents sent back.
    with running(config) as server:
        alice = Client(server.url, ids["alice_token"])
        listing = alice.get(f"/api/nodes/{ids['alice_home']}/?page[size]=100").json()["data"]
        assert LOST_AND_FOUND in [node["attributes"]["title"] for node in listing]
        inside = alice.get(f"/api/nodes/{found['alice']}/").json()["data"]
        assert sorted(node["id"] for node in inside) == sorted([loop_start, ids["under_document"]])
        for name in ("pages", "unread"):
            assert wait_processed(alice, ids[name])[-1] == "succeeded"
    assert sql(config, PAGE_ROWS, ids["pages_version"]) == ids["pages_rows"]
    # Read again only in part, the "pages" document has no page PDFs left for a searchable PDF:
    # it goes (file and record together) until a re-run reads all its pages again.
    assert row(config, "SELECT searchable_size FROM document_version WHERE id = ?",
               ids["pages_version"]) == (None,)
    assert dms("verify", "--data-dir", config.data_dir).stdout == report([], 5, ok=True)


def test_an_existing_lost_and_found_is_used_again(config):
    with running(config) as server:
        admin = Client(server.url).login("admin", ADMIN_PASSWORD)
        alice = add_user(admin, "alice")
        existing = create_node(alice, "folders", LOST_AND_FOUND, alice.home_id)
        stray = create_node(alice, "folders", "Stray", alice.home_id)
        document = create_node(alice, "documents", "doc", alice.home_id)
    sql(config, "UPDATE node SET parent_id = ? WHERE id = ?", document, stray)
    result = dms("verify", "--data-dir", config.data_dir, "--repair")
    assert (result.returncode, result.stdout) == (0, "\n".join([
        f"Moved node {stray} into {LOST_AND_FOUND} ({existing}): its parent is a document.",
        "Checked 0 stored files.", "No problems found.", ""]))
    assert row(config, "SELECT parent_id FROM node WHERE id = ?", stray) == (existing,)
    assert sql(config, "SELECT count(*) FROM node WHERE title = ?", LOST_AND_FOUND) == [(1,)]


def test_usernames_that_differ_only_by_case_are_reported_not_repaired(config):
    with running(config) as server:
        admin = Client(server.url).login("admin", ADMIN_PASSWORD)
        alice, carol = add_user(admin, "alice"), add_user(admin, "carol")
    # As a data dir from before usernames were compared without case could hold them.
    sql(config, "UPDATE user SET username = 'ALICE' WHERE id = ?", carol.user_id)
    clash = [f"'ALICE' ({carol.user_id}), 'alice' ({alice.user_id})"]
    result = dms("verify", "--data-dir", config.data_dir)
    assert (result.returncode, result.stdout) == (1, report([(CLASHES, clash)], 0))
    repaired = dms("verify", "--data-dir", config.data_dir, "--repair")
    assert (repaired.returncode, repaired.stdout) == (1, "Not repaired: usernames that differ "
                                                         "only by case; an admin renames one of "
                                                         "each.\n" + report([(CLASHES, clash)], 0))


def test_repair_leaves_files_alone_and_says_so(config):
    with running(config) as server:
        admin = Client(server.url).login("admin", ADMIN_PASSWORD)
        alice = add_user(admin, "alice")
        document = create_node(alice, "documents", "doc", alice.home_id)
        upload_accepted(alice, document, "a.txt", samples.text("a\n"))
        wait_processed(alice, document)
    (version,) = row(config, "SELECT id FROM document_version")
    path = config.data_dir / "files" / version[:2] / version
    path.write_bytes(b"rot")
    orphan = config.data_dir / "files" / "ab" / "abcdef00-0000-4000-8000-000000000000"
    orphan.parent.mkdir(exist_ok=True)
    orphan.write_bytes(b"nobody's")
    hours_ago = time.time() - 2 * 3600  # older than the sweep's grace period
    os.utime(orphan, (hours_ago, hours_ago))
    result = dms("verify", "--data-dir", config.data_dir, "--repair")
    assert (result.returncode, result.stdout) == (1, "\n".join([
        "Not repaired: 1 corrupt and 0 missing files cannot be repaired; restore them from a "
        "backup.",
        "Not repaired: 1 orphaned files are left for the server's sweep (at start-up and every "
        "DMS_SWEEP_MINUTES), which removes them.",
        "Checked 1 stored files.",
        "1 corrupt files (checksum or size differs):", f"  version {version} ({path})",
        "1 orphaned files (no version refers to them):", f"  {orphan}",
        "Problems found.", ""]))
    assert path.read_bytes() == b"rot" and orphan.read_bytes() == b"nobody's"


def test_files_of_uploads_in_progress_are_expected_until_the_grace_period_is_over(config):
    """Regression: after a kill -9, verify reported the files of unacknowledged uploads as
    orphaned until the sweep's grace period was over and the server restarted."""
    with running(config):
        pass  # a data dir with its schema and files folder
    orphan = config.data_dir / "files" / "cd" / "cdef0000-0000-4000-8000-000000000000"
    orphan.parent.mkdir(exist_ok=True)
    orphan.write_bytes(b"an upload whose row was never committed")
    result = dms("verify", "--data-dir", config.data_dir)
    assert (result.returncode, without_search_note(result.stdout)) == (0, "\n".join([
        "Checked 0 stored files.",
        "1 files no version refers to yet are younger than DMS_SWEEP_GRACE_MINUTES: uploads in "
        "progress, or interrupted ones that the sweep removes once they are older (not a "
        "problem):", f"  {orphan}", "No problems found.", ""]))
    hours_ago = time.time() - 2 * 3600
    os.utime(orphan, (hours_ago, hours_ago))
    result = dms("verify", "--data-dir", config.data_dir)
    assert (result.returncode, without_search_note(result.stdout)) == (1, "\n".join([
        "Checked 0 stored files.", "1 orphaned files (no version refers to them):", f"  {orphan}",
        "Problems found.", ""]))


def without_search_note(output: str) -> str:
    """The report without the note that the index is not built yet (when the server that made
    the data dir stopped before building it)."""
    return "".join(line for line in output.splitlines(keepends=True)
                   if not line.startswith("The search index is not built"))


@pytest.mark.config(sweep_minutes=0.02, sweep_grace_minutes=0.01, lease_seconds=1.5)
def test_a_running_server_sweeps_old_unreferenced_files(server, config):
    """Without a restart: the sweep is a periodic job too (every 1.2 s here, a heartbeat every
    0.5 s claims it), removing what is older than the grace period (0.6 s here)."""
    orphan = config.data_dir / "files" / "ce" / "ce000000-0000-4000-8000-000000000000"
    orphan.parent.mkdir(exist_ok=True)
    orphan.write_bytes(b"left by a crash")
    wait_for(lambda: not orphan.exists(), timeout=30, interval=0.1,
             message="the orphan was not swept")
    assert not orphan.exists()


# -- the tree check itself, on corrupt trees of every shape ----------------------------------

def tree_database(rows: list[tuple[str, str, str | None, str, str | None]]) -> sqlite3.Connection:
    """(id, owner, parent, kind, special) rows in a node table of the real schema's columns."""
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE TABLE node (id TEXT PRIMARY KEY, owner_id TEXT, parent_id TEXT, "
                       "kind TEXT, special TEXT)")
    connection.execute("CREATE INDEX node_parent ON node (parent_id)")
    connection.executemany("INSERT INTO node VALUES (?, ?, ?, ?, ?)", rows)
    return connection


def homes(*owners):
    return [(f"{owner}-home", owner, None, "folder", "home") for owner in owners] + \
        [(f"{owner}-inbox", owner, None, "folder", "inbox") for owner in owners]


def test_check_tree_tells_loops_from_what_hangs_below_them():
    connection = tree_database(homes("a", "b") + [
        ("ok", "a", "a-home", "folder", None),
        ("self", "a", "self", "folder", None),              # its own parent
        ("l1", "a", "l3", "folder", None),                  # l1 -> l3 -> l2 -> l1
        ("l2", "a", "l1", "folder", None),
        ("l3", "a", "l2", "folder", None),
        ("below", "a", "l2", "folder", None),
        ("deeper", "a", "below", "document", None),
        ("x", "a", "y", "folder", None),                    # a loop across two owners
        ("y", "b", "x", "folder", None),
        ("in-doc", "a", "deeper", "folder", None),          # below a document below a loop
        ("foreign", "b", "ok", "folder", None),             # b's node in a's folder
        ("foreign-child", "b", "foreign", "folder", None),
    ])
    tree = check_tree(connection.execute)
    assert tree.loops == [["l1", "l3", "l2"], ["self"], ["x", "y"]]
    assert tree.misplaced == {"x": "another user's folder", "y": "another user's folder",
                              "in-doc": "a document", "foreign": "another user's folder"}
    assert tree.unreachable == {"below": "l2", "deeper": "below", "foreign-child": "foreign"}
    assert tree.anchors == {"l1": "it was in a loop", "self": "it was in a loop",
                            "x": "its parent is another user's folder",
                            "y": "its parent is another user's folder",
                            "in-doc": "its parent is a document",
                            "foreign": "its parent is another user's folder"}


def test_check_tree_ends_quickly_on_a_huge_loop_and_a_deep_chain():
    count = 20_000
    rows = homes("a")
    rows += [(f"loop{i:05}", "a", f"loop{(i + 1) % count:05}", "folder", None)
             for i in range(count)]
    rows += [(f"chain{i:05}", "a", f"chain{i - 1:05}" if i else "a-home", "folder", None)
             for i in range(count)]
    started = time.monotonic()
    tree = check_tree(tree_database(rows).execute)
    assert time.monotonic() - started < 10
    assert [len(loop) for loop in tree.loops] == [count] and tree.loops[0][0] == "loop00000"
    assert tree.unreachable == {} and tree.misplaced == {}
    assert tree.anchors == {"loop00000": "it was in a loop"}


def test_missing_page_numbers_are_found_without_counting_to_a_huge_page_count():
    assert gaps([1, 2, 5, 9], 10) == [(3, 4), (6, 8), (10, 10)]
    assert gaps([0, 1, 3, 3, 11], 4) == [(2, 2), (4, 4)]
    assert gaps([1, 2, 3], 3) == [] and gaps([], 0) == []
    assert runs_text(gaps([2], 10 ** 12)) == "1, 3-1000000000000"
    assert ranges([7, 1, 3, 2, 5]) == "1-3, 5, 7"
