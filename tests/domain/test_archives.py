"""GET /nodes/download/: one document as is, anything else as a zip or tar.gz with the folder
structure; AES-256 zips that 7-Zip opens with the password and not without. Through the API what
a client sees (one document's file, the archives' media types and names, refused requests); on
the fast tier (dms.domain.archives on the test's own database, no server) what the archives
hold."""

from __future__ import annotations

import io
import subprocess
import tarfile
import zipfile

import pytest
import pyzipper

from dms.db.models import User
from dms.domain import archives, tree
from dms.domain.services import Services
from tests.harness import samples
from tests.harness.client import NOT_FOUND, assert_error
from tests.harness.documents import new_document, upload
from tests.harness.domaintier import home_id, new_folder, new_user, upload_file
from tests.harness.domaintier import new_document as create_document


def folder(client, title, parent):
    body = {"data": {"type": "folders", "attributes": {"title": title},
                     "relationships": {"parent": {"data": {"type": "folders", "id": parent}}}}}
    return client.post("/api/nodes/", body).json()["data"]["id"]


# -- through the API ------------------------------------------------------------------------------

def test_a_single_document_downloads_as_its_file(alice):
    document_id = new_document(alice, "solo")
    data = samples.pdf(["solo"])
    upload(alice, document_id, "solo.pdf", data)
    response = alice.get(f"/api/nodes/download/?node_ids={document_id}")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/pdf"
    assert response.content == data


def test_archives_are_answered_with_their_media_type_and_name(alice):
    """A folder as a zip named after it, several nodes as documents.tar.gz (the fast tier has
    what archives hold)."""
    taxes = folder(alice, "Taxes", alice.home_id)
    year = folder(alice, "2024", taxes)
    a_pdf = samples.pdf(["a"])
    upload(alice, new_document(alice, "a.pdf", year), "a.pdf", a_pdf)
    loose = new_document(alice, "loose")
    upload(alice, loose, "loose.txt", samples.text("loose\n"))
    response = alice.get(f"/api/nodes/download/?node_ids={taxes}")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/zip"
    assert response.headers["Content-Disposition"] == "attachment; filename=Taxes.zip"
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    assert archive.testzip() is None
    assert sorted(archive.namelist()) == ["Taxes/", "Taxes/2024/", "Taxes/2024/a.pdf"]
    assert archive.read("Taxes/2024/a.pdf") == a_pdf
    response = alice.get(f"/api/nodes/download/?node_ids={year}&node_ids={loose}"
                         "&archive_type=targz")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/gzip"
    assert response.headers["Content-Disposition"] == "attachment; filename=documents.tar.gz"
    with tarfile.open(fileobj=io.BytesIO(response.content), mode="r:gz") as archive:
        assert sorted(archive.getnames()) == ["2024", "2024/a.pdf", "loose.txt"]
        assert archive.extractfile("2024/a.pdf").read() == a_pdf


def test_bad_download_requests(alice, bob, admin, anon):
    taxes = folder(alice, "Taxes", alice.home_id)
    year = folder(alice, "2024", taxes)
    assert_error(alice.get("/api/nodes/download/"), 400, "required",
                 "Name the nodes to download with node_ids=<id> (repeat it for several).")
    assert_error(alice.get(f"/api/nodes/download/?node_ids={taxes}&archive_type=rar"), 400,
                 "invalid", "archive_type must be one of zip, targz.")
    assert_error(alice.get(f"/api/nodes/download/?node_ids={taxes}&archive_type=targz"
                           "&password=x"), 400, "invalid",
                 "A password can only protect a zip archive (archive_type=zip).")
    for stranger in (bob, admin):
        response = stranger.get(f"/api/nodes/download/?node_ids={taxes}")
        assert (response.status_code, response.json()) == (404, NOT_FOUND)
        mixed = stranger.get(f"/api/nodes/download/?node_ids={stranger.home_id}"
                             f"&node_ids={year}")
        assert (mixed.status_code, mixed.json()) == (404, NOT_FOUND)
    assert_error(anon.get(f"/api/nodes/download/?node_ids={taxes}"), 401,
                 "not_authenticated", "Authentication credentials were not provided.")


# -- the fast tier: what the archives hold ------------------------------------------------------

def archive_of(services: Services, user: User, node_ids: list[str], archive_type: str = "zip",
               password: str | None = None) -> bytes:
    """The archive GET /nodes/download/ streams for the caller's nodes, whole."""
    nodes = tree.reached_nodes(user, node_ids)
    members = archives.entries([node.id for node in nodes], services.store, False,
                               services.config.max_tree_depth)
    if archive_type == "zip":
        return b"".join(archives.stream_zip(members, password))
    return b"".join(archives.stream_targz(members))


@pytest.fixture
def shelf(services):
    """alice's Taxes/{2024/{a.pdf, Receipt (title without extension).png}, notes.txt, empty/},
    plus two documents with the same title, one without a file."""
    alice = new_user("alice")
    files = {}

    def with_file(title, parent, name, data):
        upload_file(services, alice, create_document(services, alice, title, parent), name, data)

    taxes = new_folder(services, alice, "Taxes", home_id(alice))
    year = new_folder(services, alice, "2024", taxes)
    new_folder(services, alice, "empty", taxes)
    files["a"] = samples.pdf(["a"])
    with_file("a.pdf", year, "a.pdf", files["a"])
    files["receipt"] = samples.png("receipt")
    with_file("Receipt", year, "scan.png", files["receipt"])
    files["notes"] = samples.text("notes\n")
    with_file("notes.txt", taxes, "notes.txt", files["notes"])
    files["twin1"], files["twin2"] = samples.text("first twin\n"), samples.text("second twin\n")
    with_file("twin", taxes, "t.txt", files["twin1"])
    with_file("twin", taxes, "t.txt", files["twin2"])
    create_document(services, alice, "no file yet", taxes)
    return {"user": alice, "taxes": taxes, "year": year, "files": files}


