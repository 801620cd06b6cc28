"""The lab in a real front end: JupyterLab on localhost with a fresh user and a kernel with the students'
wheel installed, its notebooks opened in headless Chromium, every cell run through the app, and the
check results read from the rendered page — the filled lab 4 notebook passes every task, an untouched one
says "not attempted", a wrong layout (lab 2's first task) shows the expected and found pictures, and the
results read well in the dark theme. Screenshots are kept."""

from __future__ import annotations

import importlib.util
import re

import pytest
from headless_chromium import chromium, chromium_page
from lab_frontend import (
    JUPYTERLAB,
    assert_every_task_passed,
    assert_not_attempted,
    assert_wrong_layout_shown,
    jupyter_server,
    lab_notebooks,
    run_all,
    shown_verdicts,
)
from student_install import plain_environment

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(chromium() is None, reason="chromium is not installed: the browser test needs it"),
    pytest.mark.skipif(
        importlib.util.find_spec("jupyterlab") is None, reason="jupyterlab is not installed (pip install '.[test]')"
    ),
]

# (text colour, background behind it) of every element with text of its own in the check results.
COLOURS = """() => [...document.querySelectorAll('.autograder-check, .autograder-check *')]
  .filter(e => [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()))
  .map(e => {
    let b = e;
    while (b && ['rgba(0, 0, 0, 0)', 'transparent'].includes(getComputedStyle(b).backgroundColor)) b = b.parentElement;
    return [e.tagName, getComputedStyle(e).color, b ? getComputedStyle(b).backgroundColor : 'none'];
  })"""


def _luminance(css: str) -> float:
    channels = [int(v) / 255 for v in re.findall(r"\d+", css)[:3]]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(foreground: str, background: str) -> float:
    light, dark = sorted((_luminance(foreground), _luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


@pytest.fixture(scope="module")
def lab_pages(tmp_path_factory, students_wheel_python):
    """name -> (verdicts shown, colours in the dark theme, pictures shown) after running the notebook in
    JupyterLab, whose kernel has the students' wheel installed; screenshots under the returned folder."""
    folder = tmp_path_factory.mktemp("jupyterlab")
    root = folder / "notebooks"
    notebooks = lab_notebooks(root)
    shown = {}
    with (
        jupyter_server(JUPYTERLAB, root, folder / "user", plain_environment(), students_wheel_python) as (url, token),
        chromium_page(chromium()) as page,
    ):
        for name, notebook in notebooks.items():
            run_all(JUPYTERLAB, page, url, token, notebook)
            verdicts = shown_verdicts(page)
            pictures = [p.is_visible() for p in page.query_selector_all(".autograder-check .pictures pre")]
            page.evaluate(
                "() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})"
            )
            page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=60_000)
            colours = page.evaluate(COLOURS)
            last = page.query_selector_all(".autograder-check")[-1]
            last.scroll_into_view_if_needed()
            page.screenshot(path=folder / f"{name}.png")
            last.screenshot(path=folder / f"{name}-check.png")
            print(f"JupyterLab screenshots of {name}: {folder / name}.png, {folder / name}-check.png")
            page.evaluate(
                "() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})"
            )
            page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
            shown[name] = (verdicts, colours, pictures)
    return folder, shown


def test_the_filled_notebook_shows_every_task_passed(lab_pages):
    folder, shown = lab_pages
    verdicts, _, _ = shown["filled"]
    assert_every_task_passed(verdicts, folder / "filled.png")


def test_the_untouched_notebook_shows_not_attempted(lab_pages):
    _, shown = lab_pages
    assert_not_attempted(shown["untouched"][0])


def test_a_wrong_layout_shows_the_expected_and_found_pictures(lab_pages):
    _, shown = lab_pages
    verdicts, _, pictures = shown["wrong"]
    assert_wrong_layout_shown(verdicts, pictures)


def test_the_check_results_read_well_in_the_dark_theme(lab_pages):
    _, shown = lab_pages
    for name, (_, colours, _) in shown.items():
        assert colours, name
        for tag, foreground, background in colours:
            assert _contrast(foreground, background) >= 4.5, (name, tag, foreground, background)
