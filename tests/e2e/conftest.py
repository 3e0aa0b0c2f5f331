"""Fixtures of the browser tests (test_ui_*): Debian's headless Chromium driven by Playwright,
once for each module, and a fresh browser session on the test's server."""

from __future__ import annotations

import pytest
from playwright.sync_api import sync_playwright

from tests.harness.webpage import Session

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def browser():
    # Debian's chromium, never a downloaded one; the flags keep it off the network.
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                             args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def session(browser, server):
    session = Session(browser, server.url)
    yield session
    session.close()
