"""Limits and abuse: every oversized or hostile input gets a clear 4xx, or is processed within
bounded work (deep trees, huge folders, decompression bombs, zip bombs, 10,000-page PDFs). Through
the API: a folder of 100,000 children paged to its end, waitress' header limit, and one refusal of
the depth limit with its pointer; the rest on the fast tier (the domain's functions, no server;
the 10,000 pages read by the queue's workers)."""

from __future__ import annotations

import io
import zipfile

import pytest
import requests
from PIL import Image

from dms import search
from dms.db import database
from dms.db.models import Node, new_id, utcnow
from dms.domain import documents, trash, tree
from tests.harness import samples
from tests.harness.client import NOT_FOUND, assert_error
from tests.harness.database import snapshot
from tests.harness.documents import (
    TOO_MANY_PIXELS,
    make_folder,
    stored_files,
    temporary_files,
)
from tests.harness.domaintier import (
    assert_refused,
    filed,
    home_id,
    inbox_id,
    new_document,
    new_folder,
    new_user,
    upload_file,
    wait_read,
)
from tests.harness.rules import make_rule
from tests.harness.waiting import wait_indexed


def too_deep(depth: int) -> str:
    return (f"Folders can be nested at most {depth} levels deep (DMS_MAX_TREE_DEPTH); choose a "
            "folder higher up.")



# -- through the API ------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_folder_with_100000_children(alice, config):
    big = make_folder(alice, "big", alice.home_id)
    now = utcnow()
    rows = [{"id": new_id(), "owner": alice.user_id, "parent": big, "kind": Node.DOCUMENT,
             "title": f"doc {i:06d}", "title_sort": f"doc {i:06d}", "lang": "eng", "ocr": True,
             "ocr_status": "received", "created_at": now, "updated_at": now}
            for i in range(100_000)]
    with database.atomic():
        for start in range(0, len(rows), 1000):
            Node.insert_many(rows[start:start + 1000]).execute()
    last = alice.get(f"/api/nodes/{big}/?page[size]=100&page[number]=last").json()
    assert last["meta"]["pagination"] == {"page": 1000, "pages": 1000, "count": 100_000}
    assert [d["attributes"]["title"] for d in last["data"]][-1] == "doc 099999"
    wait_indexed(config, timeout=120)
    assert [r["title"] for r in alice.get("/api/search/", params={"q": "doc 099999"}).json()] == \
        ["doc 099999"]
    assert alice.delete(f"/api/nodes/{big}/").status_code == 204
    assert alice.get(f"/api/nodes/{big}/").json() == NOT_FOUND
    assert alice.get("/api/documents/").json()["meta"]["pagination"]["count"] == 0


@pytest.mark.socket  # waitress' header limit
def test_huge_headers_are_refused(server):
    response = requests.get(server.url + "/api/users/me/",
                            headers={"X-Padding": "x" * 100_000, "Authorization": "Token x"})
    assert 400 <= response.status_code < 500


@pytest.mark.config(max_tree_depth=3)
def test_a_node_too_deep_is_answered_with_its_pointer(alice, config):
    """One refusal of the depth limit through the API (the fast tier has the move too)."""
    one = make_folder(alice, "one", alice.home_id)
    two = make_folder(alice, "two", one)
    three = make_folder(alice, "three", two)
    before = snapshot(config)
    body = {"data": {"type": "documents", "attributes": {"title": "four"},
                     "relationships": {"parent": {"data": {"type": "folders", "id": three}}}}}
    assert_error(alice.post("/api/nodes/", body), 400, "invalid", too_deep(3),
                 "/data/relationships/parent")
    assert snapshot(config) == before


# -- the fast tier: the domain's functions on the test's own database, no server -----------------

@pytest.mark.slow
def test_a_thousand_levels_deep(services, config):
    alice = new_user("alice")
    depth = services.config.max_tree_depth
    chain, parent = [], home_id(alice)
    for level in range(1000):
        parent = new_folder(services, alice, f"L{level}", parent)
        chain.append(parent)
    crumb = tree.breadcrumbs([chain[-1]])[chain[-1]]
    assert len(crumb) == 1001 and crumb[0] == [".home", home_id(alice)] and \
        crumb[-1] == ["L999", chain[-1]]
    # A cycle through all 1,000 levels is still found, and the whole chain moves in one go.
    assert_refused(config, lambda: tree.move_nodes(alice, [chain[0]], chain[-1], depth),
                   "invalid", "A folder cannot be moved into itself or into one of its own "
                   "folders.", "/target_parent/id")
    moved = tree.move_nodes(alice, [chain[0]], inbox_id(alice), depth)
    assert [node.id for node in moved] == [chain[0]]
    crumb = tree.breadcrumbs([chain[-1]])[chain[-1]]
    assert crumb[0] == [".inbox", inbox_id(alice)]
    trash.delete(services, alice, chain[0])
    assert_refused(config, lambda: tree.owned_node(alice, chain[-1], Node.FOLDER), "not_found",
                   "Not found.", None)


