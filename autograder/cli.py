"""The ``autograder`` command: assign, grade, check, batch, override, similarity, warm, mutants, test."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import NoReturn

from autograder.run import TRUSTED_LIMITS, Limits, ResourceLimits, configure_grader_process

LIMIT_FLAGS = ("--timeout", "--cell-timeout", "--memory-gib", "--no-sandbox")


def _limit_fields() -> dict[str, tuple[type, dataclasses.Field]]:
    """Each limit's flag: the dataclass whose field it sets (``Limits``, or its sandbox's ``ResourceLimits``)
    and that field, which declares the flag's help and unit (run/limits.py)."""
    return {
        f.metadata["flag"]: (owner, f)
        for owner in (Limits, ResourceLimits)
        for f in dataclasses.fields(owner)
        if "flag" in f.metadata
    }


def _holder(limits: Limits, owner: type) -> Limits | ResourceLimits | None:
    """The object of ``limits`` that holds ``owner``'s fields: the limits, or their sandbox."""
    return limits if isinstance(limits, owner) else limits.sandbox


def add_limit_options(
    parser: argparse.ArgumentParser, defaults: Limits = Limits(), flags: tuple[str, ...] = LIMIT_FLAGS
) -> None:
    """Add the limits' options ``flags`` to ``parser``, with their fields' help and, as defaults, the values
    ``defaults`` holds, in the flags' units."""
    fields = _limit_fields()
    for flag in flags:
        owner, field = fields[flag]
        if field.name == "sandbox":  # a switch: the kernel runs without its sandbox
            parser.add_argument(flag, action="store_true", help=field.metadata["help"])
            continue
        default = getattr(_holder(defaults, owner), field.name) / field.metadata["unit"]
        parser.add_argument(flag, type=float, default=default, help=f"{field.metadata['help']} (default {default:g})")


def limits_from_args(args: argparse.Namespace, defaults: Limits = Limits()) -> Limits:
    """``defaults`` with the values of the limits' options (``add_limit_options``) that ``args`` holds."""
    values: dict[type, dict] = {Limits: {}, ResourceLimits: {}}
    for flag, (owner, field) in _limit_fields().items():
        dest = flag.removeprefix("--").replace("-", "_")
        if field.name != "sandbox" and hasattr(args, dest):
            kind = type(getattr(_holder(defaults, owner), field.name))  # seconds as floats, bytes as ints
            values[owner][field.name] = kind(getattr(args, dest) * field.metadata["unit"])
    sandbox = defaults.sandbox
    if sandbox is not None:
        sandbox = None if getattr(args, "no_sandbox", False) else dataclasses.replace(sandbox, **values[ResourceLimits])
    return dataclasses.replace(defaults, **values[Limits], sandbox=sandbox)


def add_cluster_options(parser: argparse.ArgumentParser) -> None:
    """Where a command that grades many notebooks grades them: local Dask workers, or an existing cluster."""
    parser.add_argument("--workers", type=int, help="local Dask workers (default: one per core)")
    parser.add_argument("--scheduler", help="address of an existing Dask scheduler, e.g. tcp://host:8786")


def cmd_assign(args) -> int:
    from autograder.authoring import assign_lab
    from autograder.lab import lab_ids, load_lab

    stale, to_verify = [], []
    for lab_id in args.labs or lab_ids():
        lab = load_lab(lab_id)
        if not lab.solution_path.is_file():
            print(f"{lab_id}: no solution notebook at {lab.solution_path}", file=sys.stderr)
            return 2
        before = lab.assignment_path.read_bytes() if lab.assignment_path.is_file() else None
        outcome = assign_lab(lab.solution_path, lab.assignment_path, lab_id, check=args.check)
        if outcome.changed:
            stale.append(outcome.path)
        verify = args.verify if args.check else (outcome.changed and not args.no_verify)
        if not (verify and not args.check):  # a notebook to verify is said written, or not, once verified
            print(f"{outcome.path} {('is stale' if args.check else 'written') if outcome.changed else 'is up to date'}")
        if verify:
            to_verify.append((lab, before))
    if args.check and stale:
        print("assignments/ does not match solutions/: run `autograder assign`", file=sys.stderr)
        return 1
    return _verify_assigned(to_verify, restore=not args.check)


def cmd_new_lab(args) -> int:
    from autograder.authoring import NewLabError, scaffold_lab

    try:
        written = scaffold_lab(args.lab, args.tasks)
    except NewLabError as exc:
        print(f"autograder: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}")
    print(
        f"next: autograder assign {args.lab}  (grades the solution and the student notebook); then edit the "
        f"lab with docs/writing-a-lab.md, its known grades in tests/labs/{args.lab}_submissions.py, and run "
        f"autograder test {args.lab}"
    )
    return 0


