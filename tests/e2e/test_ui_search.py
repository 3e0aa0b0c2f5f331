"""The page's search beyond its first 100 results (api.md §22, "Search"), in Debian's headless
Chromium: the total shown, "Show more" appending the next page until every result is there."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.harness.database import add_document
from tests.harness.waiting import wait_indexed
from tests.harness.webpage import log_in_home

pytestmark = pytest.mark.socket  # the browser talks to the socket

DOCUMENTS = 105


def test_more_than_a_page_of_results_with_the_total(session, server, config, alice):
    for number in range(DOCUMENTS):
        add_document(alice.user_id, alice.home_id, f"Ledger {number:03}",
                     f"page {number} of the ledger")
    wait_indexed(config)

    page = log_in_home(session)
    page.get_by_role("searchbox", name="Search").press_sequentially("ledger", delay=40)
    expect(page.get_by_role("heading", name="Results for “ledger”", level=1)).to_be_visible()
    results = page.locator("ol.results > li")
    expect(page.get_by_text("100 of 105 results")).to_be_visible()
    expect(results).to_have_count(100)
    session.screenshot("80-search-page.png", full_page=False)

    page.get_by_role("button", name="Show more").click()
    expect(results).to_have_count(DOCUMENTS)
    expect(page.get_by_text("105 results", exact=True)).to_be_visible()
    expect(page.get_by_role("button", name="Show more")).to_have_count(0)
    # Reading goes on at the first new result; every document once.
    expect(results.nth(100).get_by_role("link")).to_be_focused()
    titles = results.get_by_role("link").all_inner_texts()
    assert sorted(titles) == [f"Ledger {number:03}" for number in range(DOCUMENTS)]
    session.screenshot("81-search-more.png", full_page=False)
    assert session.errors == [] and session.foreign == []
