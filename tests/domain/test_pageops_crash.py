"""kill -9 in the middle of a merge (docs/api.md, "Page operations"): whenever `dms serve` dies, the
data dir holds the old state (the target with its own pages, the source live) or the new one (the
target's new version with both documents' pages, the source in the trash), never half of it;
`dms verify` finds it clean and every acknowledged file downloads as it was. On both databases."""

from __future__ import annotations

import signal
import threading
import time

import pytest
import requests

from tests.harness import samples
from tests.harness.pdfops import page_texts
from tests.harness.processes import Running, admin_session, config_args, config_env, dms, make_node

# Sockets (pytest-socket): a `dms serve` subprocess killed and started again.
pytestmark = [pytest.mark.slow, pytest.mark.enable_socket]

ADMIN_PASSWORD = "crash-test-pw"
PAGES = 60  # a merge of 120 pages writes for a while: the kill lands before, during or after


def document(client, url, home, title, data) -> str:
    document_id = make_node(client, url, "documents", title, home)
    response = client.put(f"{url}/api/documents/{document_id}/upload/{title}", data=data,
                          headers={"Content-Disposition": "attachment"})
    assert response.status_code == 201, response.text
    return document_id


def serve(config) -> Running:
    return Running(config.data_dir, DMS_ADMIN_PASSWORD=ADMIN_PASSWORD, **config_env(config))


def killed_during(server: Running, call, delay: float) -> None:
    thread = threading.Thread(target=_ignore, args=(call,))
    thread.start()
    time.sleep(delay)
    server.process.send_signal(signal.SIGKILL)
    server.process.wait(timeout=10)
    thread.join(10)


def _ignore(call):
    try:
        call()
    except requests.RequestException:
        pass  # the server was killed under it


def test_a_merge_killed_at_any_moment_leaves_one_consistent_state(config):
    target_pdf = samples.pdf([f"Target page {n}" for n in range(1, PAGES + 1)])
    source_pdf = samples.pdf([f"Source page {n}" for n in range(1, PAGES + 1)])
    server = serve(config)
    try:
        client, home = admin_session(server.url, ADMIN_PASSWORD)
        target = document(client, server.url, home, "target.pdf", target_pdf)
        source = document(client, server.url, home, "source.pdf", source_pdf)
    finally:
        server.stop()
    for delay in (0.05, 0.2, 0.5, 1.5):
        server = serve(config)
        try:
            client, _ = admin_session(server.url, ADMIN_PASSWORD)
            merge = lambda client=client, server=server: client.post(  # noqa: E731
                f"{server.url}/api/documents/merge/", json={"src": source, "dst": target},
                timeout=30)
            killed_during(server, merge, delay)
        finally:
            if server.process.poll() is None:
                server.process.kill()
        checked = dms("verify", *config_args(config))
        assert checked.returncode == 0, checked.stdout + checked.stderr
        server = serve(config)
        try:
            client, _ = admin_session(server.url, ADMIN_PASSWORD)
            merged = client.get(f"{server.url}/api/documents/{source}/").status_code == 404
            versions = client.get(f"{server.url}/api/documents/{target}/").json()["data"][
                "attributes"]["versions"]
            latest = client.get(f"{server.url}/api/documents/{target}/download/").content
            first = client.get(versions[0]["download_url"]).content
            trash = [node["id"] for node in client.get(f"{server.url}/api/trash/").json()["data"]]
            if merged:
                texts = [" ".join(t.split()) for t in page_texts(latest)]
                assert texts == [f"Target page {n}" for n in range(1, PAGES + 1)] + \
                    [f"Source page {n}" for n in range(1, PAGES + 1)]
                assert ([v["number"] for v in versions], trash) == ([1, 2], [source])
            else:
                assert (latest, [v["number"] for v in versions], trash) == (target_pdf, [1], [])
                assert client.get(f"{server.url}/api/documents/{source}/download/").content == \
                    source_pdf
            assert first == target_pdf
        finally:
            assert server.stop() == 0
        if merged:
            break  # the rest of the rounds would find it merged already
