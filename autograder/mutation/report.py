"""A lab's mutation report: per task, what became of its mutants and right variants; the lab's mutation
score; the mutants the lab records as equivalent to its solution (``EQUIVALENT_MUTANTS`` in its
``equivalent_mutants.py``: mutant id -> why no check should fail it), and the records that no longer fit."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from autograder.grading import GradeResult, GradeStatus, TaskResult
from autograder.lab import load_lab
from autograder.mutation.grading import Outcome
from autograder.mutation.source_mutants import KEPT, LOST

EQUIVALENTS_MODULE = "equivalent_mutants"


class EquivalentsError(ValueError):
    """The lab's equivalent_mutants.py is malformed; the message says how."""


def recorded_equivalents(lab_id: str) -> dict[str, str]:
    """The lab's recorded equivalent mutants (id -> reason); {} when the lab records none."""
    name = f"{load_lab(lab_id).package.__name__}.{EQUIVALENTS_MODULE}"  # a course's lab package joins the path
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == name:
            return {}
        raise
    records = getattr(module, "EQUIVALENT_MUTANTS", None)
    if not isinstance(records, dict):
        raise EquivalentsError(f"{module.__file__}: EQUIVALENT_MUTANTS must be a dict: mutant id -> reason")
    unexplained = sorted(k for k, v in records.items() if not isinstance(v, str) or not v.strip())
    if unexplained:
        raise EquivalentsError(f"{module.__file__}: no reason given for {', '.join(map(str, unexplained))}")
    return dict(records)


@dataclass(frozen=True)
class TaskCount:
    task: str
    made: int
    killed: int
    survived: int  # not recorded as equivalent
    equivalent: int  # survivors recorded as equivalent
    not_graded: int  # the change does not compile, or the grader failed
    variants: int = 0  # right variants made
    kept: int = 0  # right variants that kept full marks, or whose loss the lab records with a reason


@dataclass(frozen=True)
class MutationReport:
    lab: str
    solution: GradeResult
    outcomes: tuple[Outcome, ...]
    equivalents: dict  # mutant id -> reason, as the lab records them
    unparsed_cells: tuple[str, ...] = ()

    def _is_equivalent(self, outcome: Outcome) -> bool:
        return outcome.verdict in ("survived", LOST) and outcome.mutant.id in self.equivalents

    @property
    def variants(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.mutant.is_variant]

    @property
    def lost_variants(self) -> list[Outcome]:
        """Right answers the graders deny points, unexplained: each a check stricter than the text."""
        return [o for o in self.variants if o.verdict == LOST and not self._is_equivalent(o)]

    @property
    def survivors(self) -> list[Outcome]:
        """The survivors the lab has not explained: each a wrong answer its graders accept, or an
        equivalent mutant to record."""
        return [o for o in self.outcomes if o.verdict == "survived" and not self._is_equivalent(o)]

    @property
    def equivalent(self) -> list[Outcome]:
        return [o for o in self.outcomes if self._is_equivalent(o)]

    @property
    def not_graded(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.verdict in ("does not parse", "not graded")]

    @property
    def killed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.verdict == "killed"]

    def per_task(self) -> list[TaskCount]:
        lost = self.lost_variants

        def count(group: list[Outcome], task: str, variants: bool = False) -> int:
            return sum(o.mutant.task == task and o.mutant.is_variant == variants for o in group)

        return [
            TaskCount(
                task,
                made=count(list(self.outcomes), task),
                killed=count(self.killed, task),
                survived=count(self.survivors, task),
                equivalent=count(self.equivalent, task),
                not_graded=count(self.not_graded, task),
                variants=count(self.variants, task, True),
                kept=count([o for o in self.variants if o not in lost and o.verdict != "not graded"], task, True),
            )
            for task in dict.fromkeys(o.mutant.task for o in self.outcomes)
        ]

    @property
    def answered(self) -> tuple[TaskResult, ...]:
        """The solution's tasks answered in this run: up to the last task with mutants (grading.py)."""
        tasks = [t.task for t in self.solution.tasks]
        graded = [tasks.index(o.mutant.task) for o in self.outcomes if o.mutant.task in tasks]
        return self.solution.tasks[: max(graded) + 1] if graded else self.solution.tasks

    @property
    def score(self) -> float | None:
        """killed ÷ (killed + unexplained survivors); None when nothing was graded."""
        judged = len(self.killed) + len(self.survivors)
        return len(self.killed) / judged if judged else None

    def stale_records(self) -> list[str]:
        """Records of equivalent_mutants.py that no longer fit, in words."""
        made = {o.mutant.id: o for o in self.outcomes}
        tasks = {o.mutant.task for o in self.outcomes}
        stale = []
        for mutant_id in self.equivalents:
            if mutant_id in made and made[mutant_id].verdict == "killed":
                stale.append(f"{mutant_id} is recorded as equivalent but the graders kill it: remove its record")
            elif mutant_id in made and made[mutant_id].verdict == KEPT:
                stale.append(f"{mutant_id} is recorded as losing points but keeps full marks: remove its record")
            elif mutant_id not in made and mutant_id.split("-")[0] in tasks:
                stale.append(
                    f"{mutant_id} is recorded as equivalent but no longer made (its cell changed): remove its record"
                )
        return stale

    def to_dict(self) -> dict:
        return {
            "lab": self.lab,
            "score": self.score,
            "tasks": [vars(count) for count in self.per_task()],
            "mutants": [
                {
                    "id": o.mutant.id,
                    "task": o.mutant.task,
                    "operator": o.mutant.operator,
                    "description": o.mutant.description,
                    "verdict": o.verdict,
                    "equivalent": self.equivalents.get(o.mutant.id) if self._is_equivalent(o) else None,
                    "score": o.score,
                    "max_score": o.max_score,
                    "detail": o.detail,
                    "status": o.status,
                    "diff": o.mutant.diff,
                }
                for o in self.outcomes
            ],
            "variants": {"made": len(self.variants), "lost": len(self.lost_variants)},
            "stale_records": self.stale_records(),
            "unparsed_cells": list(self.unparsed_cells),
        }


