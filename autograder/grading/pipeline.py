"""Grading one notebook: read it, plan it, execute it in a fresh kernel, run the graders, score it. The kernel
starts first (graded_run.py): nothing here imports JAX before. A course's own notebook's run gets what a
student's never does (docs/how-grading-works.md, "One grade", step 2); ``warm_here`` computes a lab's
references ahead of its gradings, in a grading process of their own, so that no grading computes them twice."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat

from autograder.fairness import WAITED_BEHIND, checks_running, switched_off
from autograder.grading.graded_run import RunAlongside, RunToEnd
from autograder.grading.results import CheckResult, GradeResult, GradeStatus, TaskResult
from autograder.grading.versions import grader_versions
from autograder.lab import Lab, LabError, NotAssigned, lab_of_notebook, load_lab
from autograder.run import (
    CHECKS,
    COMPILED_PROGRAMS_VARIABLE,
    GRADER_PHASES,
    MEASURE,
    NO_SANDBOX,
    TURN_WAIT,
    CompiledPrograms,
    Execution,
    Executor,
    Limits,
    RunRequest,
    RunStatus,
    build_plan,
    compiled_programs_folder,
    configure_grader_process,
    execute_plan,
    rounded_phases,
    sandbox_level,
    timed_cells_share,
)

if TYPE_CHECKING:
    from autograder.caches import WarmResult

NOTED_SHARE = 0.25  # a timed task whose cells met more load from other work than this is noted in its grade
MAX_NOTEBOOK_BYTES = 50 * 1024 * 1024


@dataclass(frozen=True)
class GradeOptions:
    lab_id: str | None = None  # None: the lab the notebook names
    _: KW_ONLY  # the rest by name
    public_only: bool = False  # the public checks alone, out of their own points (a student's self-check)
    limits: Limits = Limits()
    seed: int | None = None  # None: a fresh one
    executor: Executor = execute_plan  # a batch worker passes its kernel pool's ``execute``
    overlap: bool = True  # False: the graders load once the kernel's memory is free (a Gradescope container)
    on_check: Callable[[list[CheckResult]], None] | None = None  # given the checks so far after each
    on_execution: Callable[[Execution], None] | None = None  # given the run's execution (none: not run)
    course_notebook: bool = False  # the course's own notebook, never a student's (above)


def grade_notebook(path: Path, options: GradeOptions | None = None) -> GradeResult:
    """Never raises for a bad submission: the status says what went wrong. Raises ``SandboxUnavailable``
    when ``options.limits.sandbox`` is set and no sandbox level works here."""
    options = options or GradeOptions()
    result, execution = _grade(path, options)
    if execution is not None and options.on_execution is not None:
        options.on_execution(execution)
    return replace(result, graded_by=grader_versions())


def _grade(path: Path, options: GradeOptions) -> tuple[GradeResult, Execution | None]:
    lab_id, public_only = options.lab_id, options.public_only
    level = sandbox_level() if options.limits.sandbox is not None else NO_SANDBOX
    seed = secrets.randbelow(2**31) if options.seed is None else options.seed

    def ungraded(status: GradeStatus, reason: str, max_score: float = 0.0) -> GradeResult:
        return GradeResult(lab_id, str(path), status, reason, max_score, seed=seed)

    try:
        nb = read_submission(path)
    except NotANotebook as exc:
        return ungraded(GradeStatus.NOT_A_NOTEBOOK, str(exc), _max_score(lab_id)), None
    found_lab = lab_of_notebook(nb)
    lab_id = lab_id or found_lab
    if lab_id is None:
        return ungraded(GradeStatus.UNKNOWN_LAB, "the notebook does not say which lab it is; pass --lab"), None
    try:
        lab = load_lab(lab_id)
        template = lab.template
    except NotAssigned as exc:  # the lab is known, but not ready to grade with
        return ungraded(GradeStatus.GRADER_ERROR, str(exc)), None
    except LabError as exc:
        return ungraded(GradeStatus.UNKNOWN_LAB, str(exc)), None
    notes = []
    if found_lab is not None and found_lab != lab_id:
        notes.append(f"the notebook says it is {found_lab}; it was graded as {lab_id}")
    limits = course_limits(options.limits, lab, path, options.course_notebook)
    request = RunRequest(
        plan=build_plan(template, nb),
        captures=lambda: lab.captures,
        limits=limits,
        seed=seed,
        lab_probe=lab.kernel_probe_path,
        submission=path,
        compiled=compiled_programs(lab, path, options.course_notebook),
    )
    GRADER_PHASES.reset()  # this process grades one submission at a time (phase_clock.py)
    WAITED_BEHIND.reset()  # the turns its waits met (fairness/timed_turns.py)
    run = (RunAlongside if options.overlap else RunToEnd)(options.executor, request)
    from autograder.grading.pytest_plugin import GraderError, run_graders  # with overlap: while the kernel starts

    try:
        with run.checks_phase():
            source = run.facts_source
            checks = [] if source is None else run_graders(lab, source, seed, public_only, on_check=options.on_check)
    except GraderError as exc:
        return ungraded(GradeStatus.GRADER_ERROR, str(exc), lab.max_score), run.result()
    finally:
        run.checked()
    checks_seconds = run.checks_seconds()
    execution = run.result()
    notes += execution_notes(execution, limits)
    status = GradeStatus.of_run(execution.status)
    result = GradeResult(
        lab_id, str(path), status, execution.reason, lab.max_score, seed=seed, notes=tuple(notes), sandbox=level
    )
    if status == GradeStatus.HARNESS_ERROR:  # no check saw a run: no check result is shown as if earned
        return result, execution
    tasks = _by_task(lab.tasks, checks, public_only)
    return replace(
        result,
        max_score=sum(t.max_score for t in tasks),
        tasks=tasks,
        ended_at=execution.ended_at,
        changes=execution.changes,
        cell_errors=tuple(f"{c.label}: {c.error}" for c in execution.cells if c.error and c.origin == "student"),
        seconds=execution.seconds,
        public_only=public_only,
        phases=_phases(execution.phases, checks_seconds),
        turn_waits=WAITED_BEHIND.record(),
    ), execution


def _phases(run: dict[str, float], checks_seconds: float) -> dict[str, float]:
    """The run's seconds per phase, and the grader's own: its checks (``checks_seconds`` is less their waits for
    facts), its measurements, and their waits for the turn."""
    grader = GRADER_PHASES.read()
    measured, waited = grader.get(MEASURE, 0.0), grader.get(TURN_WAIT, 0.0)
    checks = max(0.0, checks_seconds - measured - waited)
    return rounded_phases(run | {TURN_WAIT: run.get(TURN_WAIT, 0.0) + waited, MEASURE: measured, CHECKS: checks})


def execution_notes(execution, limits: Limits) -> list[str]:
    """What the harness had to do to the run, as the grade's notes say it."""
    notes = []
    failed = execution.start_failures
    if failed and execution.status != RunStatus.KERNEL_FAILED_TO_START:
        notes.append(
            f"the kernel failed to start {len(failed)} time{'s' if len(failed) != 1 else ''} and was started "
            f"again ({'; '.join(dict.fromkeys(failed))})"
        )
    truncated = [c.label for c in execution.cells if c.output_truncated]
    if truncated or execution.output_cut_by_task:
        where = f"from {truncated[0]} on" if truncated else f"by the end of task {execution.output_cut_by_task}"
        notes.append(
            f"output was truncated {where}: more than {limits.output_bytes_per_cell:,} bytes "
            f"in a cell or {limits.output_bytes_total:,} in all"
        )
    for task in dict.fromkeys(c.task for c in execution.cells if c.others_share is not None and c.task):
        share = timed_cells_share(execution.cells, task)
        if share is not None and share >= NOTED_SHARE:
            notes.append(
                f"other work took {share:.0%} of the processors while {task}'s timed cells ran: its timing checks"
                " allowed for the load each side met"
            )
    for cell in execution.cells:
        if count := cell.leftover_processes:
            notes.append(
                f"{cell.label} left {count} process{'es' if count != 1 else ''} running; "
                f"{'they were' if count != 1 else 'it was'} stopped"
            )
    return notes


