"""``autograder batch``: a whole class graded on Dask. Each result and the summaries are written atomically as
it arrives, so an interrupted batch loses only what was in flight and the same command again grades only
the students without a saved result (and ``--regrade``'s); the adjustments are applied on every run."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course.adjustments import Adjustments, publish_student, publish_summaries, refresh
from autograder.course.collect import CollectedSubmission, collect_submissions
from autograder.course.dask_cluster import (
    GradingProgress,
    close_client,
    dask_client,
    default_workers,
    grade_on_worker,
    last_gradings,
    prepare_workers,
    report_warming,
    start_warming,
)
from autograder.course.gradebook import is_done, load_results, log_grading
from autograder.course.late import LatePolicy, save_policy, with_submission_time
from autograder.course.lms_gradebook import lms_csv
from autograder.course.lms_submissions import LmsError, LmsRoster, load_roster, save_roster
from autograder.grading import GradeResult, GradeStatus, write_atomically
from autograder.run import Limits

MAX_SUBMISSION_BYTES = 50 * 2**20
TIMING_FILE = "batch-timing.json"


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
    gradebook: str | None = None  # also write this LMS's grade import ("canvas", "moodle"); kept in OUT
    lms_template: Path | None = None  # that LMS's own export to fill (its gradebook or grading worksheet)


@dataclass
class BatchTiming:
    """Where the batch's time went (``OUT/batch-timing.json``): what grading the class cost, for an instructor
    and bench/batch_cost.py."""

    workers: int | None
    started: float = field(default_factory=time.monotonic)
    graded: int = 0
    phases: dict[str, float] = field(default_factory=dict)  # summed over the grades of this run
    warming: float = 0.0  # the references computed ahead, on the workers
    publishing: float = 0.0  # each result's feedback page, gradebook row and class summaries, here
    worker_cores: dict[str, tuple[int, ...]] = field(default_factory=dict)  # each worker's, as it graded
    longest_wait: dict = field(default_factory=dict)  # the grade that waited longest for others' timed turns

    def add(self, result: GradeResult, publishing: float) -> None:
        self.graded += 1
        self.publishing += publishing
        for phase, seconds in result.phases.items():
            self.phases[phase] = self.phases.get(phase, 0.0) + seconds
        waited = result.turn_waits.get("seconds", 0.0)
        if waited > self.longest_wait.get("seconds", 0.0):
            self.longest_wait = {"notebook": result.notebook, **result.turn_waits}

    def to_dict(self) -> dict:
        return {
            "wall": round(time.monotonic() - self.started, 3),
            "workers": self.workers,
            "graded": self.graded,
            "warming": round(self.warming, 3),
            "publishing": round(self.publishing, 3),
            "worker_cores": self.worker_cores,
            "phases": {phase: round(seconds, 3) for phase, seconds in self.phases.items()},
            "longest_wait": self.longest_wait,
        }


class BatchError(ValueError):
    """Options that do not fit the class (a student to regrade who has no submission)."""


def _read(path: Path) -> bytes | None:
    with open(path, "rb") as handle:
        data = handle.read(MAX_SUBMISSION_BYTES + 1)
    return None if len(data) > MAX_SUBMISSION_BYTES else data


def _ungraded(submission: CollectedSubmission, lab, status: GradeStatus, reason: str) -> GradeResult:
    return GradeResult(lab.id, str(submission.path or submission.student), status, reason, lab.max_score)


def _prepare(options: BatchOptions, lab, submissions: list[CollectedSubmission]):
    """(adjustments, saved results brought up to date with them, submissions to grade)."""
    by_student = {s.student: s for s in submissions}
    unknown = sorted(set(options.regrade) - set(by_student))
    if unknown:
        raise BatchError(
            f"--regrade: no submission for {', '.join(unknown)} in this class ({len(by_student)} students)"
        )
    _save_lms_roster(options, lab.id, submissions)
    saved = load_results(options.out)
    task_points = {t.id: t.points for t in lab.tasks}
    if options.late_policy is not None or options.drop_late_policy:
        save_policy(options.out, options.late_policy)
    adjustments = Adjustments.load(options.out, task_points, set(by_student) | set(saved))
    for student, result in saved.items():  # results saved before submission times were kept
        if student in by_student and result.submitted_at is None:
            submission = by_student[student]
            saved[student] = with_submission_time(result, submission.path, submission.created_at, _lms_note(submission))
    refresh(options.out, options.lab, adjustments, saved)
    regrade = set(by_student) if options.regrade_all else set(options.regrade)
    todo = [s for s in submissions if s.student in regrade or not is_done(saved.get(s.student))]
    return adjustments, saved, todo


def _lms_note(submission: CollectedSubmission) -> str | None:
    return None if submission.lms is None else submission.lms.time_note


def _save_lms_roster(options: BatchOptions, lab: str, submissions: list[CollectedSubmission]) -> None:
    """Keep in OUT who each student is in the LMS and which LMS's grade import to write (``LmsError``)."""
    previous = load_roster(options.out) or LmsRoster()
    gradebook = options.gradebook or previous.gradebook
    if options.lms_template is not None and gradebook is None:
        raise LmsError("--lms-template needs --gradebook canvas or moodle")
    template = previous.template if gradebook == previous.gradebook else None
    if options.lms_template is not None:
        try:
            template = options.lms_template.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise LmsError(f"--lms-template {options.lms_template}: cannot be read ({exc})") from None
    students = previous.students | {s.student: s.lms for s in submissions if s.lms is not None}
    if options.gradebook and not any(s.lms is not None and s.lms.lms == options.gradebook for s in submissions):
        raise LmsError(
            f"--gradebook {options.gradebook}: these submissions are not {options.gradebook.title()}'s download "
            f"(no file or folder is named as {options.gradebook.title()} names a submission)"
        )
    if template is not None:  # a template not the LMS's export is refused now
        lms_csv(gradebook, lab, 1.0, [], template)
    if students or gradebook:
        save_roster(options.out, LmsRoster(students, gradebook, template))


