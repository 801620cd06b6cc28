"""Grading a lab's mutants as submissions on the batch machinery, beside the solution: a mutant is killed
when its task fails a check the solution passed in the same run, so a check that the solution itself fails
here (a timing on a loaded machine) kills nothing. Mutants are the TA's code: no sandbox."""

from __future__ import annotations

import time
from dataclasses import dataclass

import nbformat

from autograder.course import (
    GradingProgress,
    close_client,
    dask_client,
    grade_on_worker,
    last_gradings,
    warm_references,
)
from autograder.grading import GradeResult, GradeStatus
from autograder.lab import Lab
from autograder.mutation.mutants import LabMutants, Mutant, submission
from autograder.mutation.source_mutants import KEPT, LOST
from autograder.run import TRUSTED_LIMITS, Limits

SOLUTION = "solution"


@dataclass(frozen=True)
class MutantGradingOptions:
    workers: int | None = None  # local Dask workers (default: one per core)
    scheduler: str | None = None  # an existing Dask scheduler's address
    limits: Limits = TRUSTED_LIMITS  # the TA's own code


@dataclass(frozen=True)
class Outcome:
    """What became of a mutant: killed, survived, not graded (the grader failed), or does not parse."""

    mutant: Mutant
    verdict: str
    score: float = 0.0
    max_score: float = 0.0
    detail: str = ""  # the checks it failed (killed), or why it was not graded
    status: GradeStatus = GradeStatus.GRADED  # how its run ended


def _failed(result: GradeResult, task: str) -> dict[str, str]:
    return {c.name: c.message for t in result.tasks if t.task == task for c in t.checks if not c.passed}


def judge(mutant: Mutant, result: GradeResult, solution: GradeResult) -> Outcome:
    """A mutant's outcome on its own task, against the solution graded in the same run."""
    if result.status == GradeStatus.GRADER_ERROR or not any(t.task == mutant.task for t in result.tasks):
        return Outcome(mutant, "not graded", detail=f"{result.status}: {result.reason}")
    task = next(t for t in result.tasks if t.task == mutant.task)
    failed_by_solution = _failed(solution, mutant.task).keys()
    new = {name: message for name, message in _failed(result, mutant.task).items() if name not in failed_by_solution}
    run = "" if result.status == GradeStatus.GRADED else f"{result.status}: {result.reason}; "
    detail = run + "; ".join(f"{name}: {message.splitlines()[0] if message else ''}" for name, message in new.items())
    if result.cell_errors and new:
        detail += f" ({result.cell_errors[0].splitlines()[0]})"
    failed, passed = (LOST, KEPT) if mutant.is_variant else ("killed", "survived")  # a variant keeps every point
    return Outcome(mutant, failed if new else passed, task.auto_score, task.max_score, detail, result.status)


def grade_mutants(lab: Lab, found: LabMutants, options: MutantGradingOptions) -> tuple[GradeResult, list[Outcome]]:
    """The solution's grade and each mutant's outcome, in the order of ``found.mutants``."""
    graded = [m for m in found.mutants if m.parses]
    order = [t.id for t in lab.tasks]  # the solution answered as far as the last mutant's task
    last = max((order.index(m.task) for m in found.mutants), default=len(order) - 1)
    notebooks = {SOLUTION: submission(lab, order[last])}
    notebooks.update({m.id: submission(lab, m.task, {m.cell_id: m.source}) for m in graded})
    limits = options.limits.to_dict()
    results: dict[str, GradeResult] = {}
    with GradingProgress(len(notebooks), label=f"mutants of {lab.id}") as progress:
        client, cluster = dask_client(options.workers, options.scheduler)
        futures = {}
        try:
            from dask.distributed import as_completed

            warm_references(client, lab.id, progress)
            final = last_gradings(client, len(notebooks))
            for index, (name, nb) in enumerate(notebooks.items()):
                future = client.submit(
                    grade_on_worker,
                    name,
                    f"{name}.ipynb",
                    nbformat.writes(nb).encode(),
                    lab.id,
                    limits,
                    index in final,
                    key=f"mutant-{name}-{time.time_ns()}",
                    pure=False,
                )
                futures[future] = name
            for future in as_completed(futures):
                name = futures[future]
                try:
                    results[name] = GradeResult.from_dict(future.result())
                except Exception as exc:  # the worker itself died or lost the task
                    results[name] = GradeResult(
                        lab.id, name, GradeStatus.GRADER_ERROR, f"{type(exc).__name__}: {exc}", lab.max_score
                    )
                progress.advance(results[name])
        finally:
            for future in futures:
                future.cancel()
            close_client(client, cluster)
    solution = results[SOLUTION]
    outcomes = [
        judge(m, results[m.id], solution)
        if m.parses
        else Outcome(m, "does not parse", detail="the change leaves code Python cannot compile")
        for m in found.mutants
    ]
    return solution, outcomes
