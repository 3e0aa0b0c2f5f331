"""Uploads, versions and downloads of documents' files (api.md, "Uploads, versions and
downloads"). Through the API what a client sees: an upload's answer and its download's headers,
refusals that depend on the request (the Content-Disposition header, names in the URL's
percent-encoding), the size limit enforced while waitress reads the body, names offered on
download, Range requests, another user's and anonymous requests. On the fast tier (the domain's
functions, no server): every accepted type stored byte for byte by version id (and read, with the
queue's workers), versions, every refused file leaving nothing, and deleting for good."""

from __future__ import annotations

import hashlib

import pytest

from dms.db import database, on_commit
from dms.db.models import Node
from dms.domain import accounts, documents, listings, trash, uploads
from tests.harness import samples
from tests.harness.client import NOT_FOUND, VND, assert_error
from tests.harness.database import snapshot
from tests.harness.documents import new_document, stored_files, temporary_files, upload
from tests.harness.domaintier import (
    assert_refused,
    home_id,
    new_folder,
    new_user,
    upload_file,
    wait_read,
)
from tests.harness.domaintier import new_document as create_document
from tests.harness.waiting import wait_processed

BAD_FILE_NAME = ("A file name may not be . or .. nor contain /, \\, control characters or "
                 "invisible formatting characters such as right-to-left overrides.")
UNSUPPORTED = ("This type of file is not supported; upload a PDF, PNG, JPEG, TIFF or plain text "
               "file.")
SAMPLES = {
    "letter.pdf": (lambda: samples.pdf(["Dear customer", "Page two", "Page three"]),
                   "application/pdf", 3),
    "scan.png": (samples.png, "image/png", 1),
    "photo.jpg": (samples.jpeg, "image/jpeg", 1),
    "fax.tiff": (lambda: samples.tiff(["one", "two"]), "image/tiff", 2),
    "notes.txt": (samples.text, "text/plain", 1),
}



# -- through the API ------------------------------------------------------------------------------

def test_an_upload_answers_the_whole_document_and_downloads_byte_identical(alice, config):
    """One type through the API (the fast tier has every type): the answer, the version's
    resource, the downloads' headers."""
    name = "notes.txt"
    make, mime, pages = SAMPLES[name]
    data = make()
    document_id = new_document(alice)
    response = upload(alice, document_id, name, data)
    assert response.status_code == 201
    assert response.headers["Content-Type"] == VND
    attributes = response.json()["data"]["attributes"]
    assert (attributes["file_name"], attributes["size"], attributes["page_count"],
            attributes["ocr_status"]) == (name, len(data), pages, "received")
    [version] = attributes["versions"]
    assert version == {
        "id": version["id"], "number": 1, "file_name": name, "size": len(data), "page_count": pages,
        "lang": "eng", "created_at": version["created_at"],
        "download_url": f"{alice.base_url}/api/document-versions/{version['id']}/download/",
        "pages": version["pages"], "searchable_pdf": False, "searchable_pdf_size": None,
        "short_description": ""}
    assert [page["type"] for page in version["pages"]] == ["pages"] * pages
    assert len({page["id"] for page in version["pages"]}) == pages
    download = alice.get(f"/api/documents/{document_id}/download/")
    assert download.status_code == 200
    assert download.headers["Content-Type"] == mime
    # A token needs no quotes: naive clients (papermerge-cli) keep quotes in the saved name.
    assert download.headers["Content-Disposition"] == f"attachment; filename={name}"
    assert hashlib.sha256(download.content).hexdigest() == hashlib.sha256(data).hexdigest()
    by_version = alice.get(version["download_url"])  # absolute, followed as it is
    assert by_version.content == data
    # Stored by version id, never by the client's name.
    assert stored_files(config) == [config.data_dir / "files" / version["id"][:2] / version["id"]]
    wait_processed(alice, document_id)  # processing works in a temporary directory of its own
    assert temporary_files(config) == []