def _write_similarity(options: BatchOptions, lab, submissions: list[CollectedSubmission]) -> None:
    from autograder.course.similarity import SIMILARITY_FILE, find_similar, similarity_html

    report = find_similar(lab.template, {s.student: s.path for s in submissions if s.path is not None})
    write_atomically(options.out / SIMILARITY_FILE, similarity_html(report, lab.id))


def run_batch(source: Path, options: BatchOptions) -> dict[str, GradeResult]:
    """Grade the submissions under ``source`` not graded yet (or to regrade) into ``options.out``; the results."""
    from dask.distributed import as_completed

    from autograder.fairness import process_cores
    from autograder.lab import load_lab

    lab = load_lab(options.lab)
    task_ids = [t.id for t in lab.tasks]
    options.out.mkdir(parents=True, exist_ok=True)
    submissions = collect_submissions(source, options.lab)
    adjustments, saved, todo = _prepare(options, lab, submissions)
    limits = options.limits.to_dict()
    timing = BatchTiming(None if options.scheduler else options.workers or default_workers())

    def record(submission: CollectedSubmission, result: GradeResult) -> None:
        publishing = time.monotonic()
        result = with_submission_time(result, submission.path, submission.created_at, _lms_note(submission))
        result = adjustments.apply(submission.student, result)
        kind = "regraded" if is_done(saved.get(submission.student)) else "graded"
        publish_student(options.out, submission.student, result)
        log_grading(options.out, submission.student, result, kind)
        saved[submission.student] = result
        publish_summaries(options.out, options.lab, task_ids, saved)
        timing.add(result, time.monotonic() - publishing)
        progress.advance(result)

    todo_students = {s.student for s in todo}  # every other student has a result that is done
    already_failed = sum(
        saved[s.student].status != GradeStatus.GRADED for s in submissions if s.student not in todo_students
    )
    # the submissions graded on the cluster; those without a file are recorded here
    gradable = {s.student: index for index, s in enumerate(s for s in todo if s.path is not None)}
    with GradingProgress(len(submissions), len(submissions) - len(todo), already_failed) as progress:
        client, cluster = dask_client(options.workers, options.scheduler) if gradable else (None, None)
        futures = {}
        prepared: list = []  # kept while the batch runs
        warming = None  # the references' warming, on the first worker free
        last = range(0)
        try:
            if client is not None:
                timing.worker_cores = client.run(process_cores)  # the cores each worker may run on
                prepared = prepare_workers(client, options.lab, limits)
                warming = start_warming(client, options.lab)
                last = last_gradings(client, len(gradable))
            for submission in todo:
                data = None if submission.path is None else _read(submission.path)
                if data is None:
                    reason = submission.problem or f"larger than {MAX_SUBMISSION_BYTES // 2**20} MiB"
                    record(submission, _ungraded(submission, lab, GradeStatus.NOT_A_NOTEBOOK, reason))
                    continue
                assert client is not None  # started above: there is work to do
                last_one = gradable[submission.student] in last
                arguments = (submission.student, submission.path.name, data, options.lab, limits, last_one)
                key = f"grade-{submission.student}-{time.time_ns()}"
                futures[client.submit(grade_on_worker, *arguments, key=key, pure=False)] = submission
            if options.similarity:  # needs no grade: written while the workers grade
                _write_similarity(options, lab, submissions)
            if warming is not None:
                timing.warming = report_warming(warming, progress)
            for future in as_completed(futures) if futures else ():
                submission = futures[future]
                try:
                    result = GradeResult.from_dict(future.result())
                except Exception as exc:  # the worker itself died or lost the task
                    result = _ungraded(submission, lab, GradeStatus.GRADER_ERROR, f"{type(exc).__name__}: {exc}")
                record(submission, result)
        finally:
            for future in [*futures, *prepared, *([] if warming is None else [warming])]:
                future.cancel()
            close_client(client, cluster)
            if todo:
                write_atomically(options.out / TIMING_FILE, json.dumps(timing.to_dict(), indent=2) + "\n")
    # overrides recorded while this run graded (``autograder override`` in another shell) apply now
    students = {s.student for s in submissions} | set(saved)
    refresh(options.out, options.lab, Adjustments.load(options.out, adjustments.task_points, students), saved)
    return saved
