"""The page a student reads: each task with its points and what the checks found, layouts as pictures
of the expected and the found blocks side by side, a failed hidden check only by its task and points."""

from __future__ import annotations

import re

from autograder.grading.html_page import escape, escape_with_code, page_html
from autograder.grading.results import GradeResult, GradeStatus, TaskResult, hidden_failure, shown_points
from autograder.grading.versions import versions_line

# The page's own rules (``page_html`` sets its column).
PAGE_STYLE = "h1{font-size:1.5rem} .total{font-size:1.25rem;font-weight:600}\n"
# The style of a task's section, also used inside a notebook (``scoped_style``).
SECTION_STYLE = """
.task{border:1px solid #ccc;border-radius:6px;margin:1rem 0;padding:.5rem 1rem}
.task h2{font-size:1.1rem;margin:.3rem 0;display:flex;justify-content:space-between}
.pass{color:#176f2c} .fail{color:#b3261e} .partial{color:#8a5a00}
ul{padding-left:1.2rem} li{margin:.35rem 0}
.pictures{display:flex;gap:2rem;flex-wrap:wrap;margin:.4rem 0}
.pictures pre{background:#f6f6f6;padding:.4rem;margin:.2rem 0;font-size:.8rem;line-height:1.1}
.status{background:#fff4e5;border-left:4px solid #e0a030;padding:.5rem 1rem;white-space:pre-wrap}
.late{background:#fdecea;border-left:4px solid #b3261e;padding:.5rem 1rem}
.override{background:#eef3fb;border-left:4px solid #4a78c2;padding:.3rem .8rem;margin:.4rem 0}
"""
STYLE = PAGE_STYLE + SECTION_STYLE


def scoped_style(scope: str) -> str:
    """``SECTION_STYLE`` with every selector inside ``scope``, so that it styles nothing else on its page."""

    def scoped(match: re.Match) -> str:
        return ",".join(f"{scope} {selector.strip()}" for selector in match.group(1).split(",")) + "{"

    return re.sub(r"([^{}]+)\{", scoped, SECTION_STYLE)


def _check_item(check) -> str:
    mark = '<span class="pass">✔</span>' if check.passed else '<span class="fail">✘</span>'
    title = escape_with_code(check.title)
    if check.passed:
        return f"<li>{mark} {title} <small>({shown_points(check.points)} pts)</small></li>"
    if check.hidden:
        return f"<li>{mark} {escape_with_code(hidden_failure(check))}</li>"
    pictures = ""
    if check.expected_picture and check.found_picture:
        pictures = (
            '<div class="pictures">'
            f"<div>expected<pre>{escape(check.expected_picture)}</pre></div>"
            f"<div>found<pre>{escape(check.found_picture)}</pre></div></div>"
        )
    points = f"<small>(0/{shown_points(check.points)} pts)</small>"
    return f"<li>{mark} {title} {points}<br>{escape_with_code(check.message)}{pictures}</li>"


def _override_note(task) -> str:
    if task.override is None:
        return ""
    return (
        f"<div class='override'>Points set by a grader: {shown_points(task.score)} "
        f"(the checks gave {shown_points(task.auto_score)}). {escape_with_code(task.override.comment)}</div>"
    )


def task_section(task: TaskResult) -> str:
    """One task: its points (a grader's override shown) and its checks."""
    passed = task.score >= task.max_score if task.override is not None else task.passed
    state = "pass" if passed else ("partial" if task.score else "fail")
    items = "".join(_check_item(c) for c in task.checks)
    task_id = escape_with_code(task.task)
    return (
        f"<section class='task' id='{task_id}'><h2><span>Task {task_id}</span>"
        f"<span class='{state}'>{shown_points(task.score)} / {shown_points(task.max_score)}</span></h2>"
        f"{_override_note(task)}<ul>{items}</ul></section>"
    )


def feedback_html(result: GradeResult, student: str) -> str:
    parts = [
        f"<h1>{escape_with_code(result.lab or 'Lab')} — feedback for {escape_with_code(student)}</h1>",
        f"<p class='total'>Score: <span id='score'>{shown_points(result.score)}</span> / "
        f"<span id='max-score'>{shown_points(result.max_score)}</span></p>",
    ]
    if result.late is not None and result.late.is_late:
        before = f" Score before the penalty: {shown_points(result.raw_score)}." if result.late.points else ""
        parts.append(f"<div class='late' id='late'>Late: {escape_with_code(result.late.reason)}.{before}</div>")
    if result.status != GradeStatus.GRADED or result.changes or result.notes:
        parts.append(f"<div class='status'>{escape_with_code(result.summary())}</div>")
    parts += [task_section(task) for task in result.tasks]
    if result.graded_by:
        parts.append(f"<footer id='graded-by'>{escape_with_code(versions_line(result.graded_by))}</footer>")
    title = f"Feedback — {escape_with_code(student)}"
    return page_html(title, STYLE, "\n" + "\n".join(parts) + "\n", width="60rem")  # a line for each part
