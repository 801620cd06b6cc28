"""What the self-check shows under its cell: each task's public checks drawn as on the feedback page, or a
plain message saying why nothing could be checked."""

from __future__ import annotations

from dataclasses import dataclass

from autograder.grading import (
    CheckResult,
    TaskResult,
    escape,
    escape_with_code,
    scoped_style,
    shown_points,
    task_section,
)

SCOPE = "autograder-check"
SELECTOR = f"div.{SCOPE}"  # every rule starts with it: nothing outside the self-check's own output is styled
NOT_ATTEMPTED = "not attempted"
NO_PUBLIC_CHECKS = "no public checks"
# A light card with its own foreground and background on every element, so that it reads the same in a
# dark theme (JupyterLab's styles its outputs' headings, code and pre, the latter more specifically than
# a scoped rule: hence !important there; Colab's dark mode styles its text).
STYLE = (
    f"{SELECTOR}{{font-family:system-ui,sans-serif;color:#222;background:#fff;color-scheme:light;"
    "max-width:60rem;padding:.1rem .8rem;border:1px solid #ccc;border-radius:6px}"
    f"{SELECTOR} :is(p,ul,li,h2,span,small,b,section,div){{color:inherit;background:transparent}}"
    f"{SELECTOR} code{{color:#222 !important;background:#eee !important;padding:0 .2em;border-radius:3px}}"
    f"{SELECTOR} pre{{color:#222 !important;background:#f6f6f6 !important}}"
    f"{SELECTOR} .todo{{color:#666}} {SELECTOR} .note{{color:#555;font-size:.85rem}}"
    f"{SELECTOR} .status{{color:#222;background:#fff4e5}}" + scoped_style(SELECTOR)
)
NOTE = (
    "Public checks only, on fresh inputs, run apart from this notebook. Grading runs them again and "
    "may run further checks. Check cells are not run when your notebook is graded."
)


@dataclass(frozen=True)
class TaskSelfCheck:
    """One task's public checks, or the names it binds when none of them is defined yet."""

    task: str
    checks: tuple[CheckResult, ...] = ()
    undefined: tuple[str, ...] = ()

    @property
    def attempted(self) -> bool:
        return not self.undefined

    @property
    def score(self) -> float:
        return sum(c.score for c in self.checks)

    @property
    def points(self) -> float:
        return sum(c.points for c in self.checks)

    @property
    def verdict(self) -> str:
        if not self.attempted:
            return NOT_ATTEMPTED
        if not self.checks:
            return NO_PUBLIC_CHECKS
        if all(c.passed for c in self.checks):
            return "passed"
        return "partial" if self.score else "failed"


@dataclass(frozen=True)
class SelfCheckReport:
    """One ``ag.check``'s tasks, or the problem that kept them from being checked; ``warning``, what may
    make them differ from grading (an untested JAX)."""

    lab: str | None
    tasks: tuple[TaskSelfCheck, ...] = ()
    problem: str | None = None
    warning: str | None = None


def _task_html(result: TaskSelfCheck) -> str:
    task = escape_with_code(result.task)
    if result.attempted and result.checks:
        body = task_section(TaskResult(result.task, result.points, result.checks))
    else:  # nothing checked: the verdict says why, and the line below it what to do
        names = ", ".join(f"`{name}`" for name in result.undefined)
        why = (
            f"None of {names} is defined yet: run the task’s cells, then check again."
            if result.undefined
            else "This task is checked only when your notebook is graded."
        )
        body = (
            f"<section class='task'><h2><span>Task {task}</span><span class='todo'>{result.verdict}</span></h2>"
            f"<p>{escape_with_code(why)}</p></section>"
        )
    return f"<div data-task='{task}' data-verdict='{escape(result.verdict)}'>{body}</div>"


def self_check_html(report: SelfCheckReport) -> str:
    lab = f" data-lab='{escape(report.lab)}'" if report.lab else ""
    parts = [f"<style>{STYLE}</style><div class='{SCOPE}'{lab}>"]
    if report.problem:
        parts.append(f"<div class='status' data-verdict='problem'>{escape_with_code(report.problem)}</div>")
    else:
        if report.warning:
            parts.append(f"<div class='status' data-verdict='warning'>{escape_with_code(report.warning)}</div>")
        attempted = [t for t in report.tasks if t.attempted]
        if len(report.tasks) > 1:
            parts.append(
                f"<p><b>Public checks: {shown_points(sum(t.score for t in attempted))} / "
                f"{shown_points(sum(t.points for t in attempted))} points</b> in {len(attempted)} of "
                f"{len(report.tasks)} tasks attempted</p>"
            )
        parts += [_task_html(t) for t in report.tasks]
        parts.append(f"<p class='note'>{escape_with_code(NOTE)}</p>")
    parts.append("</div>")
    return "".join(parts)
