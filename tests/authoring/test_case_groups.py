"""Known-grade cases graded several to a notebook (autograder/authoring/case_groups.py): which cases may
share one, and each judged on its own tasks of the shared grade, on constructed cases and grades."""

from __future__ import annotations

from types import SimpleNamespace

from lab_submissions import CASES_BY_LAB
from test_grade_expectations import LAB, MEASURED, check, grade, verdict

from autograder.authoring.case_groups import CaseGroup, grading_jobs, grouped, longest_first, timed_tasks
from autograder.authoring.grade_expectations import case_problems
from autograder.authoring.known_grades import SOLUTION, Case
from autograder.lab import load_lab


def names(groups):
    return [[case.name for case in group.cases] for group in groups]


def test_cases_on_other_tasks_or_alike_on_a_task_share_a_notebook_in_their_order():
    cases = [
        Case("t1_wrong", {"t1": "a = 1"}, {}),
        Case("t1_other_wrong", {"t1": "a = 2"}, {}),  # t1 answered otherwise: a notebook of its own
        Case("t2_wrong_after_t1", {"t1": SOLUTION, "t2": "b = 1"}, {"t1": 3}),
        Case("t2_other_after_t1", {"t1": SOLUTION, "t2": "b = 2"}, {"t1": 3}),
        Case("t3_after_t1", {"t1": SOLUTION, "t3": "c = 1"}, {"t1": 3, "t3": 1}),
    ]
    groups = grouped(cases)
    assert names(groups) == [
        ["t1_wrong"],
        ["t1_other_wrong"],
        ["t2_wrong_after_t1", "t3_after_t1"],
        ["t2_other_after_t1"],
    ]
    assert groups[2].answers == {"t1": SOLUTION, "t2": "b = 1", "t3": "c = 1"}
    assert groups[2].name == "t2_wrong_after_t1+1" and groups[0].name == "t1_wrong"


def test_a_task_alike_answered_but_expected_to_score_otherwise_is_not_shared():
    cases = [Case("a", {"t1": SOLUTION}, {"t1": 3}), Case("b", {"t1": SOLUTION, "t2": "x"}, {"t1": 2})]
    assert names(grouped(cases)) == [["a"], ["b"]]


def test_an_expected_status_a_timeout_of_its_own_or_alone_grades_a_case_alone():
    cases = [
        Case("plain", {"t1": "a"}, {}),
        Case("dies", {"t2": "b"}, {}, status="kernel died"),
        Case("slow", {"t3": "c"}, {}, cell_timeout=5.0),
        Case("leaks", {"t4": "d"}, {}, alone=True),
        Case("plain_too", {"t5": "e"}, {}),
    ]
    assert names(grouped(cases)) == [["plain", "plain_too"], ["dies"], ["slow"], ["leaks"]]


def test_a_case_that_times_code_joins_the_group_that_runs_furthest_one_such_case_to_a_group():
    cases = [
        Case("t1_a", {"t1": "a"}, {}),
        Case("t1_b_t3_c", {"t1": "b", "t3": "c"}, {}),
        Case("t2_timing_wrong", {"t2": "t = 0.0"}, {}),  # t2 times code
        Case("t2_timing_other", {"t2": "t = 1.0"}, {}),
        Case("t2_timing_kept_alone", {"t2": "t = 2.0"}, {}, alone=True),
    ]
    order = ("t1", "t2", "t3")
    assert names(grouped(cases, timed=("t2",), order=order)) == [
        ["t1_a", "t2_timing_other"],
        ["t1_b_t3_c", "t2_timing_wrong"],  # runs to t3: the furthest
        ["t2_timing_kept_alone"],
    ]
    # Solved, the timed task is no timing of the case's own: it shares as any case does.
    solved = [Case("t1_a", {"t1": "a"}, {}), Case("t2_solved_t3", {"t2": SOLUTION, "t3": "c"}, {"t2": 2})]
    assert names(grouped(solved, timed=("t2",), order=order)) == [["t1_a", "t2_solved_t3"]]


