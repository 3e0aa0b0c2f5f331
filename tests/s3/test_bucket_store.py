"""Files in an S3 bucket (api.md §19) through the API: uploads land in the bucket under their
SHA-256 and nowhere on the node's disk, downloads stream back with Range, the same bytes are one
object across users, a purge removes an object only when nobody else names it, OCR's searchable
PDF and page operations work from the bucket."""

from __future__ import annotations

import hashlib

import pytest

from tests.harness import samples
from tests.harness.documents import new_document, upload_accepted
from tests.harness.waiting import wait_processed

pytestmark = [pytest.mark.enable_socket, pytest.mark.config(trash_days=0)]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def copies_on_disk(config, *contents: bytes) -> list[str]:
    """The files of the node's data dir holding any of these contents: a stored original or
    searchable PDF may have no copy there (previews and the search index are elsewhere) but in
    the read cache, `cache/fetched/`, which keeps what was read for minutes
    (dms.files.storage.s3.fetching, tested in test_fetch_cache)."""
    wanted = {sha(content) for content in contents}
    cache = config.data_dir / "cache" / "fetched"
    return sorted(str(path) for path in config.data_dir.rglob("*")
                  if path.is_file() and cache not in path.parents
                  and sha(path.read_bytes()) in wanted)


def test_an_upload_is_one_object_named_by_its_sha256_and_downloads_whole_and_in_ranges(
        alice, bucket, config):
    data = samples.pdf(["Invoice 4711 from the bucket"])
    document = new_document(alice, "invoice")
    upload_accepted(alice, document, "invoice.pdf", data)
    assert wait_processed(alice, document)[-1] == "succeeded"

    assert bucket.keys() == [bucket.blob_key(sha(data))]
    assert bucket.get(bucket.blob_key(sha(data))) == data
    assert copies_on_disk(config, data) == []
    assert not (config.data_dir / "files").exists()

    whole = alice.get(f"/api/documents/{document}/download/")
    assert (whole.status_code, whole.content, whole.headers["Content-Type"],
            whole.headers["Accept-Ranges"]) == (200, data, "application/pdf", "bytes")
    part = alice.get(f"/api/documents/{document}/download/", headers={"Range": "bytes=10-19"})
    assert (part.status_code, part.content, part.headers["Content-Range"]) == \
        (206, data[10:20], f"bytes 10-19/{len(data)}")
    tail = alice.get(f"/api/documents/{document}/download/", headers={"Range": "bytes=-5"})
    assert (tail.status_code, tail.content) == (206, data[-5:])
    head = alice.request("HEAD", f"/api/documents/{document}/download/")
    assert (head.status_code, head.headers["Content-Length"], head.content) == \
        (200, str(len(data)), b"")
    again = alice.get(f"/api/documents/{document}/download/",
                      headers={"If-None-Match": sha(data)})
    assert again.status_code == 304
    beyond = alice.get(f"/api/documents/{document}/download/",
                       headers={"Range": f"bytes={len(data) + 10}-"})
    assert beyond.status_code == 416


def test_the_same_bytes_of_two_users_are_one_object_removed_with_the_last_version(
        alice, bob, bucket):
    data = samples.pdf(["The same letter twice"])
    mine, theirs = new_document(alice, "letter"), new_document(bob, "letter")
    upload_accepted(alice, mine, "letter.pdf", data)
    upload_accepted(bob, theirs, "letter.pdf", data)
    assert bucket.keys() == [bucket.blob_key(sha(data))]

    assert alice.delete(f"/api/nodes/{mine}/").status_code == 204  # trash_days=0: for good
    assert bucket.keys() == [bucket.blob_key(sha(data))]
    assert bob.get(f"/api/documents/{theirs}/download/").content == data

    assert bob.delete(f"/api/nodes/{theirs}/").status_code == 204
    assert bucket.keys() == []


def test_a_scan_is_read_from_the_bucket_and_its_searchable_pdf_stored_there(alice, bucket,
                                                                              config):
    data = samples.png("Bucket scan 0815")
    document = new_document(alice, "scan")
    upload_accepted(alice, document, "scan.png", data)
    assert wait_processed(alice, document)[-1] == "succeeded"

    searchable = alice.get(f"/api/documents/{document}/download/?searchable=1")
    assert searchable.status_code == 200
    assert searchable.content.startswith(b"%PDF")
    assert sorted(bucket.keys()) == sorted([bucket.blob_key(sha(data)),
                                            bucket.blob_key(sha(searchable.content))])
    assert bucket.keys("work") == []  # the page PDFs are gone once the searchable PDF is made
    assert "0815" in alice.get(f"/api/documents/{document}/ocr-text").text
    assert copies_on_disk(config, data, searchable.content) == []


def test_a_page_operation_takes_its_pages_from_the_bucket(alice, bucket):
    data = samples.pdf(["First page", "Second page", "Third page"])
    document = new_document(alice, "three pages")
    upload_accepted(alice, document, "three.pdf", data)
    assert wait_processed(alice, document)[-1] == "succeeded"
    [version] = alice.get(f"/api/documents/{document}/").json()["data"]["attributes"]["versions"]
    second = version["pages"][1]["id"]

    assert alice.delete(f"/api/pages/{second}/").status_code in (200, 204)
    assert wait_processed(alice, document)[-1] == "succeeded"
    newest = alice.get(f"/api/documents/{document}/download/")
    assert newest.status_code == 200
    assert alice.get(f"/api/documents/{document}/ocr-text").text.count("page") == 2
    versions = alice.get(f"/api/documents/{document}/").json()["data"]["attributes"]["versions"]
    searchable = [alice.get(f"/api/document-versions/{v['id']}/download/?searchable=1").content
                  for v in versions]
    assert [v["searchable_pdf_size"] for v in versions] == [len(pdf) for pdf in searchable]
    # Each version's file and searchable PDF (the new one's made from the first's, unread).
    assert bucket.keys() == sorted(bucket.blob_key(sha(content)) for content in
                                   (data, newest.content, *searchable))
