"""A page rendered by headless Chromium: its DOM after scripts and styles, and a screenshot."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def render(page: Path, screenshot: Path, size: str = "1000,900") -> str:
    """The DOM Chromium builds from ``page``; a screenshot of it is written to ``screenshot``."""
    flags = [*FLAGS, f"--user-data-dir={page.parent / 'chromium-profile'}"]
    dom = subprocess.run([chromium(), *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True,
                         timeout=120).stdout
    subprocess.run([chromium(), *flags, f"--screenshot={screenshot}", f"--window-size={size}", page.as_uri()],
                   capture_output=True, timeout=120)
    return dom
