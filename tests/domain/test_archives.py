"""GET /nodes/download/: one document as is, anything else as a zip or tar.gz with the folder
structure; AES-256 zips that 7-Zip opens with the password and not without."""

from __future__ import annotations

import io
import subprocess
import tarfile
import zipfile

import pytest
import pyzipper

from tests.harness import samples
from tests.harness.client import NOT_FOUND, assert_error
from tests.harness.documents import new_document, upload


def folder(client, title, parent):
    body = {"data": {"type": "folders", "attributes": {"title": title},
                     "relationships": {"parent": {"data": {"type": "folders", "id": parent}}}}}
    return client.post("/api/nodes/", body).json()["data"]["id"]


@pytest.fixture
def tree(alice):
    """Taxes/{2024/{a.pdf, Receipt (title without extension).png}, notes.txt, empty/},
    plus two documents with the same title, one without a file."""
    files = {}
    taxes = folder(alice, "Taxes", alice.home_id)
    year = folder(alice, "2024", taxes)
    folder(alice, "empty", taxes)
    files["a"] = samples.pdf(["a"])
    upload(alice, new_document(alice, "a.pdf", year), "a.pdf", files["a"])
    files["receipt"] = samples.png("receipt")
    upload(alice, new_document(alice, "Receipt", year), "scan.png", files["receipt"])
    files["notes"] = samples.text("notes\n")
    upload(alice, new_document(alice, "notes.txt", taxes), "notes.txt", files["notes"])
    files["twin1"], files["twin2"] = samples.text("first twin\n"), samples.text("second twin\n")
    upload(alice, new_document(alice, "twin", taxes), "t.txt", files["twin1"])
    upload(alice, new_document(alice, "twin", taxes), "t.txt", files["twin2"])
    new_document(alice, "no file yet", taxes)
    return {"taxes": taxes, "year": year, "files": files}


def test_a_single_document_downloads_as_its_file(alice, tree):
    document_id = new_document(alice, "solo")
    data = samples.pdf(["solo"])
    upload(alice, document_id, "solo.pdf", data)
    response = alice.get(f"/api/nodes/download/?node_ids={document_id}")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/pdf"
    assert response.content == data


def test_a_folder_downloads_as_a_zip_with_its_structure(alice, tree):
    response = alice.get(f"/api/nodes/download/?node_ids={tree['taxes']}")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/zip"
    assert response.headers["Content-Disposition"] == "attachment; filename=Taxes.zip"
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    assert archive.testzip() is None
    assert sorted(archive.namelist()) == [
        "Taxes/", "Taxes/2024/", "Taxes/2024/Receipt.png", "Taxes/2024/a.pdf", "Taxes/empty/",
        "Taxes/notes.txt", "Taxes/twin (2).txt", "Taxes/twin.txt"]
    files = tree["files"]
    assert archive.read("Taxes/2024/a.pdf") == files["a"]
    assert archive.read("Taxes/2024/Receipt.png") == files["receipt"]
    assert {archive.read("Taxes/twin.txt"), archive.read("Taxes/twin (2).txt")} == \
           {files["twin1"], files["twin2"]}


def test_several_nodes_and_a_targz(alice, tree):
    loose = new_document(alice, "loose")
    upload(alice, loose, "loose.txt", samples.text("loose\n"))
    response = alice.get(f"/api/nodes/download/?node_ids={tree['year']}&node_ids={loose}"
                         "&archive_type=targz")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/gzip"
    assert response.headers["Content-Disposition"] == "attachment; filename=documents.tar.gz"
    with tarfile.open(fileobj=io.BytesIO(response.content), mode="r:gz") as archive:
        assert sorted(archive.getnames()) == ["2024", "2024/Receipt.png", "2024/a.pdf",
                                              "loose.txt"]
        assert archive.extractfile("2024/a.pdf").read() == tree["files"]["a"]


def test_hostile_titles_become_safe_entry_names(alice):
    parent = folder(alice, "..", alice.home_id)
    document_id = new_document(alice, 'a:b*c?"d<e>f|g', parent)
    upload(alice, document_id, "x.txt", samples.text())
    names = zipfile.ZipFile(io.BytesIO(
        alice.get(f"/api/nodes/download/?node_ids={parent}").content)).namelist()
    assert names == ["_/", "_/a_b_c__d_e_f_g.txt"]


def test_aes_zip_opens_with_the_password_and_not_without(alice, tree, tmp_path):
    response = alice.get(f"/api/nodes/download/?node_ids={tree['year']}&password=s3cret pass")
    assert response.status_code == 200
    path = tmp_path / "year.zip"
    path.write_bytes(response.content)
    with pyzipper.AESZipFile(path) as archive:
        info = archive.getinfo("2024/a.pdf")
        assert info.flag_bits & 0x1  # encrypted
        with pytest.raises(RuntimeError):
            archive.read("2024/a.pdf")
        archive.setpassword(b"s3cret pass")
        assert archive.read("2024/a.pdf") == tree["files"]["a"]
    # 7-Zip, the tool the README recommends for these archives.
    wrong = subprocess.run(["7z", "t", "-pwrong", str(path)], capture_output=True, text=True)
    assert wrong.returncode != 0
    right = subprocess.run(["7z", "x", "-ps3cret pass", f"-o{tmp_path / 'out'}", str(path)],
                           capture_output=True, text=True)
    assert right.returncode == 0, right.stdout + right.stderr
    assert (tmp_path / "out" / "2024" / "a.pdf").read_bytes() == tree["files"]["a"]


def test_bad_download_requests(alice, bob, admin, anon, tree):
    assert_error(alice.get("/api/nodes/download/"), 400, "required",
                 "Name the nodes to download with node_ids=<id> (repeat it for several).")
    assert_error(alice.get(f"/api/nodes/download/?node_ids={tree['taxes']}&archive_type=rar"), 400,
                 "invalid", "archive_type must be one of zip, targz.")
    assert_error(alice.get(f"/api/nodes/download/?node_ids={tree['taxes']}&archive_type=targz"
                           "&password=x"), 400, "invalid",
                 "A password can only protect a zip archive (archive_type=zip).")
    for stranger in (bob, admin):
        response = stranger.get(f"/api/nodes/download/?node_ids={tree['taxes']}")
        assert (response.status_code, response.json()) == (404, NOT_FOUND)
        mixed = stranger.get(f"/api/nodes/download/?node_ids={stranger.home_id}"
                             f"&node_ids={tree['year']}")
        assert (mixed.status_code, mixed.json()) == (404, NOT_FOUND)
    assert_error(anon.get(f"/api/nodes/download/?node_ids={tree['taxes']}"), 401,
                 "not_authenticated", "Authentication credentials were not provided.")