@pytest.mark.parametrize("name, data, disposition, status, code, detail", [
    ("x.zip", b"PK\x03\x04" + b"\x00" * 40, True, 415, "unsupported_media_type", UNSUPPORTED),
    ("x.pdf", samples.pdf(["fine"]), False, 400, "parse_error",
     "The Content-Disposition header is required, e.g. "
     "`Content-Disposition: attachment; filename=scan.pdf`."),
    # Names in the URL's percent-encoding: what is checked is the name they decode to.
    ("%2E%2E", samples.pdf(["fine"]), True, 400, "invalid", BAD_FILE_NAME),
    ("a%00b.pdf", samples.pdf(["fine"]), True, 400, "invalid", BAD_FILE_NAME),
    ("invoice%E2%80%AEfdp.exe", samples.pdf(["fine"]), True, 400, "invalid", BAD_FILE_NAME),
])
def test_refused_uploads_are_answered_and_leave_nothing(alice, config, name, data, disposition,
                                                        status, code, detail):
    """Refusals through the API: the status of each kind, the header only the API reads, names as
    a URL carries them (the fast tier has every refused file and name)."""
    document_id = new_document(alice)
    before = snapshot(config)
    assert_error(upload(alice, document_id, name, data, disposition), status, code, detail)
    assert snapshot(config) == before
    assert stored_files(config) == [] and temporary_files(config) == []
    good = samples.pdf(["good"])
    response = upload(alice, document_id, "good.pdf", good)
    assert response.status_code == 201
    assert alice.get(f"/api/documents/{document_id}/download/").content == good


@pytest.mark.config(max_upload_mb=1)
@pytest.mark.socket  # a chunked body read by waitress
def test_upload_over_the_size_limit_is_413_and_leaves_nothing(alice, config):
    document_id = new_document(alice)
    before = snapshot(config)
    big = b"%PDF-1.4\n" + b"0" * (config.max_upload_bytes + 10)
    assert_error(upload(alice, document_id, "big.pdf", big), 413, "too_large",
                 "The file is larger than the maximum of 1 MiB.")

    def chunked():  # no Content-Length: the limit is enforced while the body is read
        for _ in range(3):
            yield b"0" * (512 * 1024)

    response = alice.put(f"/api/documents/{document_id}/upload/big.pdf", data=chunked(),
                         headers={"Content-Disposition": "attachment; filename=big.pdf"})
    assert_error(response, 413, "too_large", "The file is larger than the maximum of 1 MiB.")
    assert snapshot(config) == before
    assert stored_files(config) == [] and temporary_files(config) == []
    exactly = b"%PDF-1.4\n" + b"0" * (config.max_upload_bytes - 9)
    # corrupt PDF, not 413
    assert upload(alice, document_id, "edge.txt", exactly).status_code == 400


def test_hostile_names_are_only_names(alice, config):
    document_id = new_document(alice)
    data = samples.pdf(["x"])
    for name in ("....pdf", "%2E%2E%2Fetc%2Fpasswd", "C:%5Cwindows", " ünï cödé 文件.pdf",
                 "a" * 255):
        response = upload(alice, document_id, name, data)
        assert response.status_code in (201, 400, 404), name
    files = stored_files(config)
    assert files and all(p.parent.parent == config.data_dir / "files" for p in files)
    names = [v["file_name"] for v in
             alice.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]["versions"]]
    assert names == ["....pdf", "ünï cödé 文件.pdf", "a" * 255]
    download = alice.get(f"/api/documents/{document_id}/download/?x=1")
    assert download.headers["Content-Disposition"] == "attachment; filename=" + "a" * 255
    latest = alice.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]["versions"][1]
    unicode_download = alice.get(latest["download_url"])
    assert unicode_download.headers["Content-Disposition"] == (
        "attachment; filename=\"_n_ c_d_ __.pdf\"; "
        "filename*=UTF-8''%C3%BCn%C3%AF%20c%C3%B6d%C3%A9%20%E6%96%87%E4%BB%B6.pdf")


def test_range_requests(alice):
    document_id = new_document(alice)
    data = samples.pdf(["range"])
    upload(alice, document_id, "r.pdf", data)
    part = alice.get(f"/api/documents/{document_id}/download/", headers={"Range": "bytes=5-14"})
    assert part.status_code == 206
    assert part.content == data[5:15]
    assert part.headers["Content-Range"] == f"bytes 5-14/{len(data)}"
    refused = alice.get(f"/api/documents/{document_id}/download/",
                        headers={"Range": f"bytes={len(data) + 10}-"})
    assert_error(refused, 416, "invalid", "The requested range is not satisfiable.")


