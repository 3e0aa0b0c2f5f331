"""The dialect's documents (api.md §17) on both engines: post_document files a document in the
caller's .inbox with what came with it and answers a task, which both versions show in their own
shapes; PATCH changes title, tags, correspondent, date and custom fields through dms's rules
(a viewer of a shared document is refused and nothing changes); DELETE sends it to the trash;
downloads, previews and thumbnails; notes; refusals in Django REST framework's shape."""

from __future__ import annotations

from tests.harness import samples
from tests.harness.documents import make_folder
from tests.harness.paperless import API, dialect, make
from tests.harness.waiting import wait_for, wait_processed

JSON = "application/json"


def post_document(client, name: str, data: bytes, fields: list[tuple[str, str]] = ()):
    return client.session.post(f"{client.base_url}{API}/documents/post_document/",
                               files=[("document", (name, data, "application/octet-stream")),
                                      *((key, (None, value)) for key, value in fields)],
                               headers={"Authorization": f"Token {client.token}"}, timeout=60)


def uploaded(client, name: str, data: bytes, fields=()) -> dict:
    """post_document that must succeed; the task (version 10) once done, and the document."""
    response = post_document(client, name, data, fields)
    assert response.status_code == 200, response.text
    task_id = response.json()
    assert isinstance(task_id, str)
    task = client.get(f"{API}/tasks/?task_id={task_id}").json()["results"][0]
    return task


def test_post_document_files_it_with_what_came_along(alice):
    client = dialect(alice, 10)
    tag = make(client, "tags", name="Bills")
    acme = make(client, "correspondents", name="ACME")
    task = uploaded(client, "invoice.pdf", samples.pdf(["Invoice 4711"]), [
        ("title", "ACME invoice"), ("correspondent", str(acme["id"])), ("tags", str(tag["id"])),
        ("created", "2024-03-15")])
    assert {key: task[key] for key in ("task_type", "status", "acknowledged")} == {
        "task_type": "consume_file", "status": "success", "acknowledged": False}
    number = task["related_document_ids"][0]
    assert (task["result_data"], task["input_data"]["overrides"]["filename"]) == (
        {"document_id": number}, "invoice.pdf")
    document = client.get(f"{API}/documents/{number}/").json()
    assert {key: document[key] for key in ("title", "correspondent", "tags", "created",
                                           "original_file_name", "mime_type")} == {
        "title": "ACME invoice", "correspondent": acme["id"], "tags": [tag["id"]],
        "created": "2024-03-15", "original_file_name": "invoice.pdf",
        "mime_type": "application/pdf"}
    # In dms's own API: in alice's .inbox, with the same correspondent, tag and date.
    own = alice.get(f"/api/documents/{document['dms_id']}/").json()["data"]
    assert (own["attributes"]["title"], own["attributes"]["document_date"],
            [t["name"] for t in own["attributes"]["tags"]],
            own["relationships"]["parent"]["data"]["id"]) == (
        "ACME invoice", "2024-03-15", ["Bills"], alice.inbox_id)
    assert wait_processed(alice, document["dms_id"])[-1] == "succeeded"
    assert "Invoice 4711" in client.get(f"{API}/documents/{number}/").json()["content"]
    # Version 9: a plain list, upper-case, the document as a string.
    nine = dialect(alice, 9).get(f"{API}/tasks/?task_id={task['task_id']}").json()
    assert [(t["status"], t["related_document"], t["task_name"]) for t in nine] == [
        ("SUCCESS", str(number), "consume_file")]
    assert client.post(f"{API}/tasks/acknowledge/", {"tasks": [task["id"]]},
                       media=JSON).json() == {"result": 1}
    assert client.get(f"{API}/tasks/{task['id']}/").json()["acknowledged"] is True


