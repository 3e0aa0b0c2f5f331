"""The legacy document endpoints (api.md, "Legacy endpoints"): /api only, plain JSON, uploads into
.inbox."""

from __future__ import annotations

import re

from tests.harness import samples
from tests.harness.client import JSON, NOT_FOUND, assert_error
from tests.harness.database import snapshot
from tests.harness.documents import new_document, stored_files, temporary_files, upload
from tests.harness.waiting import wait_processed


def legacy(document_id, title, file_name, size, pages, parent_id, created, updated,
           status="received"):
    return {"id": document_id, "title": title, "file_name": file_name, "size": size,
            "page_count": pages, "lang": "eng", "ocr_status": status, "parent_id": parent_id,
            "created_at": created, "updated_at": updated, "tags": []}


def test_named_upload_lands_in_the_inbox(alice):
    data = samples.pdf(["one", "two"])
    response = alice.put("/api/document/upload/Brief vom Amt.pdf", data=data)
    assert response.status_code == 201
    assert response.headers["Content-Type"] == JSON
    body = response.json()
    assert body == legacy(body["id"], "Brief vom Amt.pdf", "Brief vom Amt.pdf", len(data), 2,
                          alice.inbox_id, body["created_at"], body["updated_at"])
    listed = alice.get(f"/api/nodes/{alice.inbox_id}/").json()["data"]
    assert [item["id"] for item in listed] == [body["id"]]
    assert alice.get(f"/api/documents/{body['id']}/download/").content == data


def test_unnamed_upload_gets_a_random_name_with_the_sniffed_extension(alice):
    response = alice.put("/api/document/upload/", data=samples.png())
    assert response.status_code == 201
    name = response.json()["file_name"]
    assert re.fullmatch(r"upload-[0-9a-f]{8}\.png", name)
    assert response.json()["title"] == name
    # "The URL must end with /": without it there is no such upload route.
    no_slash = alice.put("/api/document/upload", data=samples.png())
    assert no_slash.status_code == 405


def test_list_and_detail(alice, bob):
    first = alice.put("/api/document/upload/a.txt", data=samples.text("a\n")).json()
    second_id = new_document(alice, "b without file")
    bob.put("/api/document/upload/bob.txt", data=samples.text("bob\n"))
    assert wait_processed(alice, first["id"])[-1] == "succeeded"  # the status is not racing below
    first["ocr_status"] = "succeeded"
    response = alice.get("/api/documents")
    assert response.status_code == 200 and response.headers["Content-Type"] == JSON
    listing = response.json()
    assert [item["id"] for item in listing] == [first["id"], second_id]
    assert listing[0] == first
    assert listing[1]["file_name"] is None and listing[1]["size"] == 0
    for path in (f"/api/document/{first['id']}", f"/api/document/{first['id']}/"):
        assert alice.get(path).json() == first
    # Bare paths are not legacy; /api/documents/ (with slash) is the JSON:API list.
    assert alice.get("/documents").json()["meta"]["pagination"]["count"] == 2
    assert alice.get("/api/documents/").json()["meta"]["pagination"]["count"] == 2
    assert alice.get("/document/" + first["id"]).status_code == 404


def test_refused_legacy_upload_creates_no_document(alice, config):
    before = snapshot(config)
    assert_error(alice.put("/api/document/upload/x.bin", data=b"\x00\x01\x02binary"), 415,
                 "unsupported_media_type",
                 "This type of file is not supported; "
                 "upload a PDF, PNG, JPEG, TIFF or plain text file.",
                 media=JSON)
    assert_error(alice.put("/api/document/upload/", data=b""), 400, "invalid", "The file is empty.",
                 media=JSON)
    assert snapshot(config) == before
    assert stored_files(config) == [] and temporary_files(config) == []


def test_other_users_and_anonymous(alice, bob, admin, anon, config):
    mine = alice.put("/api/document/upload/a.txt", data=samples.text()).json()
    wait_processed(alice, mine["id"])  # processing writes to the database in the background
    for stranger in (bob, admin):
        assert stranger.get(f"/api/document/{mine['id']}").json() == NOT_FOUND
        assert mine["id"] not in [d["id"] for d in stranger.get("/api/documents").json()]
    before = snapshot(config)
    for response in (anon.get("/api/documents"), anon.get(f"/api/document/{mine['id']}"),
                     anon.put("/api/document/upload/", data=samples.text())):
        assert_error(response, 401, "not_authenticated",
                     "Authentication credentials were not provided.", media=JSON)
    assert snapshot(config) == before
    assert upload(alice, mine["id"], "v2.txt", samples.text("v2\n")).status_code == 201