def test_a_shared_grade_judges_each_case_on_its_own_tasks():
    t1_wrong = Case("t1_wrong", {"t1": "a = 1"}, {})
    t2_right = Case("t2_right", {"t2": "b = 1"}, {"t2": 1})
    group = CaseGroup((t1_wrong, t2_right))
    shared = grade(verdict(True, ""), t1_passed=False)
    assert case_problems(LAB, t1_wrong, shared, MEASURED, group) == []
    assert case_problems(LAB, t2_right, shared, MEASURED, group) == []
    # Alone, each would have needed the other's task to score 0 (t2) or its points (t1).
    assert case_problems(LAB, t1_wrong, shared, MEASURED)[0].startswith("scores {'t1': 0.0, 't2': 1}")


def test_a_shared_grade_still_fails_a_case_on_its_own_task_naming_its_companions():
    t1_wrong = Case("t1_wrong", {"t1": "a = 1"}, {})
    t2_right = Case("t2_right", {"t2": "b = 1"}, {"t2": 1})
    group = CaseGroup((t1_wrong, t2_right))
    t1_passed = grade(verdict(True, ""))
    scores, companions = case_problems(LAB, t1_wrong, t1_passed, MEASURED, group)
    assert scores.startswith("scores {'t1': 3}, expected {'t1': 0}")
    assert "graded in one notebook with t2_right" in companions and "alone=True" in companions
    t2_both = Case("t2_both", {"t2": "b = 1"}, {"t2": 2})  # expects t2's second check too
    lost = grade(check("t2", "test_t2_layout", 1, False), t1_passed=False)
    scores, _ = case_problems(LAB, t2_both, lost, MEASURED, CaseGroup((t1_wrong, t2_both)))
    assert scores.startswith("scores {'t2': 1.0}, expected {'t2': 2}; failed: {'t2': ['test_t2_layout: wrong']}")


def test_a_task_no_case_of_the_group_answers_must_still_score_0():
    t1_wrong = Case("t1_wrong", {"t1": "a = 1"}, {})
    group = CaseGroup((t1_wrong, Case("t3_only", {"t3": "c"}, {})))
    t2_scored = grade(verdict(True, ""), t1_passed=False)  # t2's time check passes: 1 point nobody answered
    (scores, _) = case_problems(LAB, t1_wrong, t2_scored, MEASURED, group)
    assert scores.startswith("scores {'t1': 0.0, 't2': 1}, expected {'t1': 0, 't2': 0}")


def test_the_groups_that_run_furthest_into_the_lab_are_graded_first():
    """Grading stops after a notebook's last answered task: those that run to a later task go first, so
    that a few processes grading them in turn are not left with one long notebook at the end."""
    lab = SimpleNamespace(tasks=[SimpleNamespace(id=task) for task in ("t1", "t2", "t3")])
    groups = [
        CaseGroup((Case("t1_only", {"t1": "a = 1"}, {}),)),
        CaseGroup((Case("to_t3", {"t1": SOLUTION, "t3": "c = 1"}, {}),)),
        CaseGroup((Case("to_t2", {"t2": "b = 1"}, {}),)),
        CaseGroup((Case("also_to_t3", {"t3": "c = 2"}, {}),)),
    ]
    assert [group.name for group in longest_first(lab, groups)] == ["to_t3", "also_to_t3", "to_t2", "t1_only"]


def test_a_labs_gradings_run_the_solution_first_and_the_untouched_notebook_last(tmp_path):
    lab = load_lab("lab4_collectives")
    groups = grouped(CASES_BY_LAB[lab.id], timed_tasks(lab))
    jobs = grading_jobs(lab, groups, tmp_path)
    assert list(jobs) == ["solution", *(group.name for group in longest_first(lab, groups)), "untouched"]
    assert jobs["solution"][0] == lab.solution_path and jobs["untouched"][0] == lab.assignment_path
    assert all(jobs[group.name][0] == tmp_path / f"{group.name}.ipynb" for group in groups)
    assert list(grading_jobs(lab, groups, tmp_path, with_reference=False)) == list(jobs)[1:-1]