def test_a_folder_zips_with_its_structure(services, shelf):
    archive = zipfile.ZipFile(io.BytesIO(archive_of(services, shelf["user"], [shelf["taxes"]])))
    assert archive.testzip() is None
    assert sorted(archive.namelist()) == [
        "Taxes/", "Taxes/2024/", "Taxes/2024/Receipt.png", "Taxes/2024/a.pdf", "Taxes/empty/",
        "Taxes/notes.txt", "Taxes/twin (2).txt", "Taxes/twin.txt"]
    files = shelf["files"]
    assert archive.read("Taxes/2024/a.pdf") == files["a"]
    assert archive.read("Taxes/2024/Receipt.png") == files["receipt"]
    assert {archive.read("Taxes/twin.txt"), archive.read("Taxes/twin (2).txt")} == \
           {files["twin1"], files["twin2"]}


def test_several_nodes_in_one_targz(services, shelf):
    alice = shelf["user"]
    loose = create_document(services, alice, "loose", home_id(alice))
    upload_file(services, alice, loose, "loose.txt", samples.text("loose\n"))
    data = archive_of(services, alice, [shelf["year"], loose], "targz")
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        assert sorted(archive.getnames()) == ["2024", "2024/Receipt.png", "2024/a.pdf",
                                              "loose.txt"]
        assert archive.extractfile("2024/a.pdf").read() == shelf["files"]["a"]
        assert archive.extractfile("loose.txt").read() == samples.text("loose\n")


def test_hostile_titles_become_safe_entry_names(services):
    alice = new_user("alice")
    parent = new_folder(services, alice, "..", home_id(alice))
    document_id = create_document(services, alice, 'a:b*c?"d<e>f|g', parent)
    upload_file(services, alice, document_id, "x.txt", samples.text())
    names = zipfile.ZipFile(io.BytesIO(archive_of(services, alice, [parent]))).namelist()
    assert names == ["_/", "_/a_b_c__d_e_f_g.txt"]


def test_aes_zip_opens_with_the_password_and_not_without(services, shelf, tmp_path):
    path = tmp_path / "year.zip"
    path.write_bytes(archive_of(services, shelf["user"], [shelf["year"]], password="s3cret pass"))
    with pyzipper.AESZipFile(path) as archive:
        info = archive.getinfo("2024/a.pdf")
        assert info.flag_bits & 0x1  # encrypted
        with pytest.raises(RuntimeError):
            archive.read("2024/a.pdf")
        archive.setpassword(b"s3cret pass")
        assert archive.read("2024/a.pdf") == shelf["files"]["a"]
    # 7-Zip, the tool the README recommends for these archives.
    wrong = subprocess.run(["7z", "t", "-pwrong", str(path)], capture_output=True, text=True)
    assert wrong.returncode != 0
    right = subprocess.run(["7z", "x", "-ps3cret pass", f"-o{tmp_path / 'out'}", str(path)],
                           capture_output=True, text=True)
    assert right.returncode == 0, right.stdout + right.stderr
    assert (tmp_path / "out" / "2024" / "a.pdf").read_bytes() == shelf["files"]["a"]


def test_a_selection_downloads_by_post_with_its_ids_in_the_body(alice, bob, config):
    """POST /nodes/download/ (api.md §22, the page's "Download" of a selection): the same archive
    as GET, the ids (and a password) in the body; refusals name the field and change nothing."""
    taxes = folder(alice, "Taxes", alice.home_id)
    a_pdf, notes = samples.pdf(["a"]), samples.text("notes\n")
    upload(alice, first := new_document(alice, "a.pdf", taxes), "a.pdf", a_pdf)
    upload(alice, second := new_document(alice, "notes.txt"), "notes.txt", notes)
    response = alice.post("/api/nodes/download/", {"node_ids": [first, second, first]},
                          media="application/json")
    assert response.status_code == 200, response.text
    assert (response.headers["Content-Type"], response.headers["Content-Disposition"]) == (
        "application/zip", "attachment; filename=documents.zip")
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    assert {name: archive.read(name) for name in archive.namelist()} == {
        "a.pdf": a_pdf, "notes.txt": notes}
    secret = alice.post("/api/nodes/download/", {"node_ids": [first], "password": "s3cret"},
                        media="application/json")
    with pyzipper.AESZipFile(io.BytesIO(secret.content)) as sealed:
        sealed.setpassword(b"s3cret")
        assert sealed.read("a.pdf") == a_pdf
    alone = alice.post("/api/nodes/download/", {"node_ids": [second]}, media="application/json")
    assert (alone.headers["Content-Type"], alone.content) == ("text/plain", notes)
    for body, code, detail, pointer in (
            ({}, "required", "`node_ids` must be a list of the ids of the nodes to download.",
             "/node_ids"),
            ({"node_ids": first}, "invalid",
             "`node_ids` must be a list of the ids of the nodes to download.", "/node_ids"),
            ({"node_ids": [first] * 1001}, "invalid", "At most 1000 nodes can be downloaded at "
             "once; select a folder to take everything in it.", "/node_ids"),
            ({"node_ids": [first], "archive_type": "rar"}, "invalid",
             "archive_type must be one of zip, targz.", None)):
        assert_error(alice.post("/api/nodes/download/", body, media="application/json"), 400,
                     code, detail, pointer)
    refused = bob.post("/api/nodes/download/", {"node_ids": [bob.home_id, first]},
                       media="application/json")
    assert (refused.status_code, refused.json()) == (404, NOT_FOUND)
