"""The ``autograder`` command: its top parser, ``program``, the course folder a command works on, and grade and
check (one notebook). Machinery loads only when a command runs, so ``autograder --help`` stays quick
(docs/how-grading-works.md maps the modules)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path
from typing import NoReturn

from autograder.cli import authoring_commands, course_commands, options

# Named here too: the limits' options are the command line's, and callers (the tests) take them from it.
from autograder.cli.options import LIMIT_FLAGS, add_limit_options, limits_from_args
from autograder.run import configure_grader_process

__all__ = ["LIMIT_FLAGS", "add_limit_options", "build_parser", "limits_from_args", "main", "program"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="autograder", description="Grade JAX parallelism lab notebooks.")
    parser.add_argument(
        "--course",
        metavar="DIR",
        help="the course folder (default: $AUTOGRADER_COURSE, else the folder holding autograder-course.toml "
        "nearest above the current one; the bundled labs are always there)",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for add_command in (  # in the order `autograder --help` lists them
        authoring_commands.add_labs,
        authoring_commands.add_assign,
        authoring_commands.add_new_lab,
        authoring_commands.add_test,
        add_grade_and_self_check,
        course_commands.add_batch,
        authoring_commands.add_mutants,
        course_commands.add_gradescope,
        course_commands.add_student_wheel,
        course_commands.add_gradescope_run,
        course_commands.add_override,
        course_commands.add_similarity,
        course_commands.add_warm,
    ):
        add_command(commands)
    return parser


def add_grade_and_self_check(commands: argparse._SubParsersAction) -> None:
    for name, text in (
        ("grade", "grade a notebook with every check"),
        ("check", "a student's self-check: public checks only"),
    ):
        cmd = commands.add_parser(name, help=text)
        cmd.add_argument("notebook")
        cmd.add_argument("--lab", help="the lab id, when the notebook's metadata does not say")
        cmd.add_argument("--seed", type=int, help="seed of the grader's fresh inputs (default: random)")
        options.add_limit_options(cmd)
        options.add_stale_assignment_option(cmd, name)
        if name == "grade":
            cmd.add_argument("--json", help="write Gradescope's results.json here")
        cmd.set_defaults(run=cmd_grade, public_only=name == "check")


def cmd_grade(args) -> int:
    from autograder.run import SandboxUnavailable, sandbox_level, try_bubblewrap_in_background

    if not args.no_sandbox:
        try_bubblewrap_in_background()  # while the grader's modules load
    if options.refuses_stale(args, args.lab or options.notebook_lab(args.notebook)):
        return 2
    from autograder.grading import GradeOptions, GradeStatus, grade_notebook, print_grade, write_results_json

    limits = options.limits_from_args(args)
    if args.public_only and limits.sandbox is not None:
        try:
            sandbox_level()
        except SandboxUnavailable as exc:  # a student checking their own notebook needs no protection from it
            print(f"note: running without the sandbox ({exc.reason})", file=sys.stderr)
            limits = dataclasses.replace(limits, sandbox=None)
    try:
        grade = GradeOptions(args.lab, public_only=args.public_only, limits=limits, seed=args.seed)
        result = grade_notebook(Path(args.notebook), grade)
    except SandboxUnavailable as exc:
        return options.stopped(exc)
    print_grade(result)
    if getattr(args, "json", None):
        write_results_json(Path(args.json), result.to_gradescope())
    failed = (GradeStatus.NOT_A_NOTEBOOK, GradeStatus.UNKNOWN_LAB, GradeStatus.GRADER_ERROR, GradeStatus.HARNESS_ERROR)
    return 0 if result.status not in failed else 2


def _parse(argv: list[str] | None):
    configure_grader_process()
    return build_parser().parse_args(argv)


def _course_environment(args) -> dict[str, str]:
    """The course named in the environment of every process the command starts (a batch's workers, graders);
    {} when there is none or ``$AUTOGRADER_COURSE`` names it already."""
    from autograder.paths import COURSE_ENVIRONMENT, find_course

    if args.course:
        return {COURSE_ENVIRONMENT: str(Path(args.course).resolve())}
    if os.environ.get(COURSE_ENVIRONMENT):
        return {}
    found = find_course(Path.cwd())
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
    """``main``, then exit; a grade or a self-check skips the interpreter's teardown (0.3 s with JAX loaded):
    everything it started (kernel, temporary folders) it has already closed and removed itself."""
    args = _parse(None)
    os.environ.update(_course_environment(args))
    code = args.run(args)
    if args.run is cmd_grade:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
