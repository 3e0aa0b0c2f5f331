"""Every route respects the roles (api.md §21), on both engines: over a folder alice shares, the
answer of an outsider (404, as for any unknown id), a viewer (reads work; every change 403 with a
sentence and nothing changed) and an editor (changes work inside the shared folder; moving out,
deleting the shared folder itself and sharing it are refused), a revocation at once, and what a
node made in a shared folder is: its owner's, with its maker in the history."""

from __future__ import annotations

import pytest

from tests.harness.client import JSON, NOT_FOUND, assert_error
from tests.harness.database import snapshot
from tests.harness.documents import create_node, make_folder, upload_accepted
from tests.harness.pdfops import long_batch
from tests.harness.waiting import wait_for

READ_ONLY = ("permission_denied",
             "It is shared with you to read; changing it needs the editor role.")
ONLY_THE_OWNER = ("permission_denied",
                  "Only its owner (or a superuser) sees and changes who it is shared with.")


def processed(client, document_id: str, pages: int) -> dict:
    """A document whose file has been read; its attributes."""
    def ended():
        attributes = client.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]
        return attributes if attributes["ocr_status"] in ("succeeded", "failed") else None
    attributes = wait_for(ended, timeout=60, interval=0.05, message="not read in time")
    assert (attributes["ocr_status"], attributes["page_count"]) == ("succeeded", pages)
    return attributes


@pytest.fixture
def shared(alice, bob, make_user):
    """alice's .home/Family (shared: bob viewer, carol editor) with Family/Claims, the documents
    policy (3 pages), claim (2) and receipt (1); .home/Private/diary, shared with nobody; dave,
    an outsider."""
    carol, dave = make_user("carol"), make_user("dave")
    family = make_folder(alice, "Family", alice.home_id)
    claims = make_folder(alice, "Claims", family)
    private = make_folder(alice, "Private", alice.home_id)
    ids = {"family": family, "claims": claims, "private": private}
    for name, parent, pages in (("policy", family, 3), ("claim", family, 2),
                                ("receipt", family, 1), ("diary", private, 1)):
        ids[name] = create_node(alice, "documents", name, parent)
        upload_accepted(alice, ids[name], f"{name}.pdf", long_batch(pages))
        processed(alice, ids[name], pages)
    for grantee, role in ((bob, "viewer"), (carol, "editor")):
        response = alice.post(f"/api/nodes/{family}/access/",
                              {"username": grantee.username, "role": role})
        assert response.status_code == 201, response.text
    document = alice.get(f"/api/documents/{ids['policy']}/").json()["data"]["attributes"]
    ids["version"] = document["versions"][0]["id"]
    ids["page"] = document["versions"][0]["pages"][0]["id"]
    return {"alice": alice, "viewer": bob, "editor": carol, "outsider": dave, **ids}


def reads(s: dict) -> list[tuple[str, str]]:
    return [
        ("GET", f"/api/nodes/{s['family']}/"), ("GET", f"/api/folders/{s['family']}/"),
        ("GET", f"/api/folders/{s['claims']}/"), ("GET", f"/api/documents/{s['policy']}/"),
        ("GET", f"/api/documents/{s['policy']}/download/"),
        ("GET", f"/api/document-versions/{s['version']}/"),
        ("GET", f"/api/document-versions/{s['version']}/download/"),
        ("GET", f"/api/documents/{s['policy']}/ocr-text"), ("GET", f"/api/pages/{s['page']}/"),
        ("GET", f"/api/nodes/{s['policy']}/history/"),
        ("GET", f"/api/documents/{s['policy']}/notes/"),
        ("GET", f"/api/nodes/download/?node_ids={s['family']}"),
        ("GET", f"/api/document/{s['policy']}"),
    ]