def cmd_labs(args) -> int:
    from autograder.lab import LabError, bundled_lab_ids, course_in_view, lab_ids, load_lab

    try:
        course, ids = course_in_view(), lab_ids()
    except LabError as exc:
        print(f"autograder: {exc}", file=sys.stderr)
        return 2
    bundled = set(bundled_lab_ids())
    print(f"course: {course.root}" if course and not course.is_bundled else "course: none (only the bundled labs)")
    for lab_id in ids:
        lab = load_lab(lab_id)
        state = "assigned" if lab.assignment_path.is_file() else "not assigned yet: autograder assign " + lab_id
        where = "bundled" if lab.is_bundled else "course"
        if where == "course" and lab_id in bundled:
            where = "course (in place of the bundled lab of that name)"
        print(f"  {lab_id:28} {where}  {state}")
    return 0


def cmd_test(args) -> int:
    from autograder.authoring import run_lab_tests
    from autograder.lab import LabError

    try:
        return run_lab_tests(args.lab, args.pytest_args)
    except LabError as exc:
        print(f"autograder: {exc}", file=sys.stderr)
        return 2


def _verify_assigned(labs, restore: bool) -> int:
    """Grade each lab's solution (full marks) and student notebook (zero); on a problem, name it, put back
    the student notebook that was there before (``restore``) and return 1."""
    if not labs:
        return 0
    from autograder.authoring import verification_problems

    failed = False
    for lab, before in labs:
        print(f"{lab.id}: grading the solution and the student notebook ...", flush=True)
        problems = verification_problems(lab)
        if not problems:
            print(f"{lab.id}: the solution scores full marks and the student notebook zero")
            if restore:
                print(f"{lab.assignment_path} written")
            continue
        failed = True
        for problem in problems:
            print(f"{lab.id}: {problem}", file=sys.stderr)
        if restore:
            if before is None:
                lab.assignment_path.unlink()
            else:
                lab.assignment_path.write_bytes(before)
            kept = "not written" if before is None else "not rewritten: the previous one is left as it was"
            print(f"{lab.id}: {lab.assignment_path} {kept} (`--no-verify` writes it anyway)", file=sys.stderr)
    return 1 if failed else 0


def _grade(args, public_only: bool) -> int:
    from autograder.run import SandboxUnavailable, sandbox_level, sandbox_problem, try_bubblewrap_in_background

    if not args.no_sandbox:
        try_bubblewrap_in_background()  # while the grader's modules load
    from autograder.grading import GradeStatus, grade_notebook, print_grade

    limits = limits_from_args(args)
    if public_only and limits.sandbox is not None:
        try:
            sandbox_level()
        except SandboxUnavailable:  # a student checking their own notebook needs no protection from it
            print(f"note: running without the sandbox ({sandbox_problem()})", file=sys.stderr)
            limits = dataclasses.replace(limits, sandbox=None)
    try:
        result = grade_notebook(Path(args.notebook), args.lab, public_only, limits, args.seed)
    except SandboxUnavailable as exc:
        print(f"autograder: {exc}", file=sys.stderr)
        return 2
    print_grade(result)
    if getattr(args, "json", None):
        Path(args.json).write_text(json.dumps(result.to_gradescope(), indent=2) + "\n", encoding="utf-8")
    failed = (GradeStatus.NOT_A_NOTEBOOK, GradeStatus.UNKNOWN_LAB, GradeStatus.GRADER_ERROR, GradeStatus.HARNESS_ERROR)
    return 0 if result.status not in failed else 2


def cmd_grade(args) -> int:
    return _grade(args, public_only=False)


def cmd_check(args) -> int:
    return _grade(args, public_only=True)


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


