"""How mutants are judged and reported, on made-up grades (nothing runs): killed only by a check the
solution passed in the same run, survivors apart from the lab's recorded equivalents, stale records named,
and the score killed ÷ (killed + unexplained survivors); and one task's mutants graded end to end."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from autograder.cli import main
from autograder.grading import CheckResult, GradeResult, TaskResult
from autograder.mutation.grading import Outcome, judge
from autograder.mutation.mutants import Mutant
from autograder.mutation.report import EquivalentsError, MutationReport, print_report, recorded_equivalents


def _mutant(task: str, name: str, operator: str = "swap") -> Mutant:
    return Mutant(
        f"{task}-{operator}-{name}",
        task,
        "cell-1",
        operator,
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
        {
            "task": "t1",
            "made": 3,
            "killed": 1,
            "survived": 1,
            "equivalent": 1,
            "not_graded": 0,
            "variants": 0,
            "kept": 0,
        },
        {
            "task": "t2",
            "made": 3,
            "killed": 2,
            "survived": 0,
            "equivalent": 0,
            "not_graded": 1,
            "variants": 0,
            "kept": 0,
        },
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


def test_a_right_variant_keeps_its_marks_or_is_listed_with_the_checks_it_failed():
    solution = _grade({"timing"})
    kept = judge(_mutant("t1", "a", "variant_clock"), _grade({"timing"}), solution)
    lost = judge(_mutant("t1", "b", "variant_device_order"), _grade({"values", "timing"}), solution)
    recorded = judge(_mutant("t1", "c", "variant_matmul"), _grade({"values"}), solution)
    assert (kept.verdict, lost.verdict, lost.detail) == ("kept", "lost", "values: values failed")
    report = MutationReport(
        "labX",
        solution,
        (kept, lost, recorded, Outcome(_mutant("t1", "d"), "killed", 5, 10, "values")),
        {"t1-variant_matmul-c": "the text asks for jnp.dot"},
    )
    (count,) = report.per_task()
    assert (count.made, count.killed, count.variants, count.kept) == (1, 1, 3, 2)
    assert [o.mutant.id for o in report.lost_variants] == ["t1-variant_device_order-b"]
    assert report.score == 1.0  # variants are no mutants: they count apart
    console = Console(record=True, width=200)
    print_report(report, console)
    text = console.export_text()
    assert "right variant lost points t1-variant_device_order-b (t1, line 2): change b: values: values failed" in text
    assert "right variants: 2 kept of 3" in text


def test_a_run_of_one_tasks_mutants_says_only_that_task_is_answered_and_scored():
    answered = _grade(set()).tasks[0]
    solution = GradeResult("labX", "n.ipynb", "graded", None, 20, (answered, TaskResult("t2", 10, ())))
    report = MutationReport("labX", solution, (Outcome(_mutant("t1", "a"), "killed", 0, 10, "values"),), {})
    console = Console(record=True, width=200)
    print_report(report, console)
    text = console.export_text()
    assert (
        "only t1 is answered and scored in this run (the solution's answers up to t1, later tasks left blank): 10 / 10"
        in text
    )
    assert "the solution scored" not in text  # t2 is blank, not failed
    failed = GradeResult("labX", "n.ipynb", "graded", None, 20, (*_grade({"timing"}).tasks, TaskResult("t2", 10, ())))
    console = Console(record=True, width=200)
    print_report(MutationReport("labX", failed, report.outcomes, {}), console)
    assert (
        "the solution scored 5 / 10 on the tasks answered in this run (graded); its failed checks kill no mutant:"
        " t1 timing" in console.export_text()
    )


def test_the_right_variants_of_a_cell_keep_its_meaning_in_another_form():
    from autograder.mutation.source_mutants import right_variants

    source = (
        "@jax.jit\n"
        "def f(a, b):\n"
        "    return jnp.dot(a, b)\n"
        "mesh = jax.make_mesh((8,), ('x',))\n"
        "t0 = time.perf_counter()\n"
        "f(x, y).block_until_ready()\n"
    )
    found = {v.operator: v.source for v in right_variants(source, set(range(1, 7)))}
    assert "f = jax.jit(f)" in found["variant_jit_call"] and "@jax.jit" not in found["variant_jit_call"]
    assert "(a @ b)" in found["variant_matmul"]
    assert "devices=jax.devices()[::-1]" in found["variant_device_order"]
    assert "jax.block_until_ready(f(x, y))" in found["variant_wait"]
    assert "time.monotonic()" in found["variant_clock"]
    for variant in found.values():
        compile(variant, "<variant>", "exec")
    two_d = "mesh = jax.make_mesh((4, 2), ('a', 'b'))\n"  # a grid's order is the text's to fix
    assert right_variants(two_d, {1}) == []
    assert right_variants(source, {5}) == [v for v in right_variants(source, {5}) if v.operator == "variant_clock"]


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
    assert report["tasks"] == [
        {
            "task": "t1",
            "made": 1,
            "killed": 1,
            "survived": 0,
            "equivalent": 0,
            "not_graded": 0,
            "variants": 0,
            "kept": 0,
        }
    ]
    (mutant,) = report["mutants"]
    assert mutant["description"] == "`jax.device_put`'s arguments `A` and `sharding` swapped"
    assert code == 0 and report["score"] == 1.0
    printed = capsys.readouterr().out
    assert "mutation score 100% (1 killed of 1" in printed
    assert "only t1 is answered and scored in this run" in printed and "the solution scored" not in printed
