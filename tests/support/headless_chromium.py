"""Headless Chromium for tests, the system's (none is downloaded): a page rendered once (its DOM after
scripts and styles, and a screenshot), or a live page driven by Playwright."""

from __future__ import annotations

import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def render(page: Path, screenshot: Path, size: str = "1000,900") -> str:
    """The DOM Chromium builds from ``page``; a screenshot of it is written to ``screenshot``."""
    flags = [*FLAGS, f"--user-data-dir={page.parent / 'chromium-profile'}"]
    dom = subprocess.run(
        [chromium(), *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120
    ).stdout
    subprocess.run(
        [chromium(), *flags, f"--screenshot={screenshot}", f"--window-size={size}", page.as_uri()],
        capture_output=True,
        timeout=120,
    )
    return dom


@contextmanager
def chromium_page(executable: str):
    """A live page of headless Chromium, driven by Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=[*FLAGS], headless=True)
        try:
            yield browser.new_page(viewport={"width": 1300, "height": 1000})
        finally:
            browser.close()
