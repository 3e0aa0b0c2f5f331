"""Page operations across documents (docs/api.md, "Page operations"): pages moved into another
document (at a position, or replacing its pages), pages extracted into a folder as new documents
(one, or one per page, titled by title_format or by id), two documents merged; a document left
without pages, a merge's source go to the trash and come back from it; search follows the moved
text; the history of each document says what happened; refusals change nothing. These on the fast
tier: the domain's functions with the queue's workers, no server. Through the API: the answers
(204, a refused body's pointer), another user's pages and targets are unknown."""

from __future__ import annotations

import re

import pytest

from dms.domain import documents, history, listings, tags, trash, tree
from dms.domain.pages import operations
from dms.errors import NotFound
from tests.harness import samples
from tests.harness.client import JSON, NOT_FOUND, assert_error
from tests.harness.database import snapshot
from tests.harness.documents import make_folder, new_document, upload
from tests.harness.domaintier import (
    assert_refused,
    events_of,
    home_id,
    latest_file,
    new_folder,
    new_user,
    page_ids,
    read_document,
    search_titles,
    stored_file,
)
from tests.harness.domaintier import new_document as new_domain_document
from tests.harness.pdfops import page_texts
from tests.harness.waiting import wait_indexed, wait_processed


def letter(services, user, title: str, words: list[str]) -> tuple[str, list[str]]:
    """A processed PDF with one page per word: (its id, its page ids)."""
    data = samples.pdf([f"Page {word} of {title}" for word in words])
    document_id = read_document(services, user, title, title, data)
    return document_id, page_ids(document_id)


def words(services, document_id) -> list[str]:
    return [text.split()[1] for text in page_texts(latest_file(services, document_id))]


def descriptions(document_id) -> list[str]:
    return [version.short_description for version in documents.versions(document_id)]


def children(user, folder_id) -> dict[str, str]:
    _, listing = listings.listing(user, folder_id)
    return {node.title: node.id for node in listing.fetch(0, 100)}


def trashed(user) -> dict[str, str]:
    return {node.title: node.id for node, _ in trash.trashed(user).fetch(0, 100)}


def test_pages_move_into_another_document_at_a_position(reading):
    alice = new_user("alice")
    source, source_pages = letter(reading, alice, "a.pdf", ["alpha", "bravo", "charlie"])
    target, _ = letter(reading, alice, "b.pdf", ["one", "two"])
    operations.move_to_document(reading, alice, [source_pages[2], source_pages[0]], target, 1,
                                False)
    assert words(reading, target) == ["one", "charlie", "alpha", "two"]
    assert words(reading, source) == ["bravo"]
    assert descriptions(target) == ["", "2 page(s) moved from a.pdf"]
    assert descriptions(source)[-1] == "2 page(s) moved to b.pdf"
    assert search_titles(reading, alice, "charlie") == ["b.pdf"]
    assert events_of(alice, target)[-1] == ("pages_changed", {
        "version": 2, "description": "2 page(s) moved from a.pdf", "pages": 4})
    # At the end (position -1, the route's default), from two documents at once.
    other, other_pages = letter(reading, alice, "c.pdf", ["xray"])
    operations.move_to_document(reading, alice, [other_pages[0], page_ids(source)[0]], target,
                                -1, False)
    assert words(reading, target) == ["one", "charlie", "alpha", "two", "xray", "bravo"]
    # Both sources were left without pages: they are in the trash, and come back from it.
    assert sorted(trashed(alice)) == ["a.pdf", "c.pdf"]
    with pytest.raises(NotFound):
        tree.owned_node(alice, source)
    trash.restore(reading, alice, source)
    assert words(reading, source) == ["bravo"]
    assert events_of(alice, source)[-2][0] == "deleted"


def test_merge_true_replaces_the_target_pages(reading):
    alice = new_user("alice")
    source, source_pages = letter(reading, alice, "a.pdf", ["alpha", "bravo"])
    target, _ = letter(reading, alice, "b.pdf", ["one", "two"])
    operations.move_to_document(reading, alice, [source_pages[1]], target, -1, True)
    assert words(reading, target) == ["bravo"]
    assert words(reading, source) == ["alpha"]
    assert descriptions(target)[-1] == "pages replaced by 1 page(s) from a.pdf"
    old = stored_file(reading, documents.versions(target)[0].id)
    assert [text.split()[1] for text in page_texts(old)] == ["one", "two"]


def test_pages_become_a_new_document_in_a_folder(reading):
    alice = new_user("alice")
    source, source_pages = letter(reading, alice, "batch.pdf",
                                  ["alpha", "bravo", "charlie", "delta"])
    folder = new_folder(reading, alice, "Extracted", home_id(alice))
    operations.move_to_folder(reading, alice, [source_pages[1], source_pages[2]], folder, False,
                              "Invoice")
    made = children(alice, folder)
    assert list(made) == ["Invoice.pdf"]
    assert words(reading, made["Invoice.pdf"]) == ["bravo", "charlie"]
    assert words(reading, source) == ["alpha", "delta"]
    new = tree.owned_node(alice, made["Invoice.pdf"])
    assert (new.ocr_status, new.file_name, new.page_count, descriptions(new.id)) == \
        ("succeeded", "Invoice.pdf", 2, ["2 page(s) extracted from batch.pdf"])
    assert events_of(alice, new.id) == [("created", {
        "kind": "document", "title": "Invoice.pdf", "pages": 2,
        "origin": {"id": source, "title": "batch.pdf"},
        "parent": {"id": folder, "title": "Extracted"}})]
    assert search_titles(reading, alice, "charlie") == ["Invoice.pdf"]

    # One document per page; without a title_format each is named by its id.
    operations.move_to_folder(reading, alice, page_ids(source), folder, True, None)
    made = children(alice, folder)
    named = sorted(title for title in made if title != "Invoice.pdf")
    assert len(named) == 2 and all(re.fullmatch(r"document-[0-9a-f]{8}\.pdf", t) for t in named)
    assert all(made[title].startswith(title[9:17]) for title in named)
    assert sorted(words(reading, made[title])[0] for title in named) == ["alpha", "delta"]
    with pytest.raises(NotFound):  # emptied: in the trash
        tree.owned_node(alice, source)

    # title_format with several documents: <title_format>-<n>.pdf
    source, source_pages = letter(reading, alice, "more.pdf", ["echo", "foxtrot"])
    operations.move_to_folder(reading, alice, source_pages, folder, True, "Page")
    made = children(alice, folder)
    assert (words(reading, made["Page-1.pdf"]), words(reading, made["Page-2.pdf"])) == \
        (["echo"], ["foxtrot"])


