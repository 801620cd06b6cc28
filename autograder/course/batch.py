"""``autograder batch``: grading a whole class on Dask, in parallel, resumable, with feedback pages.

Each submission is graded on a Dask worker (a local cluster sized to the machine by default, or an
existing cluster given by its scheduler's address) in its own fresh, sandboxed kernel, which the
worker started while it graded the submission before (kernel_pool.py). This process writes each
student's results atomically as they arrive and rewrites the CSV gradebook after each, so an
interrupted batch loses only what was in flight; running the same command again grades only
the students without a saved result (and those named by ``--regrade``). Every run applies the
instructor's overrides and late policy to the saved results and rewrites what they change, writes the
similarity report, and rewrites the summaries, even when nothing is left to grade. Before the first
submission is dispatched, one worker computes the lab's cached references (``autograder warm``), so
that the others read them from the machine's cache instead of each computing them. This module imports
no JAX: a worker imports it first, and the grading and warming functions set up the devices before
anything imports JAX.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.course.batch_timing import BatchTiming
from autograder.course.collect import CollectedSubmission, collect_submissions
from autograder.course.gradebook import is_done, load_results, log_grading
from autograder.grading import GradeResult, GradeStatus
from autograder.run import Limits

if TYPE_CHECKING:
    from autograder.course.late import LatePolicy

MAX_SUBMISSION_BYTES = 50 * 2**20


@dataclass(frozen=True)
class BatchOptions:
    lab: str
    out: Path
    workers: int | None = None  # local cluster size; default: one per core
    scheduler: str | None = None  # address of an existing Dask scheduler
    limits: Limits = Limits()  # each submission's; Dask hands them to the workers as plain data
    regrade: tuple[str, ...] = ()  # students graded again although they have a result
    regrade_all: bool = False
    late_policy: LatePolicy | None = None  # saved in OUT and applied; None keeps OUT's saved one
    drop_late_policy: bool = False  # forget OUT's saved late policy
    similarity: bool = True  # write OUT/similarity.html


class BatchError(ValueError):
    """Options that do not fit the class (a student to regrade who has no submission)."""


def grade_on_worker(student: str, filename: str, data: bytes, lab: str, limits_data: dict) -> dict:
    """Grade one submission where this runs (a Dask worker) within the limits ``limits_data`` gives
    (``Limits.to_dict``); returns the result as plain data."""
    from autograder.run import configure_grader_process, worker_pool

    configure_grader_process()
    from autograder.grading import grade_notebook

    limits = Limits.from_dict(limits_data)
    with tempfile.TemporaryDirectory(prefix="autograder-submission-") as folder:
        path = Path(folder) / filename
        path.write_bytes(data)
        try:
            result = grade_notebook(path, lab, limits=limits, execute=worker_pool().execute)
        except Exception as exc:  # the grader's own failure (e.g. no sandbox here): retried by a rerun
            result = GradeResult(
                lab, filename, GradeStatus.GRADER_ERROR, f"{type(exc).__name__}: {exc}", 0.0, seed=None
            )
    return result.to_dict()


def release_kernels() -> None:
    """Shut down this worker's spare kernel (run on every worker once the batch has no more work)."""
    import sys

    pool = sys.modules.get("autograder.run.kernel_pool")  # imported only where something was graded
    if pool is not None:
        pool.close_worker_pool()


def warm_on_worker(lab: str) -> str:
    """Compute and store the lab's cached references where this runs (a Dask worker); returns a summary."""
    from autograder.run import configure_grader_process

    configure_grader_process()
    from autograder.caches import warm_lab

    return warm_lab(lab).summary()


def warm_references(client, lab: str, progress: GradingProgress) -> None:
    """Warm the lab's references on one worker and wait: every grading then reads them from disk. A
    failure is only reported: each grading computes what it lacks."""
    try:
        summary = client.submit(warm_on_worker, lab, key=f"warm-{lab}-{time.time_ns()}", pure=False).result()
    except Exception as exc:
        summary = f"the lab's references could not be computed ahead: {type(exc).__name__}: {exc}"
    progress.progress.console.print(f"references: {summary}")


def _read(path: Path) -> bytes | None:
    with open(path, "rb") as handle:
        data = handle.read(MAX_SUBMISSION_BYTES + 1)
    return None if len(data) > MAX_SUBMISSION_BYTES else data


def _unreadable(submission: CollectedSubmission, lab: str, reason: str, max_score: float) -> GradeResult:
    return GradeResult(lab, str(submission.path or submission.student), GradeStatus.NOT_A_NOTEBOOK, reason, max_score)


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


def dask_client(workers: int | None = None, scheduler: str | None = None):
    """(client, local cluster or None): the cluster at ``scheduler``, else a local one of ``workers``
    processes (default: one per core). ``close_client`` releases both."""
    import logging

    from dask.distributed import Client, LocalCluster

    logging.getLogger("distributed").setLevel(logging.ERROR)
    if scheduler:
        return Client(scheduler, timeout=30), None
    workers = workers or max(1, os.cpu_count() or 1)
    cluster = LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        memory_limit=0,
        dashboard_address=None,
        death_timeout=10,
    )
    return Client(cluster), cluster


def close_client(client, cluster) -> None:
    """Shut down the workers' spare kernels, then the client and the local cluster (either may be None)."""
    if client is not None:
        try:
            client.run(release_kernels)
        except Exception:  # a worker gone: its kernels went with it (they die with their parent)
            pass
        client.close(timeout=10)
    if cluster is not None:
        cluster.close(timeout=10)


