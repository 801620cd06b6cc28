"""The commands that grade one notebook: grade (every check) and check (the public checks only)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from autograder.cli import options


def add_grade_and_self_check(commands: argparse._SubParsersAction) -> None:
    for name, run, text in (
        ("grade", cmd_grade, "grade a notebook with every check"),
        ("check", cmd_self_check, "a student's self-check: public checks only"),
    ):
        cmd = commands.add_parser(name, help=text)
        cmd.add_argument("notebook")
        cmd.add_argument("--lab", help="the lab id, when the notebook's metadata does not say")
        cmd.add_argument("--seed", type=int, help="seed of the grader's fresh inputs (default: random)")
        options.add_limit_options(cmd)
        options.add_stale_assignment_option(cmd, name)
        if name == "grade":
            cmd.add_argument("--json", help="write Gradescope's results.json here")
        cmd.set_defaults(run=run)


def cmd_grade(args) -> int:
    return _grade_from_args(args, public_only=False)


def cmd_self_check(args) -> int:
    return _grade_from_args(args, public_only=True)


def _grade_from_args(args, public_only: bool) -> int:
    from autograder.run import SandboxUnavailable, sandbox_level, try_bubblewrap_in_background

    if not args.no_sandbox:
        try_bubblewrap_in_background()  # while the grader's modules load
    if options.refuses_stale(args, args.lab or options.notebook_lab(args.notebook)):
        return 2
    from autograder.grading import GradeOptions, GradeStatus, grade_notebook, print_grade, write_results_json

    limits = options.limits_from_args(args)
    if public_only and limits.sandbox is not None:
        try:
            sandbox_level()
        except SandboxUnavailable as exc:  # a student checking their own notebook needs no protection from it
            print(f"note: running without the sandbox ({exc.reason})", file=sys.stderr)
            limits = dataclasses.replace(limits, sandbox=None)
    try:
        grade = GradeOptions(args.lab, public_only=public_only, limits=limits, seed=args.seed)
        result = grade_notebook(Path(args.notebook), grade)
    except SandboxUnavailable as exc:
        return options.stopped(exc)
    print_grade(result)
    if getattr(args, "json", None):
        write_results_json(Path(args.json), result.to_gradescope())
    failed = (GradeStatus.NOT_A_NOTEBOOK, GradeStatus.UNKNOWN_LAB, GradeStatus.GRADER_ERROR, GradeStatus.HARNESS_ERROR)
    return 0 if result.status not in failed else 2