def test_post_document_refusals(alice):
    client = dialect(alice, 10)
    assert post_document(client, "x.exe", b"MZ\x90\x00binary").json() == {
        "document": ["This type of file is not supported; upload a PDF, PNG, JPEG, TIFF or plain "
                     "text file."]}
    assert post_document(client, "x.pdf", samples.pdf(["x"]), [("correspondent", "9999")]) \
        .json() == {"correspondent": ['Invalid pk "9999" - object does not exist.']}
    missing = client.session.post(f"{client.base_url}{API}/documents/post_document/",
                                  files=[("title", (None, "no file"))],
                                  headers={"Authorization": f"Token {client.token}"})
    assert (missing.status_code, missing.json()) == (400, {"document": ["No file was submitted."]})
    form = client.request("POST", f"{API}/documents/post_document/", data=b"title=x",
                          headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert (form.status_code, form.json()) == (415, {
        "detail": 'Unsupported media type "application/x-www-form-urlencoded" in request.'})
    # An empty file is a failed task, with dms's sentence.
    task = uploaded(client, "empty.txt", b"")
    assert (task["status"], task["result_data"], task["related_document_ids"]) == (
        "failure", {"error_message": "The file is empty."}, [])
    assert alice.get(f"/api/nodes/{alice.inbox_id}/").json()["data"] == []


def test_patch_delete_and_the_roles_of_sharing(alice, bob):
    client = dialect(alice, 10)
    task = uploaded(client, "memo.txt", samples.text("Team memo\n"))
    number = task["related_document_ids"][0]
    field = make(client, "custom_fields", name="Amount", data_type="monetary")
    tag = make(client, "tags", name="Work")
    changed = client.patch(f"{API}/documents/{number}/", {
        "title": "Team memo Q2", "tags": [tag["id"]], "created": "2024-05-10",
        "custom_fields": [{"field": field["id"], "value": "EUR12.50"}]}, media=JSON)
    assert changed.status_code == 200, changed.text
    body = changed.json()
    assert (body["title"], body["tags"], body["created"], body["custom_fields"]) == (
        "Team memo Q2", [tag["id"]], "2024-05-10",
        [{"value": "EUR12.50", "field": field["id"]}])
    history = alice.get(f"/api/nodes/{body['dms_id']}/history/").json()["data"]
    assert {"renamed", "tagged", "metadata_changed"} <= {e["attributes"]["action"]
                                                         for e in history}
    # Refused shapes name the field; nothing changes.
    for patch, expected in (
            ({"tags": "x"}, {"tags": ['Expected a list of items but got type "str".']}),
            ({"correspondent": 99999}, {"correspondent": [
                'Invalid pk "99999" - object does not exist.']}),
            ({"title": ""}, {"title": ["This field may not be blank."]})):
        response = client.patch(f"{API}/documents/{number}/", patch, media=JSON)
        assert (response.status_code, response.json()) == (400, expected), patch
    assert client.get(f"{API}/documents/{number}/").json()["title"] == "Team memo Q2"
    # Shared with bob to read: he sees it, may not change it, and his PATCH changes nothing.
    folder = make_folder(alice, "Shared", alice.home_id)
    assert alice.post("/api/nodes/move/", {"nodes": [{"id": body["dms_id"]}],
                                           "target_parent": {"id": folder}}).status_code == 200
    assert alice.post(f"/api/nodes/{folder}/access/",
                      {"username": "bob", "role": "viewer"}).status_code == 201
    theirs = dialect(bob, 10)
    seen = theirs.get(f"{API}/documents/{number}/").json()
    assert (seen["title"], seen["user_can_change"], seen["tags"]) == ("Team memo Q2", False, [])
    refused = theirs.patch(f"{API}/documents/{number}/", {"title": "mine"}, media=JSON)
    assert (refused.status_code, refused.json()) == (403, {
        "detail": "It is shared with you to read; changing it needs the editor role."})
    assert theirs.delete(f"{API}/documents/{number}/").status_code == 403
    # DELETE: to alice's trash.
    assert client.delete(f"{API}/documents/{number}/").status_code == 204
    assert client.get(f"{API}/documents/{number}/").json() == {
        "detail": "No Document matches the given query."}
    assert [e["id"] for e in alice.get("/api/trash/").json()["data"]] == [body["dms_id"]]


def test_files_and_notes(alice, bob):
    client = dialect(alice, 10)
    data = samples.pdf(["A letter"])
    number = uploaded(client, "letter.pdf", data)["related_document_ids"][0]
    download = client.get(f"{API}/documents/{number}/download/")
    assert (download.status_code, download.content, download.headers["Content-Type"],
            download.headers["Content-Disposition"]) == (
        200, data, "application/pdf", "attachment; filename=letter.pdf")
    inline = client.get(f"{API}/documents/{number}/preview/?original=true")
    assert (inline.content, inline.headers["Content-Disposition"]) == (
        data, "inline; filename=letter.pdf")
    thumb = wait_for(lambda: (lambda r: r if r.status_code == 200 else None)(
        client.get(f"{API}/documents/{number}/thumb/")), timeout=60, interval=0.2)
    assert (thumb.headers["Content-Type"], thumb.content[:3]) == ("image/jpeg", b"\xff\xd8\xff")
    assert dialect(bob).get(f"{API}/documents/{number}/download/").json() == {
        "detail": "No Document matches the given query."}
    first = client.post(f"{API}/documents/{number}/notes/", {"note": "Paid on the 28th."},
                        media=JSON).json()
    assert [(n["note"], n["user"]["username"]) for n in first] == [("Paid on the 28th.", "alice")]
    both = client.post(f"{API}/documents/{number}/notes/", {"note": "Filed."}, media=JSON).json()
    assert [n["note"] for n in both] == ["Paid on the 28th.", "Filed."]
    left = client.delete(f"{API}/documents/{number}/notes/?id={both[0]['id']}").json()
    assert [n["note"] for n in left] == ["Filed."]
    assert client.get(f"{API}/documents/{number}/notes/").json() == left
    assert client.post(f"{API}/documents/{number}/notes/", {}, media=JSON).json() == {
        "note": ["A note is required."]}
    assert client.delete(f"{API}/documents/{number}/notes/?id=99999").status_code == 404