def _prepare(options: BatchOptions, lab, submissions: list[CollectedSubmission]):
    """Check the options against the class, save the late policy, and bring the saved outputs up to date
    with the adjustments; returns (adjustments, saved results, submissions to grade)."""
    from autograder.course.adjustments import Adjustments, refresh
    from autograder.course.late import save_policy, with_submission_time

    by_student = {s.student: s for s in submissions}
    unknown = sorted(set(options.regrade) - set(by_student))
    if unknown:
        raise BatchError(
            f"--regrade: no submission for {', '.join(unknown)} in this class ({len(by_student)} students)"
        )
    saved = load_results(options.out)
    task_points = {t.id: t.points for t in lab.tasks}
    adjustments = Adjustments.load(options.out, task_points, set(by_student) | set(saved), options.late_policy)
    if options.late_policy is not None or options.drop_late_policy:
        save_policy(options.out, options.late_policy)
        if options.drop_late_policy:
            adjustments = replace(adjustments, policy=None)
    for student, result in saved.items():  # results saved before submission times were kept
        if student in by_student and result.submitted_at is None:
            submission = by_student[student]
            saved[student] = with_submission_time(result, submission.path, submission.created_at)
    refresh(options.out, adjustments, saved)
    regrade = set(by_student) if options.regrade_all else set(options.regrade)
    todo = [s for s in submissions if s.student in regrade or not is_done(saved.get(s.student))]
    return adjustments, saved, todo


def _write_similarity(options: BatchOptions, lab, submissions: list[CollectedSubmission]) -> None:
    from autograder.course.gradebook import write_atomically
    from autograder.course.similarity import SIMILARITY_FILE, find_similar, similarity_html

    report = find_similar(lab.template, {s.student: s.path for s in submissions if s.path is not None})
    write_atomically(options.out / SIMILARITY_FILE, similarity_html(report, lab.id))


def run_batch(source: Path, options: BatchOptions) -> dict[str, GradeResult]:
    """Grade every submission under ``source`` not graded yet (or named to regrade) into ``options.out``,
    apply the overrides and the late policy, and write every output; returns the class's results."""
    from dask.distributed import as_completed

    from autograder.course.adjustments import Adjustments, publish_student, publish_summaries, refresh
    from autograder.course.late import with_submission_time
    from autograder.lab import load_lab

    lab = load_lab(options.lab)
    task_ids = [t.id for t in lab.tasks]
    options.out.mkdir(parents=True, exist_ok=True)
    submissions = collect_submissions(source, options.lab)
    adjustments, saved, todo = _prepare(options, lab, submissions)
    publish_summaries(options.out, options.lab, task_ids, saved)
    limits = options.limits.to_dict()
    timing = BatchTiming(None if options.scheduler else options.workers or max(1, os.cpu_count() or 1))

    def record(submission: CollectedSubmission, result: GradeResult) -> None:
        publishing = time.monotonic()
        result = with_submission_time(result, submission.path, submission.created_at)
        result = adjustments.apply(submission.student, result)
        kind = "regraded" if is_done(saved.get(submission.student)) else "graded"
        publish_student(options.out, submission.student, result)
        log_grading(options.out, submission.student, result, kind)
        saved[submission.student] = result
        publish_summaries(options.out, options.lab, task_ids, saved)
        timing.add(result, time.monotonic() - publishing)
        progress.advance(result)

    todo_students = {s.student for s in todo}
    already_failed = sum(
        saved[s.student].status != GradeStatus.GRADED
        for s in submissions
        if s.student not in todo_students and is_done(saved.get(s.student))
    )
    with GradingProgress(len(submissions), len(submissions) - len(todo), already_failed) as progress:
        client, cluster = (None, None) if not todo else dask_client(options.workers, options.scheduler)
        futures = {}
        try:
            if any(s.path is not None for s in todo):
                warming = time.monotonic()
                warm_references(client, options.lab, progress)
                timing.warming = time.monotonic() - warming
            for submission in todo:
                data = None if submission.path is None else _read(submission.path)
                if data is None:
                    reason = submission.problem or f"larger than {MAX_SUBMISSION_BYTES // 2**20} MiB"
                    record(submission, _unreadable(submission, options.lab, reason, lab.max_score))
                    continue
                assert client is not None  # started above: there is work to do
                future = client.submit(
                    grade_on_worker,
                    submission.student,
                    submission.path.name,
                    data,
                    options.lab,
                    limits,
                    key=f"grade-{submission.student}-{time.time_ns()}",
                    pure=False,
                )
                futures[future] = submission
            if options.similarity:  # needs no grade: written while the workers grade
                _write_similarity(options, lab, submissions)
            for future in as_completed(futures) if futures else ():
                submission = futures[future]
                try:
                    result = GradeResult.from_dict(future.result())
                except Exception as exc:  # the worker itself died or lost the task
                    result = GradeResult(
                        options.lab,
                        str(submission.path),
                        GradeStatus.GRADER_ERROR,
                        f"{type(exc).__name__}: {exc}",
                        lab.max_score,
                    )
                record(submission, result)
        finally:
            for future in futures:
                future.cancel()
            close_client(client, cluster)
            if todo:
                timing.write(options.out)
    # overrides recorded while this run graded (``autograder override`` in another shell) apply now
    students = {s.student for s in submissions} | set(saved)
    refresh(options.out, Adjustments.load(options.out, adjustments.task_points, students), saved)
    publish_summaries(options.out, options.lab, task_ids, saved)
    return saved