def test_an_outsider_finds_nothing_a_viewer_reads_everything(shared):
    s = shared
    for method, path in reads(s):
        assert s["outsider"].request(method, path).json() == NOT_FOUND, path
        for who in ("viewer", "editor", "alice"):
            assert s[who].request(method, path).status_code == 200, (who, path)
    # The preview too, by Accept.
    for who, status in (("outsider", 404), ("viewer", 200)):
        response = s[who].get(f"/api/pages/{s['page']}/", headers={"Accept": "image/jpeg"})
        assert response.status_code == status
    # What alice did not share stays unknown to everyone.
    for who in ("viewer", "editor", "outsider"):
        for path in (f"/api/nodes/{s['private']}/", f"/api/documents/{s['diary']}/",
                     f"/api/nodes/{s['diary']}/history/", f"/api/nodes/{s['alice'].home_id}/"):
            assert s[who].get(path).json() == NOT_FOUND, (who, path)


def changes(s: dict):
    """Every change of a node, page or version below the shared folder (method, path, body),
    each made when asked for: the page ids are read from `s` then (an editor's changes make new
    versions)."""
    document = {"type": "documents", "id": s["policy"]}
    yield "PATCH", f"/api/nodes/{s['policy']}/", {"data": {**document,
                                                            "attributes": {"title": "x"}}}
    yield "PATCH", f"/api/documents/{s['policy']}/", {"data": {
        **document, "attributes": {"archive_serial_number": 7}}}
    yield "POST", "/api/nodes/", {"data": {"type": "folders", "attributes": {"title": "New"},
                                           "relationships": {"parent": {"data": {
                                               "type": "folders", "id": s["family"]}}}}}
    yield "POST", f"/api/nodes/{s['policy']}/tags/", {"tags": ["mine"]}
    yield "POST", f"/api/documents/{s['policy']}/notes/", \
        {"data": {"type": "notes", "attributes": {"note": "a note"}}}
    yield "POST", "/api/ocr/", {"doc_id": s["policy"]}
    yield "POST", "/api/nodes/move/", {"nodes": [{"id": s["policy"]}],
                                       "target_parent": {"id": s["claims"]}}
    yield "POST", "/api/pages/rotate/", {"pages": [{"id": s["page"], "angle": 90}]}
    yield "DELETE", f"/api/pages/{s['page']}/", None
    yield "POST", "/api/pages/move-to-folder/", {"pages": [s["page"]], "dst": s["claims"]}
    yield "POST", "/api/documents/merge/", {"src": s["receipt"], "dst": s["policy"]}
    yield "POST", f"/api/documents/{s['policy']}/versions/{s['version']}/restore/", None
    yield "DELETE", f"/api/nodes/{s['claim']}/", None
    yield "POST", f"/api/documents/{s['policy']}/split/", {"after_pages": [1]}


def send(client, method: str, path: str, body: object):
    return client.request(method, path, json_body=body)


def test_a_viewers_and_an_outsiders_changes_are_refused_and_change_nothing(shared, config):
    s = shared
    before = snapshot(config)
    for method, path, body in changes(s):
        answer = send(s["outsider"], method, path, body)
        if path == "/api/nodes/":  # an unknown parent is a 400 there (api.md, "Creating")
            assert_error(answer, 400, "does_not_exist", f"Invalid parent {s['family']!r}: the "
                         "folder does not exist.", "/data/relationships/parent")
        else:
            assert answer.json() == NOT_FOUND, path
        response = send(s["viewer"], method, path, body)
        assert_error(response, 403, *READ_ONLY, media=response.headers["Content-Type"])
    response = s["viewer"].put(f"/api/documents/{s['policy']}/upload/new.pdf",
                               data=long_batch(1), headers={
                                   "Content-Type": "application/octet-stream",
                                   "Content-Disposition": "attachment; filename=new.pdf"})
    assert_error(response, 403, *READ_ONLY)
    for who in ("viewer", "editor"):
        assert_error(s[who].post(f"/api/nodes/{s['family']}/access/",
                                 {"username": "dave", "role": "viewer"}), 403, *ONLY_THE_OWNER)
    assert snapshot(config) == before


