"""Page operations across documents (docs/api.md, "Page operations"), through the API: pages moved
into another document (at a position, or replacing its pages), pages extracted into a folder as new
documents (one, or one per page, titled by title_format or by id), two documents merged; a document
left without pages, a merge's source go to the trash and come back from it; search follows the moved
text; the history of each document says what happened; refusals change nothing; another user's pages
and targets are unknown."""

from __future__ import annotations

import re

import pytest

from tests.harness import samples
from tests.harness.client import JSON, NOT_FOUND, assert_error
from tests.harness.database import snapshot
from tests.harness.documents import make_folder, new_document, upload
from tests.harness.pdfops import page_texts
from tests.harness.waiting import wait_indexed, wait_processed


def letter(client, title: str, words: list[str]) -> tuple[str, list[str]]:
    """A processed PDF with one page per word: (its id, its page ids)."""
    document_id = new_document(client, title)
    data = samples.pdf([f"Page {word} of {title}" for word in words])
    assert upload(client, document_id, title, data).status_code == 201
    assert wait_processed(client, document_id)[-1] == "succeeded"
    return document_id, pages_of(client, document_id)


def attributes(client, document_id) -> dict:
    return client.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]


def pages_of(client, document_id) -> list[str]:
    return [page["id"] for page in attributes(client, document_id)["versions"][-1]["pages"]]


def words(client, document_id) -> list[str]:
    data = client.get(f"/api/documents/{document_id}/download/").content
    return [text.split()[1] for text in page_texts(data)]


def children(client, folder_id) -> dict[str, str]:
    listing = client.get(f"/api/nodes/{folder_id}/?page[size]=100").json()["data"]
    return {node["attributes"]["title"]: node["id"] for node in listing}


def search(client, config, text) -> list[str]:
    wait_indexed(config)
    return sorted(hit["title"] for hit in client.get("/api/search/", params={"q": text}).json())


def actions(client, node_id) -> list[tuple[str, dict]]:
    events = client.get(f"/api/nodes/{node_id}/history/").json()["data"]
    return [(event["attributes"]["action"], event["attributes"]["details"]) for event in events]


def test_pages_move_into_another_document_at_a_position(alice, config):
    source, source_pages = letter(alice, "a.pdf", ["alpha", "bravo", "charlie"])
    target, _ = letter(alice, "b.pdf", ["one", "two"])
    body = {"pages": [source_pages[2], source_pages[0]], "dst": target, "position": 1}
    assert alice.post("/api/pages/move-to-document/", body, media=JSON).status_code == 204
    assert words(alice, target) == ["one", "charlie", "alpha", "two"]
    assert words(alice, source) == ["bravo"]
    assert [v["short_description"] for v in attributes(alice, target)["versions"]] == \
        ["", "2 page(s) moved from a.pdf"]
    assert attributes(alice, source)["versions"][-1]["short_description"] == \
        "2 page(s) moved to b.pdf"
    assert search(alice, config, "charlie") == ["b.pdf"]
    assert actions(alice, target)[0] == ("pages_changed", {
        "version": 2, "description": "2 page(s) moved from a.pdf", "pages": 4})
    # At the end (position -1, the default), from two documents at once.
    other, other_pages = letter(alice, "c.pdf", ["xray"])
    body = {"pages": [other_pages[0], pages_of(alice, source)[0]], "dst": target}
    assert alice.post("/api/pages/move-to-document/", body, media=JSON).status_code == 204
    assert words(alice, target) == ["one", "charlie", "alpha", "two", "xray", "bravo"]
    # Both sources were left without pages: they are in the trash, and come back from it.
    trash = {node["attributes"]["title"]: node["id"] for node in
             alice.get("/api/trash/").json()["data"]}
    assert sorted(trash) == ["a.pdf", "c.pdf"]
    assert alice.get(f"/api/documents/{source}/").status_code == 404
    assert alice.post(f"/api/trash/{source}/restore/").status_code == 200
    assert words(alice, source) == ["bravo"]
    assert actions(alice, source)[1][0] == "deleted"


