"""Processing (api.md, "Pages, text and OCR") with real Tesseract: text layers, scans, statuses,
failures, re-runs, pages and the embedded queue."""

from __future__ import annotations

import re
import signal

import pytest

from dms.processing.processor import MAX_ATTEMPTS, EmbeddedConsumer
from tests.harness import samples
from tests.harness.client import JSON, NOT_FOUND, assert_error
from tests.harness.database import query_sql, snapshot
from tests.harness.documents import new_document, upload
from tests.harness.processes import Running
from tests.harness.waiting import wait_for, wait_processed

# Sockets (pytest-socket): servers started on a data dir of their own.
pytestmark = pytest.mark.enable_socket

STATUSES = {"received", "started", "succeeded", "failed"}


def page_methods(config, document_id) -> list[tuple[int, str]]:
    return query_sql(config, "SELECT page.number, page.method FROM page JOIN document_version AS v "
                     "ON page.version_id = v.id WHERE v.document_id = ? "
                     "ORDER BY v.number, page.number", document_id)


def words(text: str) -> list[str]:
    return text.split()


def test_text_layer_pdfs_never_reach_tesseract(alice, config):
    document_id = new_document(alice)
    pages = ["The quick brown fox jumps over the lazy dog",
             "Second page of the born-digital letter"]
    upload(alice, document_id, "letter.pdf", samples.pdf(pages))
    seen = wait_processed(alice, document_id)
    assert set(seen) <= STATUSES and seen[-1] == "succeeded"
    assert alice.get(f"/api/documents/{document_id}/ocr-text").json() == {
        "text": "\n\n".join(pages)}
    assert page_methods(config, document_id) == [(1, "layer"), (2, "layer")]


@pytest.mark.parametrize("kind", ["png", "jpeg"])
def test_scans_are_read_by_tesseract(alice, config, kind):
    document_id = new_document(alice)
    data = samples.png("Invoice 4711 Garden") if kind == "png" else \
        samples.jpeg("Invoice 4711 Garden")
    upload(alice, document_id, f"scan.{kind}", data)
    assert wait_processed(alice, document_id)[-1] == "succeeded"
    response = alice.get(f"/api/documents/{document_id}/ocr-text")
    assert response.headers["Content-Type"] == JSON
    assert words(response.json()["text"]) == ["Invoice", "4711", "Garden"]
    assert page_methods(config, document_id) == [(1, "ocr")]


def test_a_scanned_pdf_page_is_rendered_and_read(alice, config, tmp_path):
    # A PDF whose page is an image only (no text layer), as a scanner makes it.
    path = tmp_path / "scan.pdf"
    samples.scan("Scanned Contract 2024").save(path, "PDF", resolution=300)
    document_id = new_document(alice)
    upload(alice, document_id, "scan.pdf", path.read_bytes())
    assert wait_processed(alice, document_id)[-1] == "succeeded"
    assert words(alice.get(f"/api/documents/{document_id}/ocr-text").json()["text"]) == \
           ["Scanned", "Contract", "2024"]
    assert page_methods(config, document_id) == [(1, "ocr")]


def test_multi_page_tiff_and_plain_text(alice, config):
    tiff_id, text_id = new_document(alice, "fax"), new_document(alice, "note")
    upload(alice, tiff_id, "fax.tiff", samples.tiff(["First Page", "Second Page"]))
    upload(alice, text_id, "note.txt", samples.text("Plain words stay as they are\n"))
    assert wait_processed(alice, tiff_id)[-1] == wait_processed(alice, text_id)[-1] == "succeeded"
    assert alice.get(f"/api/documents/{tiff_id}/ocr-text").json() == {
        "text": "First Page\n\nSecond Page"}
    assert alice.get(f"/api/documents/{text_id}/ocr-text").json() == {
        "text": "Plain words stay as they are\n"}
    assert page_methods(config, tiff_id) == [(1, "ocr"), (2, "ocr")]
    assert page_methods(config, text_id) == [(1, "text")]


def test_ocr_false_skips_tesseract_but_keeps_text_layers(alice, config):
    body = {"data": {"type": "documents", "attributes": {"title": "no ocr", "ocr": False},
                     "relationships": {"parent": {"data": {
                         "type": "folders", "id": alice.home_id}}}}}
    document_id = alice.post("/api/nodes/", body).json()["data"]["id"]
    upload(alice, document_id, "scan.png", samples.png("Never Read"))
    assert wait_processed(alice, document_id)[-1] == "succeeded"
    assert alice.get(f"/api/documents/{document_id}/ocr-text").json() == {"text": ""}
    assert page_methods(config, document_id) == [(1, "skipped")]


