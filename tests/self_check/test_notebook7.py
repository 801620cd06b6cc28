"""The lab in the classic interface many courses and JupyterHubs default to: Notebook 7 (the ``notebook``
package, 7 or later) on localhost with a fresh user and a kernel with the students' wheel installed, its
notebooks opened at /notebooks/... in headless Chromium, every cell run from its menu (Run, then Run All
Cells), and the check results read from the rendered page — the filled lab 4 notebook passes every task,
an untouched one says "not attempted", a wrong layout (lab 2's first task) shows the expected and found
pictures. Screenshots are kept."""

from __future__ import annotations

import importlib.metadata
import importlib.util

import pytest
from headless_chromium import chromium, chromium_page
from lab_frontend import (
    NOTEBOOK_7,
    assert_every_task_passed,
    assert_not_attempted,
    assert_wrong_layout_shown,
    jupyter_server,
    lab_notebooks,
    run_all,
    shown_verdicts,
)
from packaging.version import Version
from student_install import plain_environment


def _notebook_version() -> Version | None:
    if importlib.util.find_spec("notebook") is None:
        return None
    return Version(importlib.metadata.version("notebook"))


pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(chromium() is None, reason="chromium is not installed: the browser test needs it"),
    pytest.mark.skipif(
        _notebook_version() is None, reason="the notebook package (Notebook 7) is not installed (pip install '.[test]')"
    ),
    pytest.mark.skipif(
        (_notebook_version() or Version("7")) < Version("7"),
        reason=f"notebook {_notebook_version()} is the old classic Notebook, not Notebook 7",
    ),
]


@pytest.fixture(scope="module")
def notebook_pages(tmp_path_factory, students_wheel_python):
    """name -> (verdicts shown, pictures shown) after running the notebook in Notebook 7, whose kernel
    has the students' wheel installed; screenshots under the returned folder."""
    folder = tmp_path_factory.mktemp("notebook7")
    root = folder / "notebooks"
    notebooks = lab_notebooks(root)
    shown = {}
    with (
        jupyter_server(NOTEBOOK_7, root, folder / "user", plain_environment(), students_wheel_python) as (url, token),
        chromium_page(chromium()) as page,
    ):
        for name, notebook in notebooks.items():
            run_all(NOTEBOOK_7, page, url, token, notebook)
            verdicts = shown_verdicts(page)
            pictures = [p.is_visible() for p in page.query_selector_all(".autograder-check .pictures pre")]
            last = page.query_selector_all(".autograder-check")[-1]
            last.scroll_into_view_if_needed()
            page.screenshot(path=folder / f"{name}.png")
            last.screenshot(path=folder / f"{name}-check.png")
            print(f"Notebook 7 screenshots of {name}: {folder / name}.png, {folder / name}-check.png")
            page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
            shown[name] = (verdicts, pictures)
    return folder, shown


def test_the_filled_notebook_shows_every_task_passed(notebook_pages):
    folder, shown = notebook_pages
    verdicts, _ = shown["filled"]
    assert_every_task_passed(verdicts, folder / "filled.png")


def test_the_untouched_notebook_shows_not_attempted(notebook_pages):
    _, shown = notebook_pages
    assert_not_attempted(shown["untouched"][0])


def test_a_wrong_layout_shows_the_expected_and_found_pictures(notebook_pages):
    _, shown = notebook_pages
    verdicts, pictures = shown["wrong"]
    assert_wrong_layout_shown(verdicts, pictures)
