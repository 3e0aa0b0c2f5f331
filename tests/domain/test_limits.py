"""Limits and abuse: every oversized or hostile input gets a clear 4xx, or is processed within
bounded work (deep trees, huge folders, decompression bombs, zip bombs, 10,000-page PDFs)."""

from __future__ import annotations

import io
import zipfile

import pytest
import requests
from PIL import Image

from dms.db import database
from dms.db.models import Node, new_id, utcnow
from tests.harness import samples
from tests.harness.client import JSON, NOT_FOUND, assert_error
from tests.harness.database import snapshot
from tests.harness.documents import (
    TOO_MANY_PIXELS,
    make_folder,
    new_document,
    stored_files,
    temporary_files,
    upload,
)
from tests.harness.rules import add_rule, filed
from tests.harness.waiting import wait_indexed, wait_processed


@pytest.mark.slow
def test_a_thousand_levels_deep(alice):
    chain, parent = [], alice.home_id
    for level in range(1000):
        parent = make_folder(alice, f"L{level}", parent)
        chain.append(parent)
    crumb = alice.get(f"/api/folders/{chain[-1]}/").json()["data"]["attributes"]["breadcrumb"]
    assert len(crumb) == 1001 and crumb[0] == [".home", alice.home_id] and \
        crumb[-1] == ["L999", chain[-1]]
    # A cycle through all 1,000 levels is still found, and the whole chain moves in one go.
    into_itself = alice.post("/api/nodes/move/", {"nodes": [{"id": chain[0]}],
                                                  "target_parent": {"id": chain[-1]}}, media=JSON)
    assert into_itself.status_code == 400
    moved = alice.post("/api/nodes/move/", {"nodes": [{"id": chain[0]}],
                                            "target_parent": {"id": alice.inbox_id}}, media=JSON)
    assert moved.status_code == 200
    crumb = alice.get(f"/api/folders/{chain[-1]}/").json()["data"]["attributes"]["breadcrumb"]
    assert crumb[0] == [".inbox", alice.inbox_id]
    assert alice.delete(f"/api/nodes/{chain[0]}/").status_code == 204
    assert alice.get(f"/api/folders/{chain[-1]}/").json() == NOT_FOUND


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


@pytest.mark.parametrize("size", [(10_000, 10_000), (20_000, 20_000)])
def test_decompression_bombs_are_refused(alice, config, size):
    image = Image.new("1", size, 1)  # 100 or 400 million pixels, a few kilobytes as PNG
    out = io.BytesIO()
    image.save(out, "PNG")
    assert len(out.getvalue()) < 200_000
    document_id = new_document(alice)
    before = snapshot(config)
    assert_error(upload(alice, document_id, "bomb.png", out.getvalue()), 400, "invalid",
                 TOO_MANY_PIXELS)
    assert snapshot(config) == before
    assert stored_files(config) == [] and temporary_files(config) == []


def test_a_zip_bomb_is_not_accepted(alice, config):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bomb:
        bomb.writestr("zeros.txt", b"\0" * 50_000_000)
    document_id = new_document(alice)
    before = snapshot(config)
    assert_error(upload(alice, document_id, "bomb.zip", out.getvalue()), 415,
                 "unsupported_media_type",
                 "This type of file is not supported; "
                 "upload a PDF, PNG, JPEG, TIFF or plain text file.")
    assert snapshot(config) == before
    assert stored_files(config) == [] and temporary_files(config) == []


@pytest.mark.slow
def test_a_pdf_with_10000_pages(alice, config):
    """... is read whole and found by search; its rules look at its first DMS_RULES_MAX_TEXT_CHARS
    characters (about 2,900 of its pages here), and it finishes."""
    for name, algorithm, pattern in (("early", "exact", "Page 2 of the"),
                                     ("late", "exact", "Page 9999 of the"),
                                     ("fuzzy", "fuzzy", "very lonq repcrt"),
                                     ("number", "regex", r"Page \d{5} of")):
        add_rule(alice, name, pattern, algorithm=algorithm, actions={"add_tags": [name]})
    pages = [f"Page {n} of the very long report" for n in range(1, 10_001)]
    document_id = new_document(alice)
    response = upload(alice, document_id, "long.pdf", samples.pdf(pages))
    assert response.status_code == 201
    attributes = response.json()["data"]["attributes"]
    assert attributes["page_count"] == 10_000
    assert len(attributes["versions"][0]["pages"]) == 10_000
    assert wait_processed(alice, document_id, timeout=600)[-1] == "succeeded"
    assert alice.get(f"/api/documents/{document_id}/ocr-text").json() == \
        {"text": "\n\n".join(pages)}
    wait_indexed(config, timeout=120)
    found = alice.get("/api/search/", params={"q": "report 10000"}).json()
    assert [r["id"] for r in found] == [document_id]
    assert found[0]["highlight"].startswith("…of the very long <em>report</em>\n\nPage 2 of")
    assert filed(alice, document_id)[2] == ["early", "fuzzy"]


@pytest.mark.socket  # waitress' header limit
def test_huge_headers_are_refused(server):
    response = requests.get(server.url + "/api/users/me/",
                            headers={"X-Padding": "x" * 100_000, "Authorization": "Token x"})
    assert 400 <= response.status_code < 500


@pytest.mark.config(max_tree_depth=3)
def test_folders_nest_at_most_the_configured_depth(alice, config):
    one = make_folder(alice, "one", alice.home_id)
    two = make_folder(alice, "two", one)
    three = make_folder(alice, "three", two)
    too_deep = ("Folders can be nested at most 3 levels deep (DMS_MAX_TREE_DEPTH); choose a folder "
                "higher up.")
    before = snapshot(config)
    body = {"data": {"type": "documents", "attributes": {"title": "four"},
                     "relationships": {"parent": {"data": {"type": "folders", "id": three}}}}}
    assert_error(alice.post("/api/nodes/", body), 400, "invalid", too_deep,
                 "/data/relationships/parent")
    assert snapshot(config) == before
    # A move that would take `two` (with `three` below it) under `three`'s level is refused too.
    side = make_folder(alice, "side", alice.home_id)
    lower = make_folder(alice, "lower", side)
    before = snapshot(config)
    move = {"nodes": [{"id": two}], "target_parent": {"id": lower}}
    assert_error(alice.post("/api/nodes/move/", move, media=JSON), 400, "invalid", too_deep,
                 "/target_parent/id", media=JSON)
    assert snapshot(config) == before
    fits = {"nodes": [{"id": two}], "target_parent": {"id": side}}
    assert alice.post("/api/nodes/move/", fits, media=JSON).status_code == 200
