"""The progress bar a batch and a mutation run show while their notebooks are graded: done, failed,
remaining and time left (rich's)."""

from __future__ import annotations

from autograder.grading import GradeResult, GradeStatus


class GradingProgress:
    """A rich progress bar: done, failed, remaining and time left."""

    def __init__(self, total: int, already: int = 0, already_failed: int = 0, label: str = "grading"):
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        self.progress = Progress(
            TextColumn(f"[bold]{label}"),
            BarColumn(),
            TextColumn(
                "{task.completed}/{task.total} done · {task.fields[failed]} failed · "
                "{task.fields[remaining]} remaining ·"
            ),
            TimeElapsedColumn(),
            TextColumn("elapsed ·"),
            TimeRemainingColumn(),
            TextColumn("left"),
        )
        self.task = self.progress.add_task(
            "grading", total=total, completed=already, failed=already_failed, remaining=total - already
        )
        self.total, self.failed = total, already_failed

    def __enter__(self):
        self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        self.progress.__exit__(*exc)

    def advance(self, result: GradeResult) -> None:
        self.failed += result.status != GradeStatus.GRADED
        remaining = self.total - self.progress.tasks[0].completed - 1
        self.progress.update(self.task, advance=1, failed=self.failed, remaining=remaining)
