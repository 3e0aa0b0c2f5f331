"""Share links and saved searches on the web page (api.md, "Share links", "Saved searches"), in
Debian's headless Chromium, by accessible names: alice makes a public link with a password in a
document's Share dialog and copies it; a visitor opens it in a fresh browser (no session), gives
the password and downloads the letter; alice revokes it and the visitor's page says so. alice saves
a search of the query language and finds it in the side bar with its count, opens it, hides and
deletes it; a query that cannot be read is told under the search box. axe-core's checks on the
dialog, the public page, the saved search and the refusal."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.harness.documents import new_document, upload_accepted
from tests.harness.waiting import wait_indexed, wait_processed
from tests.harness.webpage import (
    REFUSED,
    Session,
    axe_violations,
    log_in_home,
    unnamed_controls,
)

pytestmark = pytest.mark.socket  # the browser talks to the socket; the API calls beside it too

LETTER = b"Dear landlord, the heating has been broken since Monday.\n"


@pytest.fixture
def letter(alice, server) -> str:
    document = new_document(alice, "Letter to the landlord")
    upload_accepted(alice, document, "letter.txt", LETTER)
    assert wait_processed(alice, document)[-1] == "succeeded"
    wait_indexed(server.config)
    return document


def test_a_link_with_a_password_opened_by_a_visitor_then_revoked(browser, server, alice, letter):
    session = Session(browser, server.url, bypass_csp=True)  # axe-core needs its script in
    page = log_in_home(session)
    page.get_by_role("row", name=re.compile(r"\bSelect Letter to the landlord\b")) \
        .get_by_role("checkbox").check()
    page.get_by_role("button", name="Share…").click()
    dialog = page.get_by_role("dialog", name="Share “Letter to the landlord”")
    links = dialog.get_by_role("region", name="Public links")
    expect(links.get_by_text("No public links.")).to_be_visible()
    form = links.get_by_role("form", name="New public link")
    form.get_by_label("Password (optional)").fill("correct horse")
    form.get_by_label("Downloads (optional)").fill("3")
    form.get_by_role("button", name="Make link").click()
    expect(links.get_by_role("status")).to_have_text("Link made: copy it below and send it.")
    address = dialog.get_by_role("textbox", name=re.compile(r"^Address of the link until"))
    url = address.input_value()
    assert re.fullmatch(rf"{re.escape(server.url)}/s/[A-Za-z0-9_-]{{32}}", url)
    expect(dialog.locator(".share-link")).to_contain_text("password · 0 of 3 downloads")
    made = alice.get("/api/share-links/").json()["data"]
    assert [(link["attributes"]["node"], link["attributes"]["has_password"],
             link["attributes"]["max_downloads"]) for link in made] == [(letter, True, 3)]
    assert axe_violations(page) == []
    assert unnamed_controls(page) == []
    session.screenshot("70-share-dialog-public-link.png", full_page=False)

    # A visitor: a fresh browser, no session, no token.
    visitor = Session(browser, server.url, bypass_csp=True)
    public = visitor.page
    public.goto(url)
    expect(public.get_by_role("heading", name="Password needed")).to_be_visible()
    public.get_by_label("Password").fill("wrong horse")
    public.get_by_role("button", name="Open").click()
    expect(public.get_by_role("alert")).to_have_text("That password is not right.")
    public.get_by_label("Password").fill("correct horse")
    public.get_by_role("button", name="Open").click()
    expect(public.get_by_role("heading", name="Letter to the landlord")).to_be_visible()
    expect(public.get_by_text("letter.txt · 57 bytes")).to_be_visible()
    assert axe_violations(public) == []
    visitor.screenshot("71-public-share-page.png")
    with public.expect_download() as downloaded:
        public.get_by_role("link", name="Download").click()
    assert Path(downloaded.value.path()).read_bytes() == LETTER
    assert alice.get(f"/api/share-links/{made[0]['id']}/").json()["data"]["attributes"][
        "downloads"] == 1

    dialog.get_by_role("button", name=re.compile(r"^Revoke the link until")).click()
    expect(links.get_by_role("status")).to_have_text("The link no longer works.")
    expect(links.get_by_text("No public links.")).to_be_visible()
    public.reload()
    expect(public.get_by_role("heading", name="This link no longer works")).to_be_visible()
    expect(public.get_by_text("This link was withdrawn by the person who shared it.")) \
        .to_be_visible()
    visitor.screenshot("72-public-share-withdrawn.png")
    assert visitor.foreign == [] and session.foreign == []
    visitor.close()
    session.close()


def test_a_saved_search_in_the_side_bar(browser, server, alice, letter):
    new_document(alice, "Empty note")
    session = Session(browser, server.url, bypass_csp=True)
    page = log_in_home(session)
    # A query of the query language (api.md §20): words, a date and a field.
    page.get_by_role("searchbox", name="Search").fill("landlord added:today -title:empty")
    expect(page.get_by_role("heading",
                            name="Results for “landlord added:today -title:empty”")).to_be_visible()
    page.get_by_role("button", name="Save search").click()
    prompt = page.get_by_role("dialog", name="Save this search")
    prompt.get_by_label("Name").fill("Landlord letters")
    prompt.get_by_role("button", name="Save search").click()
    expect(page.get_by_role("status")).to_have_text("Search saved as “Landlord letters”.")
    side = page.get_by_role("list", name="Saved searches")
    entry = side.get_by_role("link", name=re.compile(r"^Landlord letters"))
    expect(entry).to_contain_text("1")
    saved = alice.get("/api/saved-searches/").json()["data"]
    assert [item["attributes"]["query"] for item in saved] == ["landlord added:today -title:empty"]
    entry.click()
    expect(page.get_by_role("heading", name="Landlord letters", level=1)).to_be_visible()
    expect(page.get_by_text(
        "Documents that “landlord added:today -title:empty” finds: 1 document.")).to_be_visible()
    expect(page.get_by_role("link", name="Letter to the landlord")).to_be_visible()
    assert axe_violations(page) == []
    session.screenshot("73-saved-search.png")
    page.get_by_role("button", name="Hide from side bar").click()
    expect(page.get_by_role("status")).to_have_text(
        "“Landlord letters” is no longer in the side bar.")
    expect(side.get_by_role("link")).to_have_count(0)
    page.get_by_role("button", name="Delete the saved search Landlord letters").click()
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    expect(page.get_by_role("status")).to_have_text("“Landlord letters” deleted.")
    assert alice.get("/api/saved-searches/").json()["data"] == []
    assert session.errors == []
    session.close()


def test_a_query_that_cannot_be_read_is_told_under_the_search_box(browser, server, alice, letter):
    session = Session(browser, server.url, bypass_csp=True)
    page = log_in_home(session)
    page.get_by_role("searchbox", name="Search").fill("landlord created:2024-13")
    expect(page.get_by_role("alert").filter(has_text="position")).to_have_text(
        "The query cannot be read at position 18: a date such as 2024, 2024-03 or 2024-03-15, or "
        "today, yesterday, this week, this month, this year, previous week, previous month, "
        "previous quarter or previous year.")
    expect(page.get_by_text("0 results")).to_be_visible()
    expect(page.get_by_role("button", name="Save search")).to_have_count(0)
    assert axe_violations(page) == []
    session.screenshot("74-search-query-refused.png")
    page.get_by_role("searchbox", name="Search").fill("landlord created:today")
    expect(page.get_by_role("link", name="Letter to the landlord")).to_be_visible()
    expect(page.get_by_role("alert").filter(has_text="position")).to_have_count(0)
    assert session.errors == [REFUSED]  # the browser's own line for the 400, nothing else
    session.close()
