"""The commands of a class's term: batch, override, similarity, warm, and Gradescope's: gradescope,
student-wheel and gradescope-run, each with its options."""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

from autograder.cli import options

LMS_CHOICES = ("canvas", "moodle")  # the LMSs whose downloads and grade imports a batch reads and writes


def add_batch(commands: argparse._SubParsersAction) -> None:
    batch = commands.add_parser("batch", help="grade a class: a folder or zip of submissions")
    batch.add_argument(
        "submissions",
        help="a folder of notebooks, STUDENT/ folders, or a zip (Gradescope's export, Canvas's and Moodle's "
        "downloads of all submissions too)",
    )
    batch.add_argument("--lab", required=True)
    batch.add_argument("--out", required=True, help="where results.json, feedback.html, grades.csv and report.html go")
    options.add_cluster_options(batch)
    options.add_limit_options(batch)
    batch.add_argument(
        "--regrade",
        nargs="+",
        metavar="STUDENT",
        help="grade these students again, replacing their results (the others are kept)",
    )
    batch.add_argument("--regrade-all", action="store_true", help="grade every submission again")
    batch.add_argument(
        "--due",
        help="due date, e.g. 2026-12-01T23:59 (local time) or 2026-12-01T23:59-08:00; "
        "the late policy is saved in OUT and applies to later runs too",
    )
    batch.add_argument(
        "--late-penalty",
        help="percent of the score taken off per day or hour late (started), e.g. 10%%/day or 2%%/hour",
    )
    batch.add_argument("--late-cap", help="the most the late penalty takes off (default 100%%)")
    batch.add_argument("--grace", help="lateness forgiven, e.g. 15m, 2h (default none)")
    batch.add_argument("--no-late-policy", action="store_true", help="forget the late policy saved in OUT")
    batch.add_argument(
        "--gradebook",
        choices=LMS_CHOICES,
        help="also write the LMS's grade import, OUT/canvas-grades.csv or OUT/moodle-grades.csv, from its "
        "download of all submissions given as SUBMISSIONS (kept in OUT for later runs and overrides); the "
        "grade is the final score of grades.csv. Without --lms-template, Canvas's SIS User ID, SIS Login ID "
        "and Section are left blank and its assignment column is named for the lab, and Moodle's Email "
        "address, Status, Grade can be changed, Last modified (submission), Last modified (grade) and "
        "Feedback comments are left blank",
    )
    batch.add_argument(
        "--lms-template",
        metavar="FILE",
        help="the LMS's own export to fill: Canvas's Gradebook export (the lab's assignment alone, or named "
        "for the lab), Moodle's grading worksheet; each student's grade is filled in, scaled to its points",
    )
    batch.add_argument("--no-similarity", action="store_true", help="do not write similarity.html")
    options.add_stale_assignment_option(batch, "grade the class")
    batch.set_defaults(run=cmd_batch)


def cmd_batch(args) -> int:
    if options.refuses_stale(args, args.lab):  # before any worker starts: they grade with the same notebook
        return 2
    from rich.console import Console

    from autograder.course import (
        BatchError,
        BatchOptions,
        CollectError,
        LatePolicyError,
        LmsError,
        OverrideError,
        run_batch,
    )
    from autograder.lab import LabError
    from autograder.run import SandboxUnavailable, sandbox_level

    if not args.no_sandbox and args.scheduler is None:  # a local cluster's workers choose as this process does
        try:
            sandbox_level()
        except SandboxUnavailable as exc:
            return options.stopped(exc)
    try:
        policy = _late_policy(args)
        if policy is not None and args.no_late_policy:
            raise LatePolicyError("--no-late-policy cannot go with --due")
        batch = BatchOptions(
            lab=args.lab,
            out=Path(args.out),
            workers=args.workers,
            scheduler=args.scheduler,
            limits=options.limits_from_args(args),
            regrade=tuple(args.regrade or ()),
            regrade_all=args.regrade_all,
            late_policy=policy,
            drop_late_policy=args.no_late_policy,
            similarity=not args.no_similarity,
            gradebook=args.gradebook,
            lms_template=Path(args.lms_template) if args.lms_template else None,
        )
        results = run_batch(Path(args.submissions), batch)
    except (CollectError, LabError, BatchError, LatePolicyError, OverrideError, LmsError) as exc:
        return options.stopped(exc)
    except KeyboardInterrupt:
        print("interrupted: what was graded is saved; run the same command again to grade the rest", file=sys.stderr)
        return 130
    statuses = Counter(result.status for result in results.values())
    summary = ", ".join(f"{n} {status}" for status, n in sorted(statuses.items()))
    overrides = sum(len(r.overrides) for r in results.values())
    penalised = sum(r.penalty > 0 for r in results.values())
    Console().print(
        f"{len(results)} submissions in {batch.out}: {summary}; {overrides} overrides, {penalised} late penalties"
    )
    return 0


