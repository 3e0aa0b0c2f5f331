"""Papermerge 2.1's own REST client (papermerge-restapi-client, as papermerge-cli 0.3.3 installs it
in a virtualenv of its own) drives dms's page operations unmodified: reorder, rotate, move to
another document, move to a folder and merge — each call's answer accepted by the client, the result
checked through the API. The client cannot delete pages: its single_page_delete fails with an
AttributeError building its headers before it sends anything, and its multiple_pages_delete takes no
body to name the pages (defects of its generated code); both DELETE routes are tested in
tests/domain/test_pageops_edit.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.harness import samples
from tests.harness.documents import make_folder, new_document, upload
from tests.harness.pdfops import page_texts
from tests.harness.waiting import wait_processed

pytestmark = pytest.mark.socket  # the client talks to the socket

PYTHON = Path(__file__).resolve().parents[2] / ".venv-papermerge-cli" / "bin" / "python"

# Runs in the client's virtualenv: argv[1] the server, argv[2] the token, argv[3] the calls as
# JSON [[api, method, body], ...]; prints each answer's status.
SCRIPT = """
import json, sys
import papermerge_restapi_client as client
from papermerge_restapi_client.apis.tags import documents_api, pages_api

configuration = client.Configuration(host=sys.argv[1])
configuration.api_key["Token Authentication"] = "Token " + sys.argv[2]
with client.ApiClient(configuration) as api_client:
    apis = {"pages": pages_api.PagesApi(api_client),
            "documents": documents_api.DocumentsApi(api_client)}
    for api, method, argument in json.loads(sys.argv[3]):
        call = getattr(apis[api], method)
        answer = call(body=argument, skip_deserialization=True)
        print(answer.response.status)
"""


def run_client(server, token, calls) -> list[int]:
    result = subprocess.run([str(PYTHON), "-c", SCRIPT, server.url, token, json.dumps(calls)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return [int(line) for line in result.stdout.split()]


def letter(client, title, words):
    document_id = new_document(client, title)
    assert upload(client, document_id, title,
                  samples.pdf([f"Page {word}" for word in words])).status_code == 201
    assert wait_processed(client, document_id)[-1] == "succeeded"
    return document_id


def pages(client, document_id) -> list[str]:
    data = client.get(f"/api/documents/{document_id}/").json()["data"]["attributes"]
    return [page["id"] for page in data["versions"][-1]["pages"]]


def words(client, document_id) -> list[str]:
    data = client.get(f"/api/documents/{document_id}/download/").content
    return [text.split()[1] for text in page_texts(data)]


def test_papermerge_client_page_operations(server, alice):
    a = letter(alice, "a.pdf", ["one", "two", "three", "four", "five"])
    b = letter(alice, "b.pdf", ["six"])
    c = letter(alice, "c.pdf", ["seven"])
    folder = make_folder(alice, "Out", alice.home_id)
    ids = pages(alice, a)
    response = alice.request("DELETE", "/api/pages/", json_body={"pages": ids[3:]},
                             media="application/json")
    assert response.status_code == 204
    assert words(alice, a) == ["one", "two", "three"]
    ids = pages(alice, a)
    assert run_client(server, alice.token, [
        ["pages", "reorder", {"pages": [{"id": ids[0], "old_number": 1, "new_number": 3},
                                        {"id": ids[2], "old_number": 3, "new_number": 1}]}],
    ]) == [204]
    assert words(alice, a) == ["three", "two", "one"]
    ids = pages(alice, a)
    assert run_client(server, alice.token, [
        ["pages", "rotate", {"pages": [{"id": ids[0], "angle": 90}]}],
    ]) == [204]
    ids = pages(alice, a)
    assert run_client(server, alice.token, [
        ["pages", "move_to_document", {"pages": [ids[0]], "dst": b, "position": 0,
                                       "merge": False}],
    ]) == [204]
    ids = pages(alice, a)  # each operation gives the pages it keeps new ids (a new version)
    assert run_client(server, alice.token, [
        ["pages", "move_to_folder", {"pages": [ids[0]], "dst": folder, "single_page": False,
                                     "title_format": "moved"}],
        ["documents", "documents_merge", {"src": c, "dst": b}],
    ]) == [204, 204]
    assert words(alice, a) == ["one"]
    assert words(alice, b) == ["three", "six", "seven"]
    listing = alice.get(f"/api/nodes/{folder}/").json()["data"]
    assert [(node["attributes"]["title"], words(alice, node["id"])) for node in listing] == \
        [("moved.pdf", ["two"])]
    assert [node["id"] for node in alice.get("/api/trash/").json()["data"]] == [c]
