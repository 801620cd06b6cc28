"""The ``autograder`` command: its top parser, the course folder a command works on, and ``program``.
A command's machinery loads only when it runs, so ``autograder --help`` stays quick (docs/how-grading-works.md
maps the modules)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import NoReturn

from autograder.cli import authoring_commands, course_commands, grading_commands
from autograder.cli.grading_commands import cmd_grade, cmd_self_check

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
        grading_commands.add_grade_and_self_check,
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


def _parse(argv: list[str] | None):
    configure_grader_process()
    return build_parser().parse_args(argv)


def _course_environment(args) -> dict[str, str]:
    """The course named in the environment of every process the command starts (a batch's workers, graders);
    {} when there is none or ``$AUTOGRADER_COURSE`` names it already."""
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
    """``main``, then exit; a grade or a self-check skips the interpreter's teardown (0.3 s with JAX loaded):
    everything it started (kernel, temporary folders) it has already closed and removed itself."""
    args = _parse(None)
    os.environ.update(_course_environment(args))
    code = args.run(args)
    if args.run in (cmd_grade, cmd_self_check):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