def test_merge_true_replaces_the_target_pages(alice):
    source, source_pages = letter(alice, "a.pdf", ["alpha", "bravo"])
    target, _ = letter(alice, "b.pdf", ["one", "two"])
    body = {"pages": [source_pages[1]], "dst": target, "merge": True}
    assert alice.post("/api/pages/move-to-document/", body, media=JSON).status_code == 204
    assert words(alice, target) == ["bravo"]
    assert words(alice, source) == ["alpha"]
    target_versions = attributes(alice, target)["versions"]
    assert target_versions[-1]["short_description"] == "pages replaced by 1 page(s) from a.pdf"
    old = alice.get(f"/api/document-versions/{target_versions[0]['id']}/download/").content
    assert [text.split()[1] for text in page_texts(old)] == ["one", "two"]


def test_pages_become_a_new_document_in_a_folder(alice, config):
    source, source_pages = letter(alice, "batch.pdf", ["alpha", "bravo", "charlie", "delta"])
    folder = make_folder(alice, "Extracted", alice.home_id)
    body = {"pages": [source_pages[1], source_pages[2]], "dst": folder,
            "title_format": "Invoice"}
    assert alice.post("/api/pages/move-to-folder/", body, media=JSON).status_code == 204
    made = children(alice, folder)
    assert list(made) == ["Invoice.pdf"]
    assert words(alice, made["Invoice.pdf"]) == ["bravo", "charlie"]
    assert words(alice, source) == ["alpha", "delta"]
    new = attributes(alice, made["Invoice.pdf"])
    assert (new["ocr_status"], new["file_name"], new["page_count"],
            [v["short_description"] for v in new["versions"]]) == \
        ("succeeded", "Invoice.pdf", 2, ["2 page(s) extracted from batch.pdf"])
    assert actions(alice, made["Invoice.pdf"]) == [("created", {
        "kind": "document", "title": "Invoice.pdf", "pages": 2,
        "origin": {"id": source, "title": "batch.pdf"},
        "parent": {"id": folder, "title": "Extracted"}})]
    assert search(alice, config, "charlie") == ["Invoice.pdf"]

    # One document per page; without a title_format each is named by its id.
    body = {"pages": pages_of(alice, source), "dst": folder, "single_page": True}
    assert alice.post("/api/pages/move-to-folder/", body, media=JSON).status_code == 204
    made = children(alice, folder)
    named = sorted(title for title in made if title != "Invoice.pdf")
    assert len(named) == 2 and all(re.fullmatch(r"document-[0-9a-f]{8}\.pdf", t) for t in named)
    assert all(made[title].startswith(title[9:17]) for title in named)
    assert sorted(words(alice, made[title])[0] for title in named) == ["alpha", "delta"]
    assert alice.get(f"/api/documents/{source}/").status_code == 404  # emptied: in the trash

    # title_format with several documents: <title_format>-<n>.pdf
    source, source_pages = letter(alice, "more.pdf", ["echo", "foxtrot"])
    body = {"pages": source_pages, "dst": folder, "single_page": True, "title_format": "Page"}
    assert alice.post("/api/pages/move-to-folder/", body, media=JSON).status_code == 204
    made = children(alice, folder)
    assert (words(alice, made["Page-1.pdf"]), words(alice, made["Page-2.pdf"])) == \
        (["echo"], ["foxtrot"])


def test_merging_documents(alice, config):
    source, _ = letter(alice, "second.pdf", ["charlie"])
    target, _ = letter(alice, "first.pdf", ["alpha", "bravo"])
    alice.post(f"/api/nodes/{source}/tags/", {"tags": ["paid"]}, media=JSON)
    body = {"src": source, "dst": target}
    assert alice.post("/api/documents/merge/", body, media=JSON).status_code == 204
    assert words(alice, target) == ["alpha", "bravo", "charlie"]
    assert attributes(alice, target)["versions"][-1]["short_description"] == \
        "1 page(s) merged from second.pdf"
    assert [node["id"] for node in alice.get("/api/trash/").json()["data"]] == [source]
    assert search(alice, config, "charlie") == ["first.pdf"]