def print_report(report: MutationReport, console=None) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = console or Console()
    answered = report.answered
    points, max_points = sum(t.score for t in answered), sum(t.max_score for t in answered)
    if len(answered) < len(report.solution.tasks):  # a plain fact, not a failure: later tasks are blank
        names = ", ".join(t.task for t in answered)
        console.print(
            f"only {names} {'is' if len(answered) == 1 else 'are'} answered and scored in this run (the "
            f"solution's answers up to {answered[-1].task}, later tasks left blank): {points:g} / {max_points:g}"
        )
    if report.solution.status != GradeStatus.GRADED or points < max_points:
        failed = [f"{t.task} {c.name}" for t in answered for c in t.checks if not c.passed]
        console.print(
            f"[yellow]the solution scored {points:g} / {max_points:g} on the tasks answered in this run "
            f"({report.solution.status}); its failed checks kill no mutant: "
            f"{', '.join(failed) or report.solution.reason}"
        )
    table = Table(title=f"mutants of {report.lab}")
    for column in ("task", "made", "killed", "survived", "equivalent", "not graded", "right variants kept"):
        table.add_column(column, justify="left" if column == "task" else "right")
    for count in report.per_task():
        table.add_row(
            count.task,
            *(str(n) for n in (count.made, count.killed, count.survived, count.equivalent, count.not_graded)),
            f"{count.kept} / {count.variants}",
        )
    console.print(table)
    for outcome in (*report.survivors, *report.lost_variants):  # a survivor is never a variant
        m = outcome.mutant
        label, detail = (
            ("right variant lost points", f": {escape(outcome.detail)}") if m.is_variant else ("survived", "")
        )
        console.print(f"\n[bold red]{label}[/] {m.id} ({m.task}, line {m.line}): {escape(m.description)}{detail}")
        console.print(escape(m.diff.rstrip("\n")), highlight=False)
    for outcome in report.equivalent:
        console.print(
            f"\n[bold]equivalent[/] {outcome.mutant.id}: {escape(outcome.mutant.description)}: "
            f"{escape(report.equivalents[outcome.mutant.id])}"
        )
    for outcome in (*report.not_graded, *(o for o in report.killed if o.status != GradeStatus.GRADED)):
        m, killed = outcome.mutant, outcome.verdict == "killed"
        label, note = ("run failed", " — counted as killed: its task lost points") if killed else (outcome.verdict, "")
        console.print(
            f"\n[yellow]{label}[/] {m.id} ({m.task}): {escape(m.description)}: {escape(outcome.detail)}{note}"
        )
    for line in (*report.stale_records(), *report.unparsed_cells):
        console.print(f"\n[yellow]note[/] {escape(line)}")
    score = "no mutant graded" if report.score is None else f"{report.score:.0%}"
    console.print(
        f"\n{report.lab}: mutation score {score} ({len(report.killed)} killed of "
        f"{len(report.killed) + len(report.survivors)} not recorded as equivalent; "
        f"{len(report.equivalent)} equivalent, {len(report.not_graded)} not graded); right variants: "
        f"{len(report.variants) - len(report.lost_variants)} kept of {len(report.variants)}"
    )


def mutation_report(
    lab_id: str, tasks: tuple[str, ...] = (), options=None, operators: tuple[str, ...] = ()
) -> MutationReport:
    """Make the lab's mutants (of ``tasks``, by ``operators``, if given), grade them, and judge each."""
    from autograder.mutation.grading import MutantGradingOptions, grade_mutants
    from autograder.mutation.mutants import lab_mutants

    lab = load_lab(lab_id)
    equivalents = recorded_equivalents(lab_id)
    if operators:  # only the chosen operators' records: the others' mutants are not made this time
        equivalents = {k: v for k, v in equivalents.items() if k.split("-")[1] in operators}
    found = lab_mutants(lab, tasks, operators)
    solution, outcomes = grade_mutants(lab, found, options or MutantGradingOptions())
    return MutationReport(lab_id, solution, tuple(outcomes), equivalents, found.unparsed_cells)
