"""Tags that file themselves and inbox tags (api.md §8a, §17, migration 0029) on both engines: a
new document gets every tag whose pattern its text matches and every inbox tag, once its text is
read, whatever brought it (the dialect's post_document, dms's own upload); the dialect's
statistics and `is_in_inbox` then go by the inbox tags; a pattern that cannot be matched is
refused and nothing is made."""

from __future__ import annotations

from tests.harness import samples
from tests.harness.client import assert_error
from tests.harness.database import snapshot
from tests.harness.documents import create_node, upload_accepted
from tests.harness.paperless import API, dialect, make
from tests.harness.waiting import wait_for, wait_processed
from tests.paperless.test_documents import uploaded

JSON = "application/json"


def tag_names(client, dms_id: str) -> list[str]:
    return [tag["name"] for tag in client.get(f"/api/documents/{dms_id}/").json()["data"][
        "attributes"]["tags"]]


def test_matching_and_inbox_tags_file_new_documents(alice, config):
    client = dialect(alice, 10)
    inbox = make(client, "tags", name="Inbox", is_inbox_tag=True)
    energy = make(client, "tags", name="Energy", matching_algorithm=1, match="strom gas")
    make(client, "tags", name="Water", matching_algorithm=3, match="Wasser")
    assert (inbox["is_inbox_tag"], energy["matching_algorithm"], energy["match"]) == (
        True, 1, "strom gas")
    ours = {t["attributes"]["name"]: t["attributes"] for t in alice.get("/api/tags/").json()[
        "data"]}
    assert {key: ours["Energy"][key] for key in ("match", "matching_algorithm", "is_insensitive",
                                                  "is_inbox_tag")} == {
        "match": "strom gas", "matching_algorithm": "any", "is_insensitive": True,
        "is_inbox_tag": False}
    # Through the dialect, and through dms's own upload: the same filing.
    task = uploaded(client, "bill.txt", samples.text("Ihre Stromrechnung: Strom 120 EUR\n"))
    number = task["related_document_ids"][0]
    first = client.get(f"{API}/documents/{number}/").json()["dms_id"]
    second = create_node(alice, "documents", "letter", alice.home_id)
    upload_accepted(alice, second, "letter.txt", samples.text("Nothing about energy\n"))
    for document in (first, second):
        assert wait_processed(alice, document)[-1] == "succeeded"
    assert wait_for(lambda: tag_names(alice, first) == ["Energy", "Inbox"] or None,
                    timeout=30, interval=0.1)
    assert wait_for(lambda: tag_names(alice, second) == ["Inbox"] or None, timeout=30,
                    interval=0.1)
    history = alice.get(f"/api/nodes/{first}/history/").json()["data"]
    assert [e["attributes"]["details"]["tags"] for e in history
            if e["attributes"]["action"] == "tagged"] == [["Energy", "Inbox"]]
    # The inbox is the inbox tags now: statistics and is_in_inbox.
    statistics = client.get(f"{API}/statistics/").json()
    assert (statistics["documents_inbox"], statistics["inbox_tag"], statistics["inbox_tags"]) == (
        2, inbox["id"], [inbox["id"]])
    client.patch(f"{API}/documents/{number}/", {"tags": [energy["id"]]}, media=JSON)
    assert [d["title"] for d in client.get(
        f"{API}/documents/?is_in_inbox=true&fields=title").json()["results"]] == ["letter"]
    # A pattern its algorithm cannot use: refused, nothing made.
    before = snapshot(config)
    refused = client.post(f"{API}/tags/", {"name": "Bad", "matching_algorithm": 4,
                                           "match": "(a"}, media=JSON)
    assert (refused.status_code, list(refused.json())) == (400, ["match"])
    assert_error(alice.post("/api/tags/", {"data": {"type": "tags", "attributes": {
        "name": "Bad", "matching_algorithm": "regex", "match": "(a"}}}), 400, "invalid",
        refused.json()["match"][0], "/data/attributes/match")
    assert snapshot(config) == before