@pytest.mark.config(trash_days=0)
def test_without_a_trash_an_emptied_document_is_gone_for_good(alice, config):
    source, _ = letter(alice, "second.pdf", ["charlie"])
    target, _ = letter(alice, "first.pdf", ["alpha"])
    assert alice.post("/api/documents/merge/", {"src": source, "dst": target},
                      media=JSON).status_code == 204
    assert alice.get("/api/trash/").json()["data"] == []
    assert alice.get(f"/api/nodes/{source}/history/").status_code == 404
    assert words(alice, target) == ["alpha", "charlie"]


def test_refused_moves_and_merges_change_nothing(alice, config):
    source, source_pages = letter(alice, "a.pdf", ["alpha", "bravo"])
    target, target_pages = letter(alice, "b.pdf", ["one"])
    folder = make_folder(alice, "Folder", alice.home_id)
    empty = new_document(alice, "empty.pdf")
    wait_indexed(config)
    before = snapshot(config)
    cases = [
        ("/api/pages/move-to-document/", {"pages": [source_pages[0]], "dst": folder}, 400,
         "invalid", "That is a folder; a document is needed here.", "/dst"),
        ("/api/pages/move-to-document/", {"pages": [source_pages[0]], "dst": source}, 400,
         "invalid", "Those pages are already in that document; reorder them instead.", "/dst"),
        ("/api/pages/move-to-document/", {"pages": [source_pages[0]], "dst": target,
                                          "position": 5}, 400, "invalid",
         "position is -1 (at the end) or between 0 and 1.", "/position"),
        ("/api/pages/move-to-document/", {"pages": [source_pages[0]], "dst": empty}, 400,
         "invalid", "The document empty.pdf has no file yet; upload one first.", "/dst"),
        ("/api/pages/move-to-folder/", {"pages": [source_pages[0]], "dst": target}, 400,
         "invalid", "That is a document; the pages can only go into a folder.", "/dst"),
        ("/api/pages/move-to-folder/", {"pages": [source_pages[0]], "dst": folder,
                                        "title_format": "x" * 33}, 400, "invalid",
         "title_format is text of at most 32 characters.", "/title_format"),
        ("/api/pages/move-to-folder/", {"pages": [source_pages[0], target_pages[0]],
                                        "dst": folder}, 400, "invalid",
         "All pages must belong to one document; change one document at a time.", "/pages"),
        ("/api/documents/merge/", {"src": source, "dst": source}, 400, "invalid",
         "A document cannot be merged into itself.", "/dst"),
        ("/api/documents/merge/", {"src": source}, 400, "required",
         "A document id is required.", "/dst"),
    ]
    for path, body, status, code, detail, pointer in cases:
        assert_error(alice.post(path, body, media=JSON), status, code, detail, pointer)
    assert snapshot(config) == before


def test_another_users_pages_and_targets_are_unknown(alice, bob, anon, config):
    source, source_pages = letter(alice, "a.pdf", ["alpha", "bravo"])
    target, _ = letter(alice, "b.pdf", ["one"])
    bobs, bobs_pages = letter(bob, "bob.pdf", ["bob"])
    bobs_folder = make_folder(bob, "Bob's", bob.home_id)
    wait_indexed(config)
    before = snapshot(config)
    calls = [(alice, "/api/pages/move-to-document/", {"pages": [source_pages[0]], "dst": bobs}),
             (alice, "/api/pages/move-to-document/", {"pages": [bobs_pages[0]], "dst": target}),
             (alice, "/api/pages/move-to-folder/", {"pages": [source_pages[0]],
                                                    "dst": bobs_folder}),
             (alice, "/api/documents/merge/", {"src": bobs, "dst": target}),
             (alice, "/api/documents/merge/", {"src": source, "dst": bobs}),
             (bob, "/api/pages/move-to-folder/", {"pages": [source_pages[0]],
                                                  "dst": bobs_folder})]
    for client, path, body in calls:
        response = client.post(path, body, media=JSON)
        assert (response.status_code, response.json()) == (404, NOT_FOUND), (path, body)
        assert anon.post(path, body, media=JSON).status_code == 401
    assert snapshot(config) == before
