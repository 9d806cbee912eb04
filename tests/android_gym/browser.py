"""Helpers for page tests in a real headless browser (the ``browser`` fixture is in ``conftest.py``):
Debian's chromium driven by Playwright. Import them relatively (``from .browser import open_page``).
"""

from __future__ import annotations


def open_page(browser, url: str):
    """Open ``url`` in a new tab once the viewer's step counter is there; returns the page and its script errors."""
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(url)
    page.wait_for_selector("#counter")
    return page, errors


def images_loaded(page) -> list[int]:
    """``naturalWidth`` of every image once all have loaded (0 for one that failed)."""
    page.wait_for_function("Array.from(document.images).every(i => i.complete)")
    return page.evaluate("Array.from(document.images).map(i => i.naturalWidth)")
