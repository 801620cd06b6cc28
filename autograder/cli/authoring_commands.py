"""The commands of a lab's author: labs, assign, new-lab, test and mutants, each with its options."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from autograder.cli import options
from autograder.run import TRUSTED_LIMITS


def add_labs(commands: argparse._SubParsersAction) -> None:
    labs = commands.add_parser("labs", help="list the labs this folder's course and the harness have")
    labs.set_defaults(run=cmd_labs)


def cmd_labs(args) -> int:
    from autograder.lab import LabError, bundled_lab_ids, course_in_view, lab_ids, load_lab

    try:
        course, ids = course_in_view(), lab_ids()
    except LabError as exc:
        return options.stopped(exc)
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


def add_assign(commands: argparse._SubParsersAction) -> None:
    assign = commands.add_parser("assign", help="write assignments/ from solutions/")
    assign.add_argument("labs", nargs="*", help="lab ids (default: every lab)")
    assign.add_argument(
        "--compare",
        action="store_true",
        help="write nothing: compare each student notebook with what its solution gives; exit 1 if one differs",
    )
    # --compare's earlier name, kept for the scripts and CI configurations written before
    assign.add_argument("--check", dest="compare", action="store_true", help=argparse.SUPPRESS)
    assign.add_argument(
        "--no-verify",
        action="store_true",
        help="write without grading the solution (full marks) and the student notebook (zero)",
    )
    assign.add_argument(
        "--verify", action="store_true", help="with --compare: also grade every lab's solution and student notebook"
    )
    assign.set_defaults(run=cmd_assign)


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
        outcome = assign_lab(lab.solution_path, lab.assignment_path, lab_id, compare_only=args.compare)
        if outcome.changed:
            stale.append(outcome.path)
        verify = args.verify if args.compare else (outcome.changed and not args.no_verify)
        if not (verify and not args.compare):  # a notebook to verify is said written, or not, once verified
            print(
                f"{outcome.path} {('is stale' if args.compare else 'written') if outcome.changed else 'is up to date'}"
            )
        if verify:
            to_verify.append((lab, before))
    if args.compare and stale:
        print("assignments/ does not match solutions/: run `autograder assign`", file=sys.stderr)
        return 1
    return _verify_assigned(to_verify, restore=not args.compare)


def _verify_assigned(labs, restore: bool) -> int:
    """Grade each lab's solution (full marks) and student notebook (zero); on a problem, put back the
    student notebook that was there before (``restore``) and return 1."""
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


def add_new_lab(commands: argparse._SubParsersAction) -> None:
    scaffold = commands.add_parser(
        "new-lab", help="write a new lab that runs: solution notebook, captures, graders, cases"
    )
    scaffold.add_argument("lab", help="the lab id: a Python identifier, e.g. lab4_collectives")
    scaffold.add_argument("--tasks", type=int, default=3, help="how many tasks (default 3: one of each example)")
    scaffold.set_defaults(run=cmd_new_lab)


def cmd_new_lab(args) -> int:
    from autograder.authoring import NewLabError, scaffold_lab

    try:
        written = scaffold_lab(args.lab, args.tasks)
    except NewLabError as exc:
        return options.stopped(exc)
    for path in written:
        print(f"wrote {path}")
    print(
        f"next: autograder assign {args.lab}  (grades the solution and the student notebook); then edit the "
        f"lab with docs/writing-a-lab.md, its known grades in tests/labs/{args.lab}_submissions.py, and run "
        f"autograder test {args.lab}"
    )
    return 0


def add_test(commands: argparse._SubParsersAction) -> None:
    lab_test = commands.add_parser(
        "test", help="run every test of one lab: its student notebook up to date, its grades, its known-grade cases"
    )
    options.add_stale_assignment_option(lab_test, "run the tests")
    lab_test.add_argument("lab", help="the lab id")
    lab_test.add_argument(
        "pytest_args", nargs=argparse.REMAINDER, help="more pytest options, e.g. -x or -k solution (after the lab)"
    )
    lab_test.set_defaults(run=cmd_test)


def cmd_test(args) -> int:
    from autograder.authoring import run_lab_tests
    from autograder.lab import LabError

    if options.STALE_OPTION in args.pytest_args:  # written after the lab, where the rest goes to pytest
        args.pytest_args = [arg for arg in args.pytest_args if arg != options.STALE_OPTION]
        args.allow_stale_assignment = True
    if options.refuses_stale(args, args.lab):
        return 2
    try:
        return run_lab_tests(args.lab, args.pytest_args)
    except LabError as exc:
        return options.stopped(exc)


def add_mutants(commands: argparse._SubParsersAction) -> None:
    mutants = commands.add_parser(
        "mutants", help="grade mutants of a lab's solution: which wrong answers its graders accept"
    )
    mutants.add_argument("lab", help="the lab id")
    mutants.add_argument("--task", nargs="+", metavar="TASK", help="only these tasks' mutants (default: every task)")
    from autograder.mutation import OPERATORS, TEXT_OPERATORS, VARIANTS

    mutants.add_argument(
        "--operator",
        nargs="+",
        choices=sorted(OPERATORS) + list(TEXT_OPERATORS) + list(VARIANTS),
        help="only these operators' mutants (default: every one; text_* change the literals the task's text names, "
        "variant_* rewrite right answers that must keep full marks)",
    )
    mutants.add_argument("--list", action="store_true", help="list the mutants without grading them")
    options.add_cluster_options(mutants)
    options.add_limit_options(mutants, TRUSTED_LIMITS, ("--timeout", "--cell-timeout"))
    mutants.add_argument("--json", help="write the report here as JSON (bench/mutation_score.py reads it)")
    mutants.set_defaults(run=cmd_mutants)


def cmd_mutants(args) -> int:
    """Exit 1 while a survivor is neither killed nor recorded as equivalent (``labs/LAB/equivalent_mutants.py``)."""
    from autograder.lab import LabError, load_lab
    from autograder.mutation import EquivalentsError, MutantGradingOptions, lab_mutants, mutation_report, print_report

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
        grading = MutantGradingOptions(args.workers, args.scheduler, options.limits_from_args(args, TRUSTED_LIMITS))
        report = mutation_report(args.lab, tuple(args.task or ()), grading, tuple(args.operator or ()))
    except (LabError, EquivalentsError) as exc:
        return options.stopped(exc)
    print_report(report)
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_dict(), indent=2) + "\n", encoding="utf-8")
    return 1 if report.survivors or report.lost_variants else 0
