"""The web page's split of a document into many parts (docs/api.md, "Splits in the background"), in
Debian's headless Chromium: the API answers 202 and the split goes on in the background; the page
opens the folder and says so, and the parts appear there. The browser and its sessions:
tests/e2e/conftest.py, tests/harness/webpage.py."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.harness.documents import new_document, upload_accepted
from tests.harness.pdfops import long_batch
from tests.harness.waiting import wait_for, wait_processed
from tests.harness.webpage import log_in_home

pytestmark = pytest.mark.socket  # the browser talks to the socket; the API calls beside it too

NOT_FOUND = "Failed to load resource: the server responded with a status of 404 (Not Found)"
PAGES = 25  # more parts than a request makes (dms.domain.splits.BATCH_PARTS)


def test_a_split_into_many_documents_runs_in_the_background(session, server, alice):
    document = new_document(alice, "Long", alice.home_id)
    upload_accepted(alice, document, "Long.pdf", long_batch(PAGES))
    assert wait_processed(alice, document)[-1] == "succeeded"
    page = log_in_home(session, path=f"/#/doc/{document}")
    expect(page.get_by_role("heading", name=f"{PAGES} pages")).to_be_visible()
    page.get_by_label("Select all pages").check()
    page.get_by_role("toolbar", name="Page actions").get_by_role(
        "button", name="Split document").click()
    page.get_by_role("dialog", name="Split the document").get_by_role(
        "button", name="Split").click()
    expect(page.get_by_role("heading", name="Home", level=1)).to_be_visible()
    expect(page.get_by_role("status")).to_have_text(
        f"Splitting “Long” into {PAGES} documents in the background: the new documents appear "
        "in this folder as they are made, and “Long” goes to the Trash at the end.")

    def trashed():  # with the last batch of parts
        return [node["id"] for node in alice.get("/api/trash/").json()["data"]] == [document]
    wait_for(trashed, timeout=60, message="the split did not finish")
    titles = [node["attributes"]["title"] for node in alice.get(
        f"/api/nodes/{alice.home_id}/?page[size]=100").json()["data"]]
    assert sorted(titles) == sorted(f"Long-{n}.pdf" for n in range(1, PAGES + 1))
    # Home may still show "Long" when it goes to the Trash: its thumbnail is then 404 (drawn as a
    # placeholder), and the browser logs that load; nothing else may fail.
    gone = [line for line in session.refused
            if line.startswith(f"404 {server.url}/api/documents/{document}/thumbnail/")]
    assert session.refused == gone
    assert session.errors == [NOT_FOUND] * len(gone) and session.foreign == []
