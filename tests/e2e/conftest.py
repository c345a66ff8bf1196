"""Fixtures of the end-to-end tests that open pages in a real browser: Debian's headless Chromium
(:mod:`tests._browser`), driven by Playwright; one browser for the session."""
from __future__ import annotations

import pytest

from .._browser import ARGS, CHROMIUM, install_chromium


@pytest.fixture(scope="session")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
    why = install_chromium()
    if why is not None:
        pytest.skip(why)
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    """A page of its own, with every console error and uncaught exception collected in ``page.errors``."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.errors = []
    tab.on("console", lambda message: tab.errors.append(message.text) if message.type == "error" else None)
    tab.on("pageerror", lambda error: tab.errors.append(str(error)))
    yield tab
    context.close()


