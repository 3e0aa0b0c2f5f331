"""The rest of Papermerge 2's API that real clients call
(api.md, "Folders and documents", "Preferences"): folder rename and delete, one document version,
the inbox count, preferences, an empty move."""

from __future__ import annotations

from tests.harness import samples
from tests.harness.client import JSON, NOT_FOUND, VND, assert_error
from tests.harness.database import snapshot
from tests.harness.documents import make_folder, new_document, upload
from tests.harness.waiting import wait_processed


def test_folders_rename_and_delete_like_nodes(alice, bob, admin, config):
    folder = make_folder(alice, "Old", alice.home_id)
    inner = new_document(alice, "inside", folder)
    upload(alice, inner, "a.txt", samples.text("x\n"))
    # Processing changes the row: the snapshot below must come after it.
    wait_processed(alice, inner)
    renamed = alice.patch(f"/api/folders/{folder}/", {"data": {"type": "folders",
                                                               "attributes": {"title": "New"}}})
    assert renamed.status_code == 200 and renamed.json()["data"]["attributes"]["title"] == "New"
    before = snapshot(config)
    assert_error(alice.patch(f"/api/folders/{alice.home_id}/", {"data": {
        "type": "folders", "attributes": {"title": "x"}}}), 403, "permission_denied",
        "The special folder .home cannot be renamed.")
    assert_error(alice.delete(f"/api/folders/{alice.inbox_id}/"), 403, "permission_denied",
                 "The special folder .inbox cannot be deleted.")
    assert alice.delete(f"/api/folders/{inner}/").json() == NOT_FOUND  # a document, not a folder
    for stranger in (bob, admin):
        assert stranger.delete(f"/api/folders/{folder}/").json() == NOT_FOUND
        assert stranger.patch(f"/api/folders/{folder}/", {"data": {
            "type": "folders", "attributes": {"title": "x"}}}).json() == NOT_FOUND
    assert snapshot(config) == before
    assert alice.delete(f"/api/folders/{folder}/").status_code == 204
    assert alice.get(f"/api/documents/{inner}/").json() == NOT_FOUND


def test_one_document_version(alice, bob):
    document_id = new_document(alice)
    upload(alice, document_id, "a.pdf", samples.pdf(["one", "two"]))
    version = alice.get(
        f"/api/documents/{document_id}/").json()["data"]["attributes"]["versions"][0]
    response = alice.get(f"/api/document-versions/{version['id']}/")
    assert (response.status_code, response.headers["Content-Type"]) == (200, VND)
    assert response.json() == {"data": {"type": "document_versions", "id": version["id"],
                                        "attributes": version}}
    assert bob.get(f"/api/document-versions/{version['id']}/").json() == NOT_FOUND


def test_inbox_count_counts_documents_and_folders(alice, bob):
    assert alice.get("/api/nodes/inboxcount/").json() == {"data": {"count": 0}}
    alice.put("/api/document/upload/a.txt", data=samples.text("a\n"))
    make_folder(alice, "sorted later", alice.inbox_id)
    new_document(alice, "elsewhere")  # in .home: not counted
    response = alice.get("/api/nodes/inboxcount/")
    assert (response.headers["Content-Type"], response.json()) == (VND, {"data": {"count": 2}})
    assert bob.get("/api/nodes/inboxcount/").json() == {"data": {"count": 0}}


def test_an_empty_move_moves_nothing(alice, config):
    before = snapshot(config)
    response = alice.post("/api/nodes/move/", {"nodes": [], "target_parent": {"id": alice.home_id}},
                          media=JSON)
    assert (response.status_code, response.json()) == (200, {"data": []})
    assert snapshot(config) == before