@pytest.mark.parametrize("size", [(10_000, 10_000), (20_000, 20_000)])
def test_decompression_bombs_are_refused(services, config, size):
    image = Image.new("1", size, 1)  # 100 or 400 million pixels, a few kilobytes as PNG
    out = io.BytesIO()
    image.save(out, "PNG")
    assert len(out.getvalue()) < 200_000
    alice = new_user("alice")
    document_id = new_document(services, alice, "doc", home_id(alice))
    assert_refused(config, lambda: upload_file(services, alice, document_id, "bomb.png",
                                               out.getvalue()), "invalid", TOO_MANY_PIXELS, None)
    assert stored_files(config) == [] and temporary_files(config) == []


def test_a_zip_bomb_is_not_accepted(services, config):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bomb:
        bomb.writestr("zeros.txt", b"\0" * 50_000_000)
    alice = new_user("alice")
    document_id = new_document(services, alice, "doc", home_id(alice))
    assert_refused(config, lambda: upload_file(services, alice, document_id, "bomb.zip",
                                               out.getvalue()), "unsupported_media_type",
                   "This type of file is not supported; "
                   "upload a PDF, PNG, JPEG, TIFF or plain text file.", None)
    assert stored_files(config) == [] and temporary_files(config) == []


@pytest.mark.slow
def test_a_pdf_with_10000_pages(reading, config):
    """... is read whole and found by search; its rules look at its first DMS_RULES_MAX_TEXT_CHARS
    characters (about 2,900 of its pages here), and it finishes."""
    services, alice = reading, new_user("alice")
    for name, algorithm, pattern in (("early", "exact", "Page 2 of the"),
                                     ("late", "exact", "Page 9999 of the"),
                                     ("fuzzy", "fuzzy", "very lonq repcrt"),
                                     ("number", "regex", r"Page \d{5} of")):
        make_rule(alice, name, pattern, algorithm=algorithm, actions={"add_tags": [name]})
    pages = [f"Page {n} of the very long report" for n in range(1, 10_001)]
    document_id = new_document(services, alice, "doc", home_id(alice))
    document = upload_file(services, alice, document_id, "long.pdf", samples.pdf(pages))
    assert document.page_count == 10_000
    [version] = documents.versions(document_id)
    assert len(documents.page_ids([version.id])[version.id]) == 10_000
    assert wait_read(document_id, timeout=600)[-1] == "succeeded"
    assert documents.latest_text(document_id) == "\n\n".join(pages)
    wait_indexed(config, timeout=120)
    # What GET /search/?q=report 10000 answers.
    found = search.query(services.search, alice, "report 10000",
                         timeout=config.search_timeout_seconds)
    assert [r["id"] for r in found] == [document_id]
    assert found[0]["highlight"].startswith("…of the very long <em>report</em>\n\nPage 2 of")
    assert filed(alice, document_id)[2] == ["early", "fuzzy"]


@pytest.mark.config(max_tree_depth=3)
def test_folders_nest_at_most_the_configured_depth(services, config):
    alice = new_user("alice")
    one = new_folder(services, alice, "one", home_id(alice))
    two = new_folder(services, alice, "two", one)
    three = new_folder(services, alice, "three", two)
    assert_refused(config, lambda: tree.create_node(
        alice, Node.DOCUMENT, {"title": "four"}, three, parent_field="/data/relationships/parent",
        default_lang="eng", max_depth=3), "invalid", too_deep(3), "/data/relationships/parent")
    assert_refused(config, lambda: tree.create_node(
        alice, Node.FOLDER, {"title": "four"}, three, parent_field="/data/relationships/parent",
        default_lang="eng", max_depth=3), "invalid", too_deep(3), "/data/relationships/parent")
    # A move that would take `two` (with `three` below it) under `three`'s level is refused too.
    side = new_folder(services, alice, "side", home_id(alice))
    lower = new_folder(services, alice, "lower", side)
    assert_refused(config, lambda: tree.move_nodes(alice, [two], lower, 3), "invalid",
                   too_deep(3), "/target_parent/id")
    assert [node.id for node in tree.move_nodes(alice, [two], side, 3)] == [two]
