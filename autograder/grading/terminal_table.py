"""The terminal view of a grade: a rich table of tasks with points, verdicts and messages."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from autograder.grading.results import GradeResult, GradeStatus, hidden_failure, shown_points


def grade_table(result: GradeResult) -> Table:
    title = escape(f"{result.lab or 'unknown lab'} — {result.notebook}")
    table = Table(title=title, show_lines=True, expand=False)
    table.add_column("Task", no_wrap=True)
    table.add_column("Points", justify="right", no_wrap=True)
    table.add_column("Result", no_wrap=True)
    table.add_column("What the checks found")
    for task in result.tasks:
        verdict = "[green]passed[/]" if task.passed else ("[yellow]partial[/]" if task.score else "[red]failed[/]")
        lines = []
        for check in [c for c in task.checks if not c.passed]:
            lines.append(escape(f"• {hidden_failure(check) if check.hidden else f'{check.title}: {check.message}'}"))
            if not check.hidden and check.expected_picture and check.found_picture:
                lines.append(escape(f"expected:\n{check.expected_picture}\nfound:\n{check.found_picture}"))
        table.add_row(
            task.task,
            f"{shown_points(task.score)}/{shown_points(task.max_score)}",
            verdict,
            "\n".join(lines) or "all checks passed",
        )
    return table


def print_grade(result: GradeResult, console: Console | None = None) -> None:
    console = console or Console()
    if result.tasks:
        console.print(grade_table(result))
    style = "bold green" if result.status == GradeStatus.GRADED else "bold yellow"
    console.print(f"[{style}]{escape(result.summary())}[/]", highlight=False)
    for error in result.cell_errors[:10]:
        console.print(f"  [dim]{escape(error)}[/]", highlight=False)
    kind = "public checks" if result.public_only else "score"
    console.print(f"[bold]Total ({kind}): {shown_points(result.score)} / {shown_points(result.max_score)}[/]")
