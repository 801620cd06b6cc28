"""Gradescope's results (results.json) of a lab's solution, judged as the lab's own tests judge its grade
(``grade_expectations.full_marks_problems``): every test passed, but a verdict judged against the grader's
own timing (the lab's MEASURED_VERDICTS), which follows the machine's speed and load at that moment and
may fail only with the grader's interval on the other side of 1.

The tests that grade a solution to show something else (a warm cache, a container's limits, an installed
harness) hold its grade to this, not to 100: a machine that another job loads can make the other answer
true while the grader measures."""

from __future__ import annotations

import ast

from lab_submissions import MEASURED_VERDICTS

from autograder.authoring.grade_expectations import measured_side_failure
from autograder.lab import Lab


def measured_verdict_titles(lab: Lab) -> set[str]:
    """The titles (a check's docstring's first line, as results.json names a test after it) of the lab's
    measured verdicts, read from its graders' source."""
    return {
        (ast.get_docstring(node) or node.name).strip().splitlines()[0]
        for path in lab.grader_paths
        for node in ast.parse(path.read_text()).body
        if isinstance(node, ast.FunctionDef) and node.name in MEASURED_VERDICTS.get(lab.id, ())
    }


def full_marks_problems(results: dict, lab: Lab) -> list[str]:
    """What keeps ``results`` of the lab's solution from full marks but for its measured verdicts: each
    test that failed otherwise, and a score that is not the lab's points less those verdicts' lost ones."""
    verdicts = measured_verdict_titles(lab)
    problems, lost = [], 0.0
    for test in results["tests"]:
        if test["status"] == "passed":
            continue
        if test["name"].split(": ", 1)[-1] in verdicts and measured_side_failure(test["output"]):
            lost += test["max_score"] - test["score"]
            continue
        problems.append(f"{test['name']} ({test['status']}): {test['output']}")
    if results["score"] != lab.max_score - lost:
        problems.append(f"the score is {results['score']:g}, not {lab.max_score - lost:g}: {results.get('output', '')}")
    return problems