def _late_policy(args):
    """The late policy the options give, or None; raises LatePolicyError for a bad or partial one."""
    from autograder.course import LatePolicyError, build_policy

    if args.due is None:
        if args.late_penalty or args.late_cap or args.grace:
            raise LatePolicyError("--late-penalty, --late-cap and --grace need --due")
        return None
    if not args.late_penalty:
        raise LatePolicyError("--due needs --late-penalty, e.g. 10%/day (0%/day only reports lateness)")
    return build_policy(args.due, args.late_penalty, args.late_cap or "100%", args.grace or "0")


def add_override(commands: argparse._SubParsersAction) -> None:
    override = commands.add_parser("override", help="set one task's points for one student, with a comment")
    override.add_argument("out", help="the batch's output folder")
    override.add_argument("student")
    override.add_argument("task", help="a task id, e.g. t3")
    override.add_argument("points", help="the task's points, or 'auto' for the automatic points again")
    override.add_argument("--comment", required=True, help="why (the student reads it)")
    override.add_argument("--grader", help="who (default: this user)")
    override.set_defaults(run=cmd_override)


def cmd_override(args) -> int:
    import getpass

    from autograder.course import LatePolicyError, OverrideError, record_override
    from autograder.lab import LabError

    try:
        before, after = record_override(
            Path(args.out), args.student, args.task, args.points, args.comment, args.grader or getpass.getuser()
        )
    except (OverrideError, LatePolicyError, LabError) as exc:
        return options.stopped(exc)
    task = next(t for t in after.tasks if t.task == args.task)
    print(
        f"{args.student} {args.task}: {task.score:g} / {task.max_score:g} (the checks gave {task.auto_score:g}); "
        f"score {before.score:g} → {after.score:g}"
    )
    return 0


def add_similarity(commands: argparse._SubParsersAction) -> None:
    similarity = commands.add_parser("similarity", help="write similarity.html for a class without grading it")
    similarity.add_argument("submissions", help="as for batch")
    similarity.add_argument("--lab", required=True)
    similarity.add_argument("--out", required=True, help="the folder similarity.html goes in")
    similarity.set_defaults(run=cmd_similarity)


def cmd_similarity(args) -> int:
    from autograder.course import SIMILARITY_FILE, CollectError, collect_submissions, find_similar, similarity_html
    from autograder.grading import write_atomically
    from autograder.lab import LabError, load_lab

    try:
        lab = load_lab(args.lab)
        submissions = collect_submissions(Path(args.submissions), args.lab)
        report = find_similar(lab.template, {s.student: s.path for s in submissions if s.path is not None})
    except (CollectError, LabError) as exc:
        return options.stopped(exc)
    path = Path(args.out) / SIMILARITY_FILE
    write_atomically(path, similarity_html(report, lab.id))
    print(f"{report.flagged} pairs flagged among {report.students} submissions: {path}")
    return 0


def add_warm(commands: argparse._SubParsersAction) -> None:
    warm = commands.add_parser("warm", help="compute and store the labs' reference results (kept on this machine)")
    warm.add_argument("labs", nargs="*", help="lab ids (default: every lab)")
    warm.set_defaults(run=cmd_warm)


def cmd_warm(args) -> int:
    from autograder.caches import warm_labs
    from autograder.lab import LabError, lab_ids, load_lab

    try:
        labs = [load_lab(lab_id).id for lab_id in args.labs or lab_ids()]
    except LabError as exc:
        return options.stopped(exc)
    warm_labs(labs)
    return 0


