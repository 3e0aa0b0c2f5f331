"""The tests' in-process transport (tests/harness/inprocess.py) answers as waitress does on the
socket: for the same requests the same status, headers (but the Date) and body, absolute links
included, also under a URL prefix, for downloads (streamed too), ranges, HEAD and errors: what
lets the API tests run in-process (zips stream in-process in tests/domain/test_archives.py)."""

from __future__ import annotations

import pytest

from tests.harness import samples
from tests.harness.client import Client
from tests.harness.documents import make_folder, new_document, upload
from tests.harness.inprocess import WsgiAdapter
from tests.harness.waiting import wait_processed


def answer(response) -> tuple:
    headers = {name.lower(): value for name, value in response.headers.items()
               if name.lower() != "date"}
    return response.status_code, headers, response.content


@pytest.mark.socket  # alice goes over the socket; her twin calls the app in-process
@pytest.mark.parametrize("prefix", ["", pytest.param("/dms", marks=pytest.mark.config(
    url_prefix="/dms"))])
def test_in_process_answers_are_the_sockets(server, alice, prefix):
    assert server.url.endswith(f"{server.port}{prefix}")
    twin = Client(server.url, alice.token, WsgiAdapter(server.wsgi_app, server.config.url_prefix))
    folder = make_folder(alice, "Letters", alice.home_id)
    document_id = new_document(alice, "letter", folder)
    data = samples.pdf(["Dear customer", "Page two"])
    assert upload(alice, document_id, "letter.pdf", data).status_code == 201
    assert wait_processed(alice, document_id)[-1] == "succeeded"
    download = f"/api/documents/{document_id}/download/"
    for method, path, headers in [
            ("GET", f"/api/nodes/{alice.home_id}/?page[size]=1", {}),
            ("GET", f"/api/documents/{document_id}/", {}),
            ("GET", download, {}),
            ("GET", download, {"Range": "bytes=5-14"}),
            ("HEAD", download, {}),
            ("GET", "/api/users/me/", {"Authorization": "Token wrong"}),
            ("GET", "/api/nowhere/", {}),
            ("PATCH", f"/api/nodes/{folder}/", {"Content-Type": "text/plain"})]:
        over_socket = alice.request(method, path, headers=headers)
        in_process = twin.request(method, path, headers=headers)
        assert answer(in_process) == answer(over_socket), (method, path)
    streamed = twin.get(download, stream=True)
    assert b"".join(streamed.iter_content(1000)) == data



@pytest.mark.socket  # alice goes over the socket; her twin calls the app in-process
@pytest.mark.config(events_max_seconds=1, events_heartbeat_seconds=5)
def test_an_event_stream_reads_the_same_in_process(server, alice):
    """A stream ends by itself after DMS_EVENTS_MAX_SECONDS: read whole, both transports give
    the same bytes. (A stream that does not end would block an in-process client, which reads
    the app's iterable in the test's thread: the stream tests use the socket.)"""
    twin = Client(server.url, alice.token, WsgiAdapter(server.wsgi_app, server.config.url_prefix))
    make_folder(alice, "Letters", alice.home_id)
    over_socket = alice.get("/api/events/?since=0")
    in_process = twin.get("/api/events/?since=0")
    assert answer(in_process) == answer(over_socket)
    assert over_socket.content.startswith(b"retry: 3000\n: dms events\n\nid: ")
