"""How mutants are judged and reported, on made-up grades (nothing runs): killed only by a check the
solution passed in the same run, survivors apart from the lab's recorded equivalents, stale records named,
and the score killed ÷ (killed + unexplained survivors); and one task's mutants graded end to end."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from autograder.cli import main
from autograder.grading import CheckResult, GradeResult, TaskResult
from autograder.mutation.equivalents import EquivalentsError, recorded_equivalents
from autograder.mutation.grading import Outcome, judge
from autograder.mutation.mutants import Mutant
from autograder.mutation.report import MutationReport, print_report


def _mutant(task: str, name: str) -> Mutant:
    return Mutant(
        f"{task}-swap-{name}",
        task,
        "cell-1",
        "swap",
        f"change {name}",
        2,
        "y = 2\n",
        "--- solution\n+++ mutant\n@@ -1 +1 @@\n-y = 1\n+y = 2\n",
        True,
    )


def _grade(failed: set[str], status: str = "graded") -> GradeResult:
    checks = tuple(
        CheckResult("t1", name, name, 5, name not in failed, f"{name} failed" if name in failed else "", False)
        for name in ("values", "timing")
    )
    return GradeResult("labX", "n.ipynb", status, None, 10, (TaskResult("t1", 10, checks),))


def test_a_mutant_is_killed_only_by_a_check_the_solution_passed():
    solution = _grade({"timing"})  # the solution's own timing failed in this run: it kills nothing
    assert judge(_mutant("t1", "a"), _grade({"timing"}), solution).verdict == "survived"
    killed = judge(_mutant("t1", "b"), _grade({"values", "timing"}), solution)
    assert (killed.verdict, killed.detail, killed.status) == ("killed", "values: values failed", "graded")
    assert (
        judge(_mutant("t1", "c"), GradeResult("labX", "n", "grader error", "boom", 10), solution).verdict
        == "not graded"
    )


def test_the_report_counts_per_task_lists_equivalents_apart_and_names_stale_records():
    outcomes = (
        Outcome(_mutant("t1", "a"), "killed", 5, 10, "values: wrong"),
        Outcome(_mutant("t1", "b"), "survived", 10, 10),
        Outcome(_mutant("t1", "c"), "survived", 10, 10),
        Outcome(_mutant("t2", "d"), "does not parse"),
        Outcome(_mutant("t2", "e"), "killed", 0, 10),
        Outcome(_mutant("t2", "f"), "killed", 0, 10, "timeout: the notebook ran over 600 s", "timeout"),
    )
    equivalents = {"t1-swap-c": "the same layout", "t2-swap-e": "thought equivalent", "t1-swap-gone": "old"}
    report = MutationReport("labX", _grade(set()), outcomes, equivalents)
    assert [vars(c) for c in report.per_task()] == [
        {"task": "t1", "made": 3, "killed": 1, "survived": 1, "equivalent": 1, "not_graded": 0},
        {"task": "t2", "made": 3, "killed": 2, "survived": 0, "equivalent": 0, "not_graded": 1},
    ]
    assert report.score == 3 / 4 and [o.mutant.id for o in report.survivors] == ["t1-swap-b"]
    assert report.stale_records() == [
        "t2-swap-e is recorded as equivalent but the graders kill it: remove its record",
        "t1-swap-gone is recorded as equivalent but no longer made (its cell changed): remove its record",
    ]
    console = Console(record=True, width=200)
    print_report(report, console)
    text = console.export_text()
    assert "survived t1-swap-b (t1, line 2): change b" in text and "+y = 2" in text
    assert "equivalent t1-swap-c: change c: the same layout" in text
    assert "does not parse t2-swap-d" in text and "mutation score 75% (3 killed of 4" in text
    assert "run failed t2-swap-f (t2): change f: timeout: the notebook ran over 600 s — counted as killed" in text
    assert json.loads(json.dumps(report.to_dict()))["mutants"][2]["equivalent"] == "the same layout"


def test_a_malformed_record_of_equivalents_is_refused(monkeypatch, tmp_path):
    from scaffolded_labs import use_tmp_labs

    labs = use_tmp_labs(monkeypatch, tmp_path) / "labs"
    for lab_id in ("labX", "labY"):
        (labs / lab_id).mkdir()
        (labs / lab_id / "__init__.py").write_text('"""A lab."""\n')
        (labs / lab_id / "captures.py").write_text("CAPTURES = ()\n")
    (labs / "labX" / "equivalent_mutants.py").write_text('EQUIVALENT_MUTANTS = {"t1-swap-a": " "}\n')
    with pytest.raises(EquivalentsError, match="no reason given for t1-swap-a"):
        recorded_equivalents("labX")
    assert recorded_equivalents("labY") == {}  # a lab that records none


@pytest.mark.slow
def test_one_tasks_mutants_are_graded_on_a_local_cluster(tmp_path, capsys):
    out = tmp_path / "report.json"
    code = main(
        ["mutants", "lab2_three_ways", "--task", "t1", "--operator", "swap", "--workers", "1", "--json", str(out)]
    )
    report = json.loads(out.read_text())
    assert report["tasks"] == [{"task": "t1", "made": 1, "killed": 1, "survived": 0, "equivalent": 0, "not_graded": 0}]
    (mutant,) = report["mutants"]
    assert mutant["description"] == "`jax.device_put`'s arguments `A` and `sharding` swapped"
    assert code == 0 and report["score"] == 1.0
    assert "mutation score 100% (1 killed of 1" in capsys.readouterr().out