class NotANotebook(ValueError):
    """The file cannot be graded as a notebook; the message says why."""


def read_submission(path: Path) -> nbformat.NotebookNode:
    """The submission as an nbformat 4 notebook (older versions are upgraded)."""
    if not path.is_file():
        raise NotANotebook(f"{path} is not a file")
    if path.stat().st_size > MAX_NOTEBOOK_BYTES:
        raise NotANotebook(f"{path.name} is larger than {MAX_NOTEBOOK_BYTES // 2**20} MiB")
    try:
        raw = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NotANotebook(f"{path.name} is not a notebook: it is not valid JSON ({exc})") from None
    if not isinstance(raw, dict) or "nbformat" not in raw:
        raise NotANotebook(f"{path.name} is not a notebook: it has no 'nbformat' field")
    try:
        nb = nbformat.reads(json.dumps(raw), as_version=4)
    except Exception as exc:  # nbformat raises many kinds for a malformed notebook
        raise NotANotebook(f"{path.name} could not be read as a notebook: {exc}") from None
    if not isinstance(nb.get("cells"), list):
        raise NotANotebook(f"{path.name} has no cells")
    for cell in nb.cells:
        if not isinstance(cell, dict) or cell.get("cell_type") not in ("code", "markdown", "raw"):
            raise NotANotebook(f"{path.name} has a malformed cell")
        if not isinstance(cell.get("source", ""), str):
            raise NotANotebook(f"{path.name} has a cell whose source is not text")
        cell.setdefault("metadata", {})
    return nb