def test_a_corrupt_file_fails_with_a_reason_and_the_next_document_succeeds(alice, config):
    broken_id, good_id = new_document(alice, "broken"), new_document(alice, "good")
    whole = samples.jpeg("Truncated")
    upload(alice, broken_id, "broken.jpg", whole[: len(whole) // 3])  # opens, but cannot be decoded
    upload(alice, good_id, "good.txt", samples.text("fine\n"))
    assert wait_processed(alice, good_id)[-1] == "succeeded"
    seen = wait_processed(alice, broken_id)
    assert set(seen) <= STATUSES and seen[-1] == "failed"
    attributes = alice.get(f"/api/documents/{broken_id}/").json()["data"]["attributes"]
    assert attributes["ocr_error"].startswith("The image cannot be read: ")
    assert "truncated" in attributes["ocr_error"]
    attempts = query_sql(config, "SELECT ocr_attempts FROM node WHERE id = ?", broken_id)
    assert attempts == [(MAX_ATTEMPTS,)]  # retried, then given up


def test_a_new_upload_starts_over_at_received_and_rerun_with_another_language(alice, config):
    document_id = new_document(alice)
    upload(alice, document_id, "one.txt", samples.text("first version\n"))
    assert wait_processed(alice, document_id)[-1] == "succeeded"
    response = upload(alice, document_id, "two.txt", samples.text("second version\n"))
    assert response.json()["data"]["attributes"]["ocr_status"] == "received"
    assert wait_processed(alice, document_id)[-1] == "succeeded"
    assert alice.get(f"/api/documents/{document_id}/ocr-text").json() == {
        "text": "second version\n"}

    rerun = alice.post("/api/ocr/", {"doc_id": document_id, "lang": "deu+eng"}, media=JSON)
    assert rerun.status_code == 200 and rerun.headers["Content-Type"] == JSON
    assert rerun.json() == {"status": "queued", "doc_id": document_id, "lang": "deu+eng"}
    assert wait_processed(alice, document_id)[-1] == "succeeded"
    attributes = alice.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]
    assert attributes["lang"] == "deu+eng" and attributes["versions"][-1]["lang"] == "deu+eng"


def test_bad_reruns_change_nothing(alice, bob, config):
    no_file = new_document(alice, "empty")
    before = snapshot(config)
    assert_error(alice.post("/api/ocr/", {}, media=JSON), 400, "required",
                 "doc_id, the id of the document to process, is required.", "/doc_id", media=JSON)
    assert_error(alice.post("/api/ocr/", {"doc_id": no_file}, media=JSON), 400, "invalid",
                 "This document has no file yet; upload one first.", "/doc_id", media=JSON)
    assert_error(alice.post("/api/ocr/", {"doc_id": no_file, "lang": "xx"}, media=JSON), 400,
                 "invalid", "Unknown OCR language 'xx'; installed languages: deu, eng (combine "
                            "them with +, e.g. eng+deu).", "/lang", media=JSON)
    assert bob.post("/api/ocr/", {"doc_id": no_file}, media=JSON).json() == NOT_FOUND
    anon = alice.as_anonymous()
    for response in (anon.post("/api/ocr/", {"doc_id": no_file}, media=JSON),
                     anon.get(f"/api/documents/{no_file}/ocr-text")):
        assert_error(response, 401, "not_authenticated",
                     "Authentication credentials were not provided.", media=JSON)
    assert snapshot(config) == before


def test_ocr_languages_lists_tesseracts_languages(alice, anon):
    response = alice.get("/api/ocr-languages/")
    assert (response.status_code, response.headers["Content-Type"], response.json()) == \
           (200, JSON, {"languages": ["deu", "eng"], "default": "eng"})
    assert anon.get("/api/ocr-languages/").status_code == 401


def test_pages_as_json_text_and_jpeg_for_the_owner_only(alice, bob, admin, anon):
    document_id = new_document(alice)
    upload(alice, document_id, "letter.pdf", samples.pdf(["Page one has some words on it",
                                                          "Page two has other words on it"]))
    wait_processed(alice, document_id)
    version = alice.get(
        f"/api/documents/{document_id}/").json()["data"]["attributes"]["versions"][0]
    assert [p["type"] for p in version["pages"]] == ["pages", "pages"]
    page_id = version["pages"][1]["id"]
    response = alice.get(f"/api/pages/{page_id}/")
    assert response.json() == {"data": {
        "type": "pages", "id": page_id,
        "attributes": {"number": 2, "text": "Page two has other words on it", "lang": "eng"},
        "relationships": {"document_version": {"data": {"type": "document_versions",
                                                        "id": version["id"]}}}}}
    text = alice.get(f"/api/pages/{page_id}/", headers={"Accept": "text/plain"})
    assert (text.headers["Content-Type"], text.text) == \
           ("text/plain; charset=utf-8", "Page two has other words on it")
    for _ in range(2):  # rendered once, then served from the cache
        image = alice.get(f"/api/pages/{page_id}/", headers={"Accept": "image/jpeg"})
        assert image.status_code == 200 and image.headers["Content-Type"] == "image/jpeg"
        assert image.content[:3] == b"\xff\xd8\xff"
    for stranger in (bob, admin):
        assert stranger.get(f"/api/pages/{page_id}/").json() == NOT_FOUND
        assert stranger.get(f"/api/documents/{document_id}/ocr-text").json() == NOT_FOUND
    assert_error(anon.get(f"/api/pages/{page_id}/"), 401, "not_authenticated",
                 "Authentication credentials were not provided.")


def test_the_embedded_consumer_leaves_signal_handlers_to_the_server(config):
    """Guards the override of Huey's private Consumer._set_signal_handlers (pinned huey 3.5)."""
    from dms.web.app import create_app

    app = create_app(config)
    handlers = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    processor = app.runtime.processor
    processor.start()
    try:
        assert isinstance(processor.consumer, EmbeddedConsumer)
        assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == handlers
    finally:
        processor.stop()


@pytest.mark.slow
def test_kill_9_mid_ocr_loses_nothing(tmp_path):
    """Upload several scans, kill -9 the server while it reads them, start it again on the same
    data dir: every document ends `succeeded` with its text."""
    import requests

    data_dir = tmp_path / "data"
    server = Running(data_dir, DMS_ADMIN_PASSWORD="ocr-crash-pw", DMS_OCR_WORKERS="1")
    names, pages = ["Alpha", "Bravo", "Charlie", "Delta"], ["Monday", "Tuesday", "Wednesday"]
    texts = {f"{name}.tiff": [f"Letter {name} {page}" for page in pages] for name in names}
    try:
        token = requests.post(server.url + "/api/auth/login/",
                              json={"username": "admin",
                                    "password": "ocr-crash-pw"}).json()["token"]
        headers = {"Authorization": f"Token {token}"}
        ids = {}
        for name, pages in texts.items():
            response = requests.put(f"{server.url}/api/document/upload/{name}",
                                    data=samples.tiff(pages), headers=headers)
            ids[name] = response.json()["id"]
        statuses = []

        def one_started() -> bool:  # a worker is in the middle of a document
            statuses[:] = [requests.get(f"{server.url}/api/document/{i}", headers=headers)
                           .json()["ocr_status"] for i in ids.values()]
            return "started" in statuses

        wait_for(one_started, timeout=60, interval=0.05,
                 message=lambda: f"none started: {statuses}")
        assert "started" in statuses
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=10)
    finally:
        if server.process.poll() is None:
            server.process.kill()

    restarted = Running(data_dir)
    try:
        statuses = {}

        def all_ended() -> bool:
            statuses.update({name: requests.get(f"{restarted.url}/api/document/{i}",
                                                headers=headers).json()["ocr_status"]
                             for name, i in ids.items()})
            return all(s in ("succeeded", "failed") for s in statuses.values())

        wait_for(all_ended, timeout=120, interval=0.2, message=lambda: f"not ended: {statuses}")
        assert statuses == {name: "succeeded" for name in texts}
        for name, pages in texts.items():
            text = requests.get(f"{restarted.url}/api/documents/{ids[name]}/ocr-text",
                                headers=headers).json()["text"]
            assert text == "\n\n".join(pages)
        versions = {requests.get(f"{restarted.url}/api/documents/{i}/", headers=headers)
                    .json()["data"]["attributes"]["versions"][-1]["id"] for i in ids.values()}
    finally:
        assert restarted.stop() == 0
    # The restart's reconcile says which versions the kill left to read (at least the started
    # one), all of them these documents' (a later periodic one may queue again what still waits).
    found = re.findall(r"reconcile: queued (\d+) document\(s\) for processing "
                       r"\(versions ([^)]*)\)", restarted.output)
    assert found, restarted.output
    for count, named in found:
        assert 1 <= int(count) <= len(ids) and len(named.split(", ")) == int(count)
        assert set(named.split(", ")) <= versions
