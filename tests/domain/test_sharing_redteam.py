"""A red team's try at what is not shared (api.md §21), on both engines: bob, an editor of one of
alice's folders, collects every id he can learn from what is shared with him (the nodes and
their parents and breadcrumbs, versions, pages, download links, the history's details, notes,
search results, his own .shared, his event stream) and tries each one on every route that reads
or changes something; whatever is not below the shared folder answers as an unknown id, and
nothing of alice's unshared papers changes."""

from __future__ import annotations

import re

import pytest

from tests.harness.client import NOT_FOUND
from tests.harness.database import snapshot
from tests.harness.documents import create_node, make_folder, upload_accepted
from tests.harness.pdfops import long_batch
from tests.harness.waiting import wait_processed
from tests.harness.webhooks import EventStream

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def ids_in(value: object) -> set[str]:
    return set(UUID.findall(str(value)))


def events_seen(server, bob) -> set[str]:
    """The ids in every event bob's stream sends him from the start, up to one of his own."""
    stream = EventStream(server.url, bob.token, query="?since=0")
    try:
        end = create_node(bob, "folders", "end", bob.home_id)
        found: set[str] = set()
        while True:
            event = stream.next_event()
            assert event is not None, "the stream ended"
            found |= ids_in(event[1])
            if event[1]["node"]["id"] == end:
                return found
    finally:
        stream.close()


@pytest.mark.socket  # the event stream
def test_no_id_learnt_from_a_shared_folder_reaches_anything_else(server, alice, bob, config):
    private = make_folder(alice, "Private", alice.home_id)
    family = make_folder(alice, "Family", alice.home_id)
    diary = create_node(alice, "documents", "diary", private)
    policy = create_node(alice, "documents", "policy", private)
    for document in (diary, policy):
        upload_accepted(alice, document, "file.pdf", long_batch(2))
        assert wait_processed(alice, document)[-1] == "succeeded"
    # policy was in Private before: its history names it; then shared through Family.
    assert alice.post("/api/nodes/move/", {"nodes": [{"id": policy}],
                                           "target_parent": {"id": family}}).status_code == 200
    alice.post(f"/api/documents/{policy}/notes/", {"data": {"attributes": {"note": "n"}}})
    assert alice.post(f"/api/nodes/{family}/access/",
                      {"username": "bob", "role": "editor"}).status_code == 201
    # After the grant: out of the shared folder and back (the move's events name Private).
    for target in (private, family):
        assert alice.post("/api/nodes/move/", {"nodes": [{"id": policy}],
                                               "target_parent": {"id": target}}).status_code == 200
    reachable = {family, policy}
    learnt: set[str] = set()
    for path in ("/api/nodes/", f"/api/nodes/{bob.shared_id}/", f"/api/nodes/{family}/",
                 f"/api/folders/{family}/", f"/api/documents/{policy}/",
                 f"/api/nodes/{policy}/history/", f"/api/nodes/{family}/history/",
                 f"/api/documents/{policy}/notes/", "/api/documents/", "/api/folders/",
                 "/api/search/?q=batch", "/api/search/", f"/api/document/{policy}",
                 "/api/documents"):
        learnt |= ids_in(bob.get(path).json())
    from_events = events_seen(server, bob)
    assert private in from_events  # the moves' details, as the history's
    learnt |= from_events
    versions = {v["id"]: [p["id"] for p in v["pages"]] for v in
                alice.get(f"/api/documents/{policy}/").json()["data"]["attributes"]["versions"]}
    reachable |= set(versions) | {page for pages in versions.values() for page in pages}
    reachable |= {bob.user_id, bob.home_id, bob.inbox_id, bob.shared_id,
                  *ids_in(bob.get(f"/api/nodes/{bob.home_id}/").json())}
    assert {private, alice.home_id} <= learnt  # what the histories told him
    # And what he could not have learnt: alice's own folders and the diary's versions and pages.
    theirs = alice.get(f"/api/documents/{diary}/").json()["data"]["attributes"]["versions"]
    unknown = (learnt - reachable) | {alice.home_id, alice.inbox_id, private, diary} | \
        {theirs[0]["id"], *(page["id"] for page in theirs[0]["pages"])}
    assert {alice.home_id, private, diary} <= unknown
    before = snapshot(config)
    for node in sorted(unknown):
        for path in (f"/api/nodes/{node}/", f"/api/folders/{node}/", f"/api/documents/{node}/",
                     f"/api/documents/{node}/download/", f"/api/document-versions/{node}/",
                     f"/api/document-versions/{node}/download/", f"/api/pages/{node}/",
                     f"/api/documents/{node}/ocr-text", f"/api/nodes/{node}/history/",
                     f"/api/documents/{node}/notes/", f"/api/nodes/download/?node_ids={node}",
                     f"/api/nodes/{node}/access/", f"/api/document/{node}"):
            assert bob.get(path).json() == NOT_FOUND, path
        for method, path, body in (
                ("PATCH", f"/api/nodes/{node}/",
                 {"data": {"type": "documents", "attributes": {"title": "x"}}}),
                ("DELETE", f"/api/nodes/{node}/", None), ("DELETE", f"/api/pages/{node}/", None),
                ("POST", f"/api/nodes/{node}/tags/", {"tags": ["x"]}),
                ("POST", f"/api/nodes/{node}/access/", {"username": "bob", "role": "editor"}),
                ("POST", "/api/nodes/move/", {"nodes": [{"id": node}],
                                              "target_parent": {"id": family}}),
                ("POST", "/api/nodes/move/", {"nodes": [{"id": policy}],
                                              "target_parent": {"id": node}}),
                ("POST", "/api/pages/rotate/", {"pages": [{"id": node, "angle": 90}]}),
                ("POST", "/api/documents/merge/", {"src": node, "dst": policy}),
                ("POST", "/api/documents/merge/", {"src": policy, "dst": node}),
                ("POST", "/api/ocr/", {"doc_id": node}),
                ("POST", f"/api/documents/{node}/notes/", {"data": {"attributes": {"note": "x"}}}),
                ("POST", "/api/trash/" + node + "/restore/", None)):
            response = bob.request(method, path, json_body=body)
            assert response.json() == NOT_FOUND, (method, path, response.text)
        response = bob.put(f"/api/documents/{node}/upload/x.pdf", data=long_batch(1), headers={
            "Content-Type": "application/octet-stream",
            "Content-Disposition": "attachment; filename=x.pdf"})
        assert response.json() == NOT_FOUND
    assert snapshot(config) == before
