"""The page's search (api.md §22, "Search"), in Debian's headless Chromium: beyond its first 100
results, the total shown and "Show more" appending the next page until every result is there; a
word found inside a compound word, after the whole word, the compound highlighted."""

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


def test_a_word_inside_a_compound_word_is_found_after_whole_words(session, server, config,
                                                                  alice):
    add_document(alice.user_id, alice.home_id, "Post vom Finanzamt", "Ihr Steuerbescheid 2024")
    add_document(alice.user_id, alice.home_id, "Bescheid", "Der Bescheid kam heute")
    wait_indexed(config)

    page = log_in_home(session)
    page.get_by_role("searchbox", name="Search").press_sequentially("bescheid", delay=40)
    expect(page.get_by_text("2 results", exact=True)).to_be_visible()
    results = page.locator("ol.results > li")
    expect(results.get_by_role("link")).to_have_text(["Bescheid", "Post vom Finanzamt"])
    expect(results.nth(1).locator("mark")).to_have_text(["Steuerbescheid"])
    expect(page.get_by_role("button", name="Show more")).to_have_count(0)
    session.screenshot("82-search-inside-words.png", full_page=False)
    assert session.errors == [] and session.foreign == []