def test_merging_documents(reading):
    alice = new_user("alice")
    source, _ = letter(reading, alice, "second.pdf", ["charlie"])
    target, _ = letter(reading, alice, "first.pdf", ["alpha", "bravo"])
    tags.change_node_tags(alice, source, ["paid"], "replace")
    operations.merge_documents(reading, alice, source, target)
    assert words(reading, target) == ["alpha", "bravo", "charlie"]
    assert descriptions(target)[-1] == "1 page(s) merged from second.pdf"
    assert list(trashed(alice).values()) == [source]
    assert search_titles(reading, alice, "charlie") == ["first.pdf"]


@pytest.mark.config(trash_days=0)
def test_without_a_trash_an_emptied_document_is_gone_for_good(reading):
    alice = new_user("alice")
    source, _ = letter(reading, alice, "second.pdf", ["charlie"])
    target, _ = letter(reading, alice, "first.pdf", ["alpha"])
    operations.merge_documents(reading, alice, source, target)
    assert trashed(alice) == {}
    with pytest.raises(NotFound):  # its history is gone with it
        history.history_of(alice, source)
    assert words(reading, target) == ["alpha", "charlie"]


def test_refused_moves_and_merges_change_nothing(reading, config):
    alice = new_user("alice")
    source, source_pages = letter(reading, alice, "a.pdf", ["alpha", "bravo"])
    target, target_pages = letter(reading, alice, "b.pdf", ["one"])
    folder = new_folder(reading, alice, "Folder", home_id(alice))
    empty = new_domain_document(reading, alice, "empty.pdf")
    wait_indexed(config)
    to_document, to_folder = operations.move_to_document, operations.move_to_folder
    cases = [
        (to_document, ([source_pages[0]], folder, -1, False), "invalid",
         "That is a folder; a document is needed here.", "dst"),
        (to_document, ([source_pages[0]], source, -1, False), "invalid",
         "Those pages are already in that document; reorder them instead.", "dst"),
        (to_document, ([source_pages[0]], target, 5, False), "invalid",
         "position is -1 (at the end) or between 0 and 1.", "position"),
        (to_document, ([source_pages[0]], empty, -1, False), "invalid",
         "The document empty.pdf has no file yet; upload one first.", "dst"),
        (to_folder, ([source_pages[0]], target, False, None), "invalid",
         "That is a document; the pages can only go into a folder.", "dst"),
        (to_folder, ([source_pages[0]], folder, False, "x" * 33), "invalid",
         "title_format is text of at most 32 characters.", "title_format"),
        (to_folder, ([source_pages[0], target_pages[0]], folder, False, None), "invalid",
         "All pages must belong to one document; change one document at a time.", "pages"),
        (operations.merge_documents, (source, source), "invalid",
         "A document cannot be merged into itself.", "dst"),
        (operations.merge_documents, (source, None), "required",
         "A document id is required.", "dst"),
    ]
    for operation, arguments, code, detail, field in cases:
        assert_refused(config, lambda operation=operation, arguments=arguments: operation(
            reading, alice, *arguments), code, detail, field)


def api_letter(client, title: str, words: list[str]) -> tuple[str, list[str]]:
    """A processed PDF with one page per word, through the API: (its id, its page ids)."""
    document_id = new_document(client, title)
    data = samples.pdf([f"Page {word} of {title}" for word in words])
    assert upload(client, document_id, title, data).status_code == 201
    assert wait_processed(client, document_id)[-1] == "succeeded"
    latest = client.get(f"/api/documents/{document_id}/").json()["data"]["attributes"][
        "versions"][-1]
    return document_id, [page["id"] for page in latest["pages"]]


def test_another_users_pages_and_targets_are_unknown(alice, bob, anon, config):
    """Through the API: another user's pages and targets are unknown (404), an anonymous caller
    is refused (401), a refused body is answered with a pointer into it; each changes nothing.
    An accepted merge is answered 204 without a body."""
    source, source_pages = api_letter(alice, "a.pdf", ["alpha", "bravo"])
    target, _ = api_letter(alice, "b.pdf", ["one"])
    bobs, bobs_pages = api_letter(bob, "bob.pdf", ["bob"])
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
    response = alice.post("/api/pages/move-to-document/",
                          {"pages": [source_pages[0]], "dst": target, "position": 5}, media=JSON)
    assert_error(response, 400, "invalid", "position is -1 (at the end) or between 0 and 1.",
                 "/position")
    assert_error(alice.post("/api/documents/merge/", {"src": source}, media=JSON), 400,
                 "required", "A document id is required.", "/dst")
    assert snapshot(config) == before
    response = alice.post("/api/documents/merge/", {"src": source, "dst": target}, media=JSON)
    assert (response.status_code, response.content) == (204, b"")