def test_no_file_yet_is_404(alice):
    document_id = new_document(alice)
    assert_error(alice.get(f"/api/documents/{document_id}/download/"), 404, "not_found",
                 "This document has no file yet.")


def test_another_users_document_is_not_found_for_upload_and_download(alice, bob, admin, anon,
                                                                     config):
    document_id = new_document(alice)
    data = samples.pdf(["mine"])
    version_url = upload(alice, document_id, "a.pdf", data).json()["data"]["attributes"][
        "versions"][0]["download_url"]
    wait_processed(alice, document_id)  # processing writes to the database in the background
    before, files = snapshot(config), stored_files(config)
    for stranger in (bob, admin):
        assert upload(stranger, document_id, "b.pdf", data).json() == NOT_FOUND
        assert stranger.get(f"/api/documents/{document_id}/download/").json() == NOT_FOUND
        assert stranger.get(version_url).json() == NOT_FOUND
        assert stranger.get(f"/api/nodes/download/?node_ids={document_id}").json() == NOT_FOUND
    for response in (upload(anon, document_id, "b.pdf", data),
                     anon.get(f"/api/documents/{document_id}/download/"), anon.get(version_url)):
        assert_error(response, 401, "not_authenticated",
                     "Authentication credentials were not provided.")
    assert snapshot(config) == before and stored_files(config) == files


# -- the fast tier: the domain's functions on the test's own database, no server -----------------

@pytest.mark.parametrize("name", SAMPLES)
def test_every_accepted_type_is_stored_byte_identical_by_version_id(reading, config, name):
    services, alice = reading, new_user("alice")
    make, mime, pages = SAMPLES[name]
    data = make()
    document_id = create_document(services, alice, "doc", home_id(alice))
    document = upload_file(services, alice, document_id, name, data)
    assert (document.file_name, document.size, document.page_count, document.ocr_status) == \
        (name, len(data), pages, "received")
    [version] = documents.versions(document_id)
    assert (version.number, version.file_name, version.size, version.page_count, version.lang,
            version.mime_type, version.short_description) == \
        (1, name, len(data), pages, "eng", mime, "")
    page_ids = documents.page_ids([version.id])[version.id]
    assert len(page_ids) == len(set(page_ids)) == pages
    latest = documents.latest_file(alice, document_id)
    stored = services.store.path(latest.id)
    assert hashlib.sha256(stored.read_bytes()).hexdigest() == hashlib.sha256(data).hexdigest()
    assert latest.sha256 == hashlib.sha256(data).hexdigest()
    # processing works in a temporary directory of its own
    assert wait_read(document_id)[-1] == "succeeded"
    assert temporary_files(config) == []
    # Stored by version id, never by the client's name (beside it, a searchable PDF if Tesseract
    # read it).
    version = documents.reached_version(alice, version.id)
    searchable = [services.store.searchable_path(version.id)] if version.searchable_size else []
    assert stored_files(config) == sorted(
        [config.data_dir / "files" / version.id[:2] / version.id, *searchable])


def test_each_upload_adds_a_version_and_the_document_shows_the_latest(services):
    alice = new_user("alice")
    document_id = create_document(services, alice, "doc", home_id(alice))
    first, second = samples.pdf(["one"]), samples.pdf(["one", "two"])
    upload_file(services, alice, document_id, "v1.pdf", first)
    document = upload_file(services, alice, document_id, "v2.pdf", second)
    versions = documents.versions(document_id)
    assert [(v.number, v.file_name, v.page_count) for v in versions] == \
           [(1, "v1.pdf", 1), (2, "v2.pdf", 2)]
    assert (document.file_name, document.size, document.page_count) == ("v2.pdf", len(second), 2)
    latest = documents.latest_file(alice, document_id)
    assert latest.id == versions[1].id
    assert services.store.path(latest.id).read_bytes() == second
    old = documents.reached_version(alice, versions[0].id)
    assert services.store.path(old.id).read_bytes() == first
    [listed] = listings.listing(alice, home_id(alice))[1].fetch(0, 100)
    assert (listed.file_name, listed.size, listed.page_count) == ("v2.pdf", len(second), 2)