def add_gradescope(commands: argparse._SubParsersAction) -> None:
    from autograder.course import GRADESCOPE_LIMITS, HIDDEN_VISIBILITIES, GradescopeConfig

    defaults = GradescopeConfig("lab")
    gradescope = commands.add_parser(
        "gradescope",
        help="build the autograder zip of a Gradescope programming assignment",
        description="Build the autograder zip of a Gradescope programming assignment. Keep "
        "--timeout under the assignment's autograder timeout, so that the "
        "results are written before Gradescope ends the run.",
    )
    gradescope.add_argument("lab", help="the lab id")
    gradescope.add_argument("--out", default="autograder.zip", help="where to write the zip (default autograder.zip)")
    gradescope.add_argument(
        "--hidden-visibility",
        choices=HIDDEN_VISIBILITIES,
        default=defaults.hidden_visibility,
        help=f"when students see hidden checks (default {defaults.hidden_visibility})",
    )
    gradescope.add_argument(
        "--try",
        dest="try_submission",
        metavar="SUBMISSION",
        help="then grade this notebook (or folder) with the zip as Gradescope would: setup.sh and run_autograder "
        "in a scratch folder, no system folder touched; prints the results",
    )
    options.add_limit_options(gradescope, GRADESCOPE_LIMITS, ("--timeout", "--cell-timeout", "--memory-gib"))
    options.add_stale_assignment_option(gradescope, "build the zip, which carries the student notebook,")
    gradescope.set_defaults(run=cmd_gradescope)


def cmd_gradescope(args) -> int:
    if options.refuses_stale(args, args.lab):  # the zip carries the student notebook every submission is graded with
        return 2
    if args.try_submission and not Path(args.try_submission).exists():  # before the zip is built
        print(f"autograder: {args.try_submission} does not exist: give the notebook to try the zip on", file=sys.stderr)
        return 2
    from autograder.course import (
        GRADESCOPE_LIMITS,
        GradescopeConfig,
        GradescopeError,
        StudentPackageError,
        build_autograder_zip,
        build_student_wheel,
    )
    from autograder.lab import LabError

    try:
        config = GradescopeConfig(args.lab, args.hidden_visibility, options.limits_from_args(args, GRADESCOPE_LIMITS))
        out = build_autograder_zip(args.lab, Path(args.out), config)
        wheel = build_student_wheel([args.lab], out.resolve().parent)
    except (GradescopeError, LabError, StudentPackageError) as exc:
        return options.stopped(exc)
    print(f"{out} written: upload it as the autograder of a Gradescope programming assignment")
    print(f"{wheel} written: give it to the students (their in-notebook checks; no solution, no hidden check)")
    if args.try_submission:
        from autograder.course import try_zip

        print(
            f"trying {out} on {args.try_submission} (setup.sh and run_autograder in a scratch folder) ...", flush=True
        )
        try:
            summary = try_zip(out, Path(args.try_submission))
        except GradescopeError as exc:
            return options.stopped(exc)
        print(summary)
    return 0


def add_student_wheel(commands: argparse._SubParsersAction) -> None:
    student_wheel = commands.add_parser(
        "student-wheel",
        help="build the students' wheel: ag.check and the labs' public checks, with no solution and no hidden check",
    )
    student_wheel.add_argument("labs", nargs="*", help="the labs it checks (default: every lab)")
    student_wheel.add_argument("--out", default=".", help="the folder to write the wheel into (default .)")
    student_wheel.set_defaults(run=cmd_student_wheel)


def cmd_student_wheel(args) -> int:
    from autograder.course import StudentPackageError, build_student_wheel

    try:
        wheel = build_student_wheel(args.labs or None, Path(args.out))
    except StudentPackageError as exc:
        return options.stopped(exc)
    print(f"{wheel} written: give it to the students (their in-notebook checks; no solution, no hidden check)")
    return 0


def add_gradescope_run(commands: argparse._SubParsersAction) -> None:
    from autograder.course import DEFAULT_ROOT, ROOT_VARIABLE

    gradescope_run = commands.add_parser(
        "gradescope-run", help="grade the submission in Gradescope's container (run_autograder does)"
    )
    gradescope_run.add_argument(
        "--root",
        default=os.environ.get(ROOT_VARIABLE, DEFAULT_ROOT),
        help=f"Gradescope's folder (default ${ROOT_VARIABLE}, else {DEFAULT_ROOT})",
    )
    gradescope_run.set_defaults(run=cmd_gradescope_run)


def cmd_gradescope_run(args) -> int:
    from autograder.course import run_gradescope

    run_gradescope(Path(args.root))
    return 0
