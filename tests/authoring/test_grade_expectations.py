"""What a lab's tests hold a grade to (autograder/authoring/grade_expectations.py), on constructed grades:
the same judgement for `autograder test` in a course and for this repository's tests of its labs."""

from __future__ import annotations

from types import SimpleNamespace

import solution_results
from solution_results import measured_verdict_titles

from autograder.authoring.grade_expectations import case_problems, full_marks_problems, zero_problems
from autograder.authoring.known_grades import Case
from autograder.grading import CheckResult, GradeResult, GradeStatus, TaskResult
from autograder.lab import load_lab

LAB = SimpleNamespace(tasks=[SimpleNamespace(id="t1", points=3), SimpleNamespace(id="t2", points=2)])
MEASURED = frozenset({"test_t2_verdict"})


def check(task, name, points, passed, message=""):
    return CheckResult(task, name, name, points, passed, message or ("" if passed else "wrong"), False)


def verdict(passed, interval):
    message = "" if passed else f"`faster`: expected False, found True: the grader's interval {interval}"
    return check("t2", "test_t2_verdict", 1, passed, message)


def grade(*t2_checks, t1_passed=True, status=GradeStatus.GRADED):
    tasks = (
        TaskResult("t1", 3, (check("t1", "test_t1_values", 3, t1_passed),)),
        TaskResult("t2", 2, (check("t2", "test_t2_time", 1, True), *t2_checks)),
    )
    return GradeResult("lab9", "nb.ipynb", status, None, 5, tasks)


def test_the_solution_needs_every_fixed_check_and_a_measured_verdict_failing_only_across_1():
    assert full_marks_problems(LAB, grade(verdict(True, "")), MEASURED) == []
    assert full_marks_problems(LAB, grade(verdict(False, "0.5–0.8")), MEASURED) == []  # it measured below 1
    (across,) = full_marks_problems(LAB, grade(verdict(False, "0.9–1.2")), MEASURED)
    assert "across 1" in across
    (failed,) = full_marks_problems(LAB, grade(verdict(True, ""), t1_passed=False), MEASURED)
    assert failed == "task t1, check test_t1_values: loses 3 points: wrong"


def test_the_solution_s_checks_must_add_up_to_each_task_s_points():
    problems = full_marks_problems(LAB, grade(), MEASURED)  # t2's checks are worth 1 of its 2 points
    assert problems == ["task t2: its checks are worth 1 point of the task's 2 points"]


def test_the_untouched_notebook_scores_zero_and_every_check_says_why():
    untouched = GradeResult(
        "lab9", "nb.ipynb", GradeStatus.GRADED, None, 5, (TaskResult("t1", 3, (check("t1", "a", 3, False),)),)
    )
    assert zero_problems(untouched) == []
    scored = GradeResult(
        "lab9", "nb.ipynb", GradeStatus.GRADED, None, 5, (TaskResult("t1", 3, (check("t1", "a", 3, True),)),)
    )
    assert zero_problems(scored) == ["task t1, check a: a blank task earns 3 points"]
    silent = CheckResult("t1", "a", "a", 3, False, "", False)
    untold = GradeResult("lab9", "nb.ipynb", GradeStatus.GRADED, None, 5, (TaskResult("t1", 3, (silent,)),))
    assert zero_problems(untold) == ["task t1, check a: no message"]


def test_a_case_loses_exactly_its_points_whatever_the_measured_verdict_says():
    case = Case("t1_wrong", {}, {"t2": 1}, messages={"t1": "wrong"})
    assert case_problems(LAB, case, grade(verdict(False, "0.2–0.4"), t1_passed=False), MEASURED) == []
    assert case_problems(LAB, case, grade(verdict(True, ""), t1_passed=False), MEASURED) == []
    scores, message = case_problems(LAB, case, grade(verdict(True, "")), MEASURED)
    assert scores.startswith("scores {'t1': 3, 't2': 1}, expected {'t1': 0, 't2': 1}")
    assert message.startswith("t1's messages do not say 'wrong'")
    said = Case("t1_wrong", {}, {"t2": 1}, messages={"t1": "a tuple"})
    assert "do not say 'a tuple'" in case_problems(LAB, said, grade(t1_passed=False), MEASURED)[0]
    timed_out = Case("slow", {}, {}, status="timeout")
    assert case_problems(LAB, timed_out, grade(), MEASURED)[0].startswith("status graded, expected timeout")


def test_gradescope_results_of_a_solution_are_judged_alike():
    """tests/support/solution_results.py: the tests that grade lab 2's solution for another purpose (a warm
    cache, a container) excuse its measured verdict only as the lab's tests do."""
    lab = load_lab("lab2_three_ways")
    (title,) = measured_verdict_titles(lab)

    def results(output: str, t1: str = "passed") -> dict:
        t1_score = 8 if t1 == "passed" else 0
        tests = [
            {"name": "t1: `mesh` is a 2-D mesh", "status": t1, "score": t1_score, "max_score": 8, "output": ""},
            {"name": f"t8: {title}", "status": "failed", "score": 0, "max_score": 4, "output": output},
        ]
        return {"score": lab.max_score - 4 - (8 - t1_score), "tests": tests, "output": ""}

    below = (
        "`cpu_faster`: expected False, found True: the grader measured single ÷ sharded = 0.609"
        " (90% interval 0.41–0.81 over 15 rounds), so the sharded code is clearly slower"
    )
    across = below.replace("0.41–0.81", "0.8–1.3")
    judged = solution_results.full_marks_problems
    assert judged(results(below), lab) == []
    assert any("t8" in problem for problem in judged(results(across), lab))
    assert any("t1" in problem for problem in judged(results(below, t1="failed"), lab))
    assert any("the score is" in problem for problem in judged({**results(below), "score": 100}, lab))