def test_preferences_list_change_and_use(alice, bob, config):
    listing = alice.get("/api/preferences/").json()
    assert listing["meta"]["pagination"] == {"page": 1, "pages": 1, "count": 1}
    assert listing["data"] == [{"type": "preferences", "id": "ocr__language", "attributes": {
        "section": "ocr", "name": "language", "identifier": "ocr__language", "default": "eng",
        "value": "eng",
        "help_text": "OCR language of new documents (Tesseract's, + combines them).",
        "additional_data": {"choices": [["deu", "deu"], ["eng", "eng"]]}}}]
    changed = alice.patch("/api/preferences/ocr__language/",
                          {"data": {"type": "preferences", "attributes": {"value": "deu"}}})
    assert changed.status_code == 200 and changed.json()["data"]["attributes"]["value"] == "deu"
    # New documents without a lang are read in the caller's language; others' stay as they were.
    body = {"data": {"type": "documents", "attributes": {"title": "Brief"},
                     "relationships": {"parent": {"data": {
                         "type": "folders", "id": alice.home_id}}}}}
    assert alice.post("/api/nodes/", body).json()["data"]["attributes"]["lang"] == "deu"
    uploaded = alice.put("/api/document/upload/b.txt", data=samples.text("b\n")).json()
    assert uploaded["lang"] == "deu"
    wait_processed(alice, uploaded["id"])  # processing changes the node in the background
    body["data"]["relationships"]["parent"]["data"]["id"] = bob.home_id
    assert bob.post("/api/nodes/", body).json()["data"]["attributes"]["lang"] == "eng"
    # papermerge-cli pref-update: POST /preferences/bulk/ with {"section__name": value}.
    bulk = alice.post("/api/preferences/bulk/", {"ocr__language": "eng+deu"}, media=JSON)
    assert bulk.status_code == 200
    assert alice.get("/api/preferences/ocr__language/").json()["data"]["attributes"]["value"] == \
        "eng+deu"
    before = snapshot(config)
    assert_error(alice.post("/api/preferences/bulk/", {"ocr__language": "klingon"}, media=JSON),
                 400, "invalid", "Unknown OCR language 'klingon'; installed languages: deu, eng "
                 "(combine them with +, e.g. eng+deu).", "/ocr__language", media=JSON)
    assert_error(alice.post("/api/preferences/bulk/", {"ui__theme": "dark"}, media=JSON), 400,
                 "invalid", "There is no setting 'ui__theme'; there are: ocr__language.",
                 "/ui__theme", media=JSON)
    assert alice.get("/api/preferences/ui__theme/").json() == NOT_FOUND
    assert snapshot(config) == before


def test_new_routes_need_a_token_and_hide_other_users_things(alice, bob, admin, anon, config):
    folder = make_folder(alice, "Mine", alice.home_id)
    document_id = new_document(alice, "doc", folder)
    upload(alice, document_id, "a.txt", samples.text("a\n"))
    version = alice.get(
        f"/api/documents/{document_id}/").json()["data"]["attributes"]["versions"][0]
    tag = alice.post("/api/tags/", {"data": {"type": "tags", "attributes": {"name": "x"}}}).json()
    tag_id = tag["data"]["id"]
    wait_processed(alice, document_id)
    routes = [("GET", "/api/tags/"), ("GET", f"/api/tags/{tag_id}/"),
              ("PATCH", f"/api/tags/{tag_id}/"), ("DELETE", f"/api/tags/{tag_id}/"),
              ("POST", f"/api/nodes/{document_id}/tags/"),
              ("PATCH", f"/api/nodes/{document_id}/tags/"),
              ("DELETE", f"/api/nodes/{document_id}/tags/"), ("GET", "/api/nodes/inboxcount/"),
              ("PATCH", f"/api/folders/{folder}/"), ("DELETE", f"/api/folders/{folder}/"),
              ("GET", f"/api/document-versions/{version['id']}/"), ("GET", "/api/preferences/"),
              ("GET", "/api/preferences/ocr__language/"),
              ("PATCH", "/api/preferences/ocr__language/"), ("POST", "/api/preferences/bulk/")]
    before = snapshot(config)
    for method, path in routes:
        response = anon.request(method, path, json_body={"tags": ["y"]}, media=JSON)
        assert response.status_code == 401, (method, path, response.text)
        assert response.json()["errors"][0]["code"] == "not_authenticated"
    owned = [route for route in routes if any(
        part in route[1] for part in (tag_id, document_id, folder, version["id"]))]
    for stranger in (bob, admin):
        for method, path in owned:
            body = ({"tags": ["y"]} if "/tags/" in path and "nodes" in path else
                    {"data": {"type": "tags" if "tags" in path else "folders",
                              "attributes": {"name": "y", "title": "y"}}})
            media = JSON if "nodes" in path else VND
            response = stranger.request(method, path, json_body=body, media=media)
            assert response.json() == NOT_FOUND, (method, path, response.text)
    assert snapshot(config) == before