def test_an_editor_changes_inside_the_shared_folder(shared, config):
    s = shared
    editor = s["editor"]
    upload_accepted(editor, s["policy"], "new.pdf", long_batch(3))
    processed(editor, s["policy"], 3)
    # Each person sees their own tags on a shared document: the editor's, not alice's.
    s["alice"].post(f"/api/nodes/{s['policy']}/tags/", {"tags": ["paid"]})
    editor.post(f"/api/nodes/{s['policy']}/tags/", {"tags": ["to check"]})
    tags_seen = {who: [tag["name"] for tag in s[who].get(f"/api/documents/{s['policy']}/")
                       .json()["data"]["attributes"]["tags"]] for who in ("alice", "editor")}
    assert tags_seen == {"alice": ["paid"], "editor": ["to check"]}
    for method, path, body in changes(s):
        response = send(editor, method, path, body)
        assert response.status_code in (200, 201, 202, 204), (path, response.text)
        if path == "/api/ocr/" or "/pages/" in path or path.endswith(("/merge/", "/restore/")):
            latest = editor.get(f"/api/documents/{s['policy']}/").json()["data"]["attributes"]
            processed(editor, s["policy"], latest["page_count"])
            s["page"] = latest["versions"][-1]["pages"][0]["id"]
    # What the editor made is alice's; the history says who made it.
    made = editor.get(f"/api/nodes/{s['family']}/").json()["data"]
    new_folder = next(node for node in made if node["attributes"]["title"] == "New")
    assert (new_folder["attributes"]["owner"], new_folder["attributes"]["access"]) == \
        ("alice", "editor")
    mine = s["alice"].get(f"/api/folders/{new_folder['id']}/").json()["data"]["attributes"]
    assert (mine["owner"], mine["access"]) == ("alice", "owner")
    created = s["alice"].get(f"/api/nodes/{new_folder['id']}/history/").json()["data"][-1]
    assert (created["attributes"]["action"], created["attributes"]["actor"]["username"]) == \
        ("created", "carol")
    # The deleted claim, the merged receipt and the policy (split in two) are in alice's trash,
    # not the editor's.
    assert {row["id"] for row in s["alice"].get("/api/trash/").json()["data"]} == \
        {s["claim"], s["receipt"], s["policy"]}
    assert editor.get("/api/trash/").json()["data"] == []


def test_an_editor_never_takes_a_node_out_nor_deletes_the_shared_folder(shared, config):
    s = shared
    editor = s["editor"]
    mine = make_folder(editor, "Mine", editor.home_id)
    before = snapshot(config)
    for nodes, target in (([s["policy"]], mine), ([s["policy"]], s["private"]),
                          ([s["family"]], s["claims"])):
        response = editor.post("/api/nodes/move/", {"nodes": [{"id": node} for node in nodes],
                                                    "target_parent": {"id": target}}, media=JSON)
        assert response.status_code in (403, 404), response.text
    assert_error(editor.post("/api/nodes/move/", {"nodes": [{"id": s["family"]}],
                                                  "target_parent": {"id": s["claims"]}},
                             media=JSON), 403, "permission_denied",
                 "Family can only be moved inside the folder shared with you.", media=JSON)
    assert editor.post("/api/nodes/move/", {"nodes": [{"id": s["policy"]}],
                                            "target_parent": {"id": mine}},
                       media=JSON).json() == NOT_FOUND  # another owner's tree: not the same tree
    assert_error(editor.delete(f"/api/nodes/{s['family']}/"), 403, "permission_denied",
                 "Family is shared with you; only its owner can delete it.")
    assert_error(editor.post("/api/pages/move-to-folder/", {"pages": [s["page"]], "dst": mine},
                             media=JSON), 400, "invalid",
                 "Pages move only between documents and folders of one owner; a folder shared "
                 "with you and your own are two owners'.")
    assert snapshot(config) == before


def test_a_revocation_counts_at_once(shared):
    s = shared
    access = s["alice"].get(f"/api/nodes/{s['family']}/access/").json()["data"]["attributes"]
    grant = next(g for g in access["grants"] if g["user"]["username"] == "carol")
    assert s["editor"].get(f"/api/documents/{s['policy']}/").status_code == 200
    assert s["alice"].delete(f"/api/nodes/{s['family']}/access/{grant['id']}/").status_code == 204
    for method, path in reads(s):
        assert s["editor"].request(method, path).json() == NOT_FOUND, path
    assert s["editor"].get(f"/api/nodes/{s['editor'].shared_id}/").json()["data"] == []