def cmd_batch(args) -> int:
    from rich.console import Console

    from autograder.course import BatchError, BatchOptions, CollectError, LatePolicyError, OverrideError, run_batch
    from autograder.lab import LabError
    from autograder.run import sandbox_problem

    if not args.no_sandbox and args.scheduler is None and sandbox_problem():
        print(
            f"autograder: cannot sandbox the kernels: {sandbox_problem()}; use --no-sandbox only for "
            "notebooks you trust",
            file=sys.stderr,
        )
        return 2
    try:
        policy = _late_policy(args)
        if policy is not None and args.no_late_policy:
            raise LatePolicyError("--no-late-policy cannot go with --due")
        options = BatchOptions(
            lab=args.lab,
            out=Path(args.out),
            workers=args.workers,
            scheduler=args.scheduler,
            limits=limits_from_args(args),
            regrade=tuple(args.regrade or ()),
            regrade_all=args.regrade_all,
            late_policy=policy,
            drop_late_policy=args.no_late_policy,
            similarity=not args.no_similarity,
        )
        results = run_batch(Path(args.submissions), options)
    except (CollectError, LabError, BatchError, LatePolicyError, OverrideError) as exc:
        print(f"autograder: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: what was graded is saved; run the same command again to grade the rest", file=sys.stderr)
        return 130
    statuses: dict[str, int] = {}
    for result in results.values():
        statuses[result.status] = statuses.get(result.status, 0) + 1
    summary = ", ".join(f"{n} {status}" for status, n in sorted(statuses.items()))
    overrides = sum(len(r.overrides) for r in results.values())
    penalised = sum(r.penalty > 0 for r in results.values())
    Console().print(
        f"{len(results)} submissions in {options.out}: {summary}; {overrides} overrides, {penalised} late penalties"
    )
    return 0


def cmd_override(args) -> int:
    import getpass

    from autograder.course import LatePolicyError, OverrideError, record_override
    from autograder.lab import LabError

    try:
        before, after = record_override(
            Path(args.out), args.student, args.task, args.points, args.comment, args.grader or getpass.getuser()
        )
    except (OverrideError, LatePolicyError, LabError) as exc:
        print(f"autograder: {exc}", file=sys.stderr)
        return 2
    task = next(t for t in after.tasks if t.task == args.task)
    print(
        f"{args.student} {args.task}: {task.score:g} / {task.max_score:g} (the checks gave {task.auto_score:g}); "
        f"score {before.score:g} → {after.score:g}"
    )
    return 0


def cmd_similarity(args) -> int:
    from autograder.course import (
        SIMILARITY_FILE,
        CollectError,
        collect_submissions,
        find_similar,
        similarity_html,
        write_atomically,
    )
    from autograder.lab import LabError, load_lab

    try:
        lab = load_lab(args.lab)
        submissions = collect_submissions(Path(args.submissions), args.lab)
        report = find_similar(lab.template, {s.student: s.path for s in submissions if s.path is not None})
    except (CollectError, LabError) as exc:
        print(f"autograder: {exc}", file=sys.stderr)
        return 2
    path = Path(args.out) / SIMILARITY_FILE
    write_atomically(path, similarity_html(report, lab.id))
    print(f"{report.flagged} pairs flagged among {report.students} submissions: {path}")
    return 0


def cmd_warm(args) -> int:
    from autograder.caches import warm_labs
    from autograder.lab import LabError, lab_ids, load_lab

    try:
        labs = [load_lab(lab_id).id for lab_id in args.labs or lab_ids()]
    except LabError as exc:
        print(f"autograder: {exc}", file=sys.stderr)
        return 2
    warm_labs(labs)
    return 0


def cmd_mutants(args) -> int:
    """Grade the mutants of a lab's solution; exit 1 while a survivor is neither killed nor recorded as
    equivalent (``autograder/labs/LAB/equivalent_mutants.py``)."""
    from autograder.lab import LabError, load_lab
    from autograder.mutation import EquivalentsError, GradingOptions, lab_mutants, mutation_report, print_report

    try:
        lab = load_lab(args.lab)
        unknown = sorted(set(args.task or ()) - {t.id for t in lab.tasks})
        if unknown:
            raise LabError(
                f"{args.lab} has no task {', '.join(unknown)}; its tasks: {', '.join(t.id for t in lab.tasks)}"
            )
        if args.list:
            found = lab_mutants(lab, tuple(args.task or ()), tuple(args.operator or ()))
            for mutant in found.mutants:
                print(
                    f"{mutant.id}  line {mutant.line}: {mutant.description}"
                    + ("" if mutant.parses else "  (does not parse)")
                )
            for line in found.unparsed_cells:
                print(f"note: {line}")
            print(f"{len(found.mutants)} mutants")
            return 0
        options = GradingOptions(args.workers, args.scheduler, limits_from_args(args, TRUSTED_LIMITS))
        report = mutation_report(args.lab, tuple(args.task or ()), options, tuple(args.operator or ()))
    except (LabError, EquivalentsError) as exc:
        print(f"autograder: {exc}", file=sys.stderr)
        return 2
    print_report(report)
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_dict(), indent=2) + "\n", encoding="utf-8")
    return 1 if report.survivors else 0