@pytest.mark.parametrize("name, data, code, detail", [
    ("x.pdf", b"", "invalid", "The file is empty."),
    ("x.zip", b"PK\x03\x04" + b"\x00" * 40, "unsupported_media_type", UNSUPPORTED),
    ("x.exe", b"MZ\x90\x00\x03\x00\x00\x00", "unsupported_media_type", UNSUPPORTED),
    ("x.pdf", b"%PDF-1.4\nthis is not really a pdf", "invalid",
     "The PDF is corrupt and cannot be read."),
    ("x.pdf", samples.pdf(["secret"], encrypt=True), "invalid",
     "The PDF is encrypted with a password; upload it without the password protection."),
    ("x.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 50, "invalid",
     "The PNG image is corrupt and cannot be read."),
    ("..", samples.pdf(["fine"]), "invalid", BAD_FILE_NAME),
    ("a\\b.pdf", samples.pdf(["fine"]), "invalid", BAD_FILE_NAME),
    ("a\x00b.pdf", samples.pdf(["fine"]), "invalid", BAD_FILE_NAME),
    ("invoice\u202efdp.exe", samples.pdf(["fine"]), "invalid", BAD_FILE_NAME),
    ("x" * 256, samples.pdf(["fine"]), "invalid", "A file name has at most 255 characters."),
])
def test_refused_uploads_leave_nothing_and_a_good_one_still_works(services, config, name, data,
                                                                   code, detail):
    alice = new_user("alice")
    document_id = create_document(services, alice, "doc", home_id(alice))
    assert_refused(config, lambda: upload_file(services, alice, document_id, name, data), code,
                   detail, None)
    assert stored_files(config) == [] and temporary_files(config) == []
    good = samples.pdf(["good"])
    upload_file(services, alice, document_id, "good.pdf", good)
    assert services.store.path(documents.latest_file(alice, document_id).id).read_bytes() == good


def test_deleting_for_good_removes_the_files_of_every_document_below(services, config):
    alice = new_user("alice")
    folder_id = new_folder(services, alice, "F", home_id(alice))
    for index in range(3):
        upload_file(services, alice, create_document(services, alice, f"d{index}", folder_id),
                    "x.pdf", samples.pdf([str(index)]))
    kept = create_document(services, alice, "kept", home_id(alice))
    upload_file(services, alice, kept, "kept.pdf", samples.pdf(["kept"]))
    assert len(stored_files(config)) == 4
    trash.delete(services, alice, folder_id)
    assert len(stored_files(config)) == 4  # in the trash, files and all
    trash.purge(services, alice, folder_id)
    [version] = documents.versions(kept)
    assert [p.name for p in stored_files(config)] == [version.id]
    trash.delete(services, alice, kept, Node.DOCUMENT)
    assert trash.empty(services, alice) == 1
    assert stored_files(config) == []


def test_deleting_a_user_removes_their_files(services, config, root):
    alice = new_user("alice")
    upload_file(services, alice, create_document(services, alice, "doc", home_id(alice)), "x.pdf",
                samples.pdf(["x"]))
    assert len(stored_files(config)) == 1
    accounts.delete_user_by(services, root, alice.id)
    assert stored_files(config) == []


def page_numbers(version_id: str) -> list[int]:
    return [number for (number,) in database.execute_sql(
        "SELECT number FROM page WHERE version_id = ? ORDER BY number", (version_id,))]


def test_a_versions_first_page_rows_commit_with_it_the_rest_after(services, monkeypatch):
    """An upload's first PAGE_ROWS_PER_BATCH page rows are written in the version's own write
    transaction (one write less for most documents: every writer waits for the one lock); the
    rest in their own transactions after it, so other writers get their turns in between."""
    alice = new_user("alice")
    document_id = create_document(services, alice, "doc", home_id(alice))
    commits = []
    forget = on_commit(lambda: commits.append(1))
    try:
        upload_file(services, alice, document_id, "three.pdf", samples.pdf(["a", "b", "c"]))
        assert len(commits) == 1
        assert page_numbers(documents.latest_version(document_id).id) == [1, 2, 3]

        monkeypatch.setattr(uploads, "PAGE_ROWS_PER_BATCH", 2)
        commits.clear()
        upload_file(services, alice, document_id, "five.pdf",
                    samples.pdf(["a", "b", "c", "d", "e"]))
        assert len(commits) == 3  # the version with pages 1-2, then 3-4, then 5
        assert page_numbers(documents.latest_version(document_id).id) == [1, 2, 3, 4, 5]
    finally:
        forget()