def is_solution(lab: Lab, notebook: Path) -> bool:
    """Is ``notebook`` the lab's own solution, at its place in the course?"""
    solution = lab.solution_path
    return solution.is_file() and notebook.resolve() == solution.resolve()


def course_limits(limits: Limits, lab: Lab, notebook: Path, course_notebook: bool) -> Limits:
    """The run's limits: a course's own notebook's kernel keeps large blocks (``saves_memory`` off)."""
    return replace(limits, saves_memory=False) if course_notebook or is_solution(lab, notebook) else limits


def compiled_programs(lab: Lab, notebook: Path, course_notebook: bool) -> CompiledPrograms | None:
    """The lab's compiled programs, filled by its own solution while none are left, else read by it and by the
    course's own notebooks; None for a student's notebook, or with ``AUTOGRADER_COMPILED_PROGRAMS`` off."""
    solution = lab.solution_path
    if switched_off(COMPILED_PROGRAMS_VARIABLE) or not solution.is_file():
        return None
    own = is_solution(lab, notebook)
    if not (own or course_notebook):
        return None
    try:
        reads = CompiledPrograms(compiled_programs_folder(lab.id, solution))
    except OSError:
        return None
    return CompiledPrograms(reads.folder, fill=True) if own and not reads.left() else reads


def _max_score(lab_id: str | None) -> float:
    try:
        return load_lab(lab_id).max_score if lab_id else 0.0
    except LabError:
        return 0.0


def _by_task(tasks, checks: list[CheckResult], public_only: bool) -> tuple[TaskResult, ...]:
    """Checks grouped by task; a self-check (public checks only) is out of the public points alone."""
    results = []
    for task in tasks:
        mine = tuple(c for c in checks if c.task == task.id)
        results.append(TaskResult(task.id, sum(c.points for c in mine) if public_only else task.points, mine))
    return tuple(results)


def warm_here(lab_id: str) -> WarmResult:
    """The lab's cached references (``autograder warm``), computed in this process set up as a grader's first,
    held like a check in flight: another grading's timed task waits for it."""
    configure_grader_process()  # before anything imports JAX
    from autograder.caches import warm_lab

    with checks_running():
        return warm_lab(lab_id)