def cmd_gradescope(args) -> int:
    from autograder.course import (
        GradescopeConfig,
        GradescopeError,
        StudentPackageError,
        build_autograder_zip,
        build_student_wheel,
    )
    from autograder.lab import LabError

    try:
        config = GradescopeConfig(args.lab, args.hidden_visibility, args.cell_timeout, args.timeout, args.memory_gib)
        out = build_autograder_zip(args.lab, Path(args.out), config)
        wheel = build_student_wheel([args.lab], out.resolve().parent)
    except (GradescopeError, LabError, StudentPackageError) as exc:
        print(f"autograder: {exc}", file=sys.stderr)
        return 2
    print(f"{out} written: upload it as the autograder of a Gradescope programming assignment")
    print(f"{wheel} written: give it to the students (their in-notebook checks; no solution, no hidden check)")
    return 0


def cmd_student_wheel(args) -> int:
    from autograder.course import StudentPackageError, build_student_wheel

    try:
        wheel = build_student_wheel(args.labs or None, Path(args.out))
    except StudentPackageError as exc:
        print(f"autograder: {exc}", file=sys.stderr)
        return 2
    print(f"{wheel} written: give it to the students (their in-notebook checks; no solution, no hidden check)")
    return 0


def cmd_gradescope_run(args) -> int:
    from autograder.course import run_gradescope

    run_gradescope(Path(args.root))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="autograder", description="Grade JAX parallelism lab notebooks.")
    parser.add_argument(
        "--course",
        metavar="DIR",
        help="the course folder (default: $AUTOGRADER_COURSE, else the folder holding autograder-course.toml "
        "nearest above the current one; the bundled labs are always there)",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    labs = sub.add_parser("labs", help="list the labs this folder's course and the harness have")
    labs.set_defaults(run=cmd_labs)

    assign = sub.add_parser("assign", help="write assignments/ from solutions/")
    assign.add_argument("labs", nargs="*", help="lab ids (default: every lab)")
    assign.add_argument("--check", action="store_true", help="only report stale student notebooks; exit 1 if any")
    assign.add_argument(
        "--no-verify",
        action="store_true",
        help="write without grading the solution (full marks) and the student notebook (zero)",
    )
    assign.add_argument(
        "--verify", action="store_true", help="with --check: also grade every lab's solution and student notebook"
    )
    assign.set_defaults(run=cmd_assign)

    scaffold = sub.add_parser("new-lab", help="write a new lab that runs: solution notebook, captures, graders, cases")
    scaffold.add_argument("lab", help="the lab id: a Python identifier, e.g. lab4_collectives")
    scaffold.add_argument("--tasks", type=int, default=3, help="how many tasks (default 3: one of each example)")
    scaffold.set_defaults(run=cmd_new_lab)

    lab_test = sub.add_parser(
        "test", help="run every test of one lab: its student notebook up to date, its grades, its known-grade cases"
    )
    lab_test.add_argument("lab", help="the lab id")
    lab_test.add_argument(
        "pytest_args", nargs=argparse.REMAINDER, help="more pytest options, e.g. -x or -k solution (after the lab)"
    )
    lab_test.set_defaults(run=cmd_test)

    for name, run, text in (
        ("grade", cmd_grade, "grade a notebook with every check"),
        ("check", cmd_check, "a student's self-check: public checks only"),
    ):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("notebook")
        cmd.add_argument("--lab", help="the lab id, when the notebook's metadata does not say")
        cmd.add_argument("--seed", type=int, help="seed of the grader's fresh inputs (default: random)")
        add_limit_options(cmd)
        if name == "grade":
            cmd.add_argument("--json", help="write Gradescope's results.json here")
        cmd.set_defaults(run=run)

    batch = sub.add_parser("batch", help="grade a class: a folder or zip of submissions")
    batch.add_argument(
        "submissions", help="a folder of notebooks, STUDENT/ folders, or a zip (Gradescope's export too)"
    )
    batch.add_argument("--lab", required=True)
    batch.add_argument("--out", required=True, help="where results.json, feedback.html, grades.csv and report.html go")
    add_cluster_options(batch)
    add_limit_options(batch)
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
    batch.add_argument("--no-similarity", action="store_true", help="do not write similarity.html")
    batch.set_defaults(run=cmd_batch)

    mutants = sub.add_parser(
        "mutants", help="grade mutants of a lab's solution: which wrong answers its graders accept"
    )
    mutants.add_argument("lab", help="the lab id")
    mutants.add_argument("--task", nargs="+", metavar="TASK", help="only these tasks' mutants (default: every task)")
    from autograder.mutation import OPERATORS

    mutants.add_argument(
        "--operator", nargs="+", choices=sorted(OPERATORS), help="only these operators' mutants (default: every one)"
    )
    mutants.add_argument("--list", action="store_true", help="list the mutants without grading them")
    add_cluster_options(mutants)
    add_limit_options(mutants, TRUSTED_LIMITS, ("--timeout", "--cell-timeout"))
    mutants.add_argument("--json", help="write the report here as JSON (bench/mutation_score.py reads it)")
    mutants.set_defaults(run=cmd_mutants)

    from autograder.course import DEFAULT_ROOT, GRADESCOPE_LIMITS, HIDDEN_VISIBILITIES, ROOT_VARIABLE, GradescopeConfig

    defaults = GradescopeConfig("lab")
    gradescope = sub.add_parser(
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
    add_limit_options(gradescope, GRADESCOPE_LIMITS, ("--timeout", "--cell-timeout", "--memory-gib"))
    gradescope.set_defaults(run=cmd_gradescope)

    student_wheel = sub.add_parser(
        "student-wheel",
        help="build the students' wheel: ag.check and the labs' public checks, with no solution and no hidden check",
    )
    student_wheel.add_argument("labs", nargs="*", help="the labs it checks (default: every lab)")
    student_wheel.add_argument("--out", default=".", help="the folder to write the wheel into (default .)")
    student_wheel.set_defaults(run=cmd_student_wheel)

    gradescope_run = sub.add_parser(
        "gradescope-run", help="grade the submission in Gradescope's container (run_autograder does)"
    )
    gradescope_run.add_argument(
        "--root",
        default=os.environ.get(ROOT_VARIABLE, DEFAULT_ROOT),
        help=f"Gradescope's folder (default ${ROOT_VARIABLE}, else {DEFAULT_ROOT})",
    )
    gradescope_run.set_defaults(run=cmd_gradescope_run)

    override = sub.add_parser("override", help="set one task's points for one student, with a comment")
    override.add_argument("out", help="the batch's output folder")
    override.add_argument("student")
    override.add_argument("task", help="a task id, e.g. t3")
    override.add_argument("points", help="the task's points, or 'auto' for the automatic points again")
    override.add_argument("--comment", required=True, help="why (the student reads it)")
    override.add_argument("--grader", help="who (default: this user)")
    override.set_defaults(run=cmd_override)

    similarity = sub.add_parser("similarity", help="write similarity.html for a class without grading it")
    similarity.add_argument("submissions", help="as for batch")
    similarity.add_argument("--lab", required=True)
    similarity.add_argument("--out", required=True, help="the folder similarity.html goes in")
    similarity.set_defaults(run=cmd_similarity)

    warm = sub.add_parser("warm", help="compute and store the labs' reference results (kept on this machine)")
    warm.add_argument("labs", nargs="*", help="lab ids (default: every lab)")
    warm.set_defaults(run=cmd_warm)
    return parser


def _parse(argv: list[str] | None):
    configure_grader_process()
    return build_parser().parse_args(argv)


def _course_environment(args) -> dict[str, str]:
    """The course a command works on, named in the environment of every process it starts (a batch's
    workers, graders): ``--course``, else the one found from the current folder; {} when there is none
    or ``$AUTOGRADER_COURSE`` names it already."""
    from autograder.paths import COURSE_ENVIRONMENT, CourseFileError, find_course

    if args.course:
        return {COURSE_ENVIRONMENT: str(Path(args.course).resolve())}
    if os.environ.get(COURSE_ENVIRONMENT):
        return {}
    try:
        found = find_course(Path.cwd())
    except CourseFileError:
        return {}
    return {COURSE_ENVIRONMENT: str(found)} if found is not None else {}


def main(argv: list[str] | None = None) -> int:
    """Run one command; the environment is as it was afterwards (a caller may run several)."""
    args = _parse(argv)
    named = _course_environment(args)
    before = {name: os.environ.get(name) for name in named}
    os.environ.update(named)
    try:
        return args.run(args)
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def program() -> NoReturn:
    """The ``autograder`` program: ``main``, then exit. A grade or a check, once its output is written and
    flushed, ends the process at once: the interpreter's teardown with JAX loaded takes 0.3 s, and
    everything a grade starts (kernel, temporary folders) it has already closed and removed itself."""
    args = _parse(None)
    os.environ.update(_course_environment(args))
    code = args.run(args)
    if args.run in (cmd_grade, cmd_check):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
