"""Every lab's requirement table holds (autograder/authoring/requirement_table.py): each requirement sentence
of a task's text is quoted, has a check, and a known-grade wrong case that breaks it alone and loses
exactly that check's points; every check enforces a requirement. Read from the files: no notebook runs."""

from __future__ import annotations

import pytest
from lab_submissions import CASES_BY_LAB, MEASURED_VERDICTS

from autograder.authoring.requirement_table import (
    Requirement,
    Waiver,
    grader_checks,
    literal_problems,
    read_table,
    read_waivers,
    table_path,
    table_problems,
    task_texts,
    text_literals,
)
from autograder.lab import lab_ids, load_lab


@pytest.mark.parametrize("lab_id", lab_ids())
def test_the_labs_requirement_table_holds(lab_id):
    lab = load_lab(lab_id)
    problems = table_problems(lab, CASES_BY_LAB.get(lab_id, []), MEASURED_VERDICTS.get(lab_id, frozenset()))
    assert not problems, "\n".join(problems)


def test_a_table_fails_on_a_stale_quote_a_missing_check_or_case_and_a_wrong_score(tmp_path, monkeypatch):
    """Each rule of the table can fail: checked on lab 4's own table, broken one way at a time."""
    import autograder.authoring.requirement_table as table_module

    lab = load_lab("lab4_collectives")
    cases = CASES_BY_LAB["lab4_collectives"]
    measured = MEASURED_VERDICTS["lab4_collectives"]
    rows = read_table(table_path(lab))
    first = next(r for r in rows if r.wrong)

    def problems_with(changed: list[Requirement]) -> list[str]:
        monkeypatch.setattr(table_module, "read_table", lambda path: changed)
        return table_problems(lab, cases, measured)

    assert problems_with(rows) == []
    others = [r for r in rows if r is not first]
    stale = Requirement(first.task, first.text + " and also in reverse", first.checks, first.wrong)
    assert any("text no longer says this" in p for p in problems_with([stale, *others]))
    unchecked = Requirement(first.task, first.text, (), first.wrong)
    assert any("no check enforces it" in p for p in problems_with([unchecked, *others]))
    assert any("enforces no requirement" in p for p in problems_with(others))
    unbroken = Requirement(first.task, first.text, first.checks, ())
    assert any("no known-grade case breaks it" in p for p in problems_with([unbroken, *others]))
    wider = [c for c in rows if c.task == first.task and c is not first][0]
    mismatched = Requirement(first.task, first.text, (*first.checks, *wider.checks), first.wrong)
    assert any("should score" in p for p in problems_with([mismatched, *others]))


def test_a_parametrized_check_is_worth_its_points_once_per_instance_and_each_instance_can_be_named():
    source = (
        "NAMES = {'y_ba': 1, 'y_a_rep': 2}\n"
        "@task('t2')\n@points(4)\n@pytest.mark.parametrize('name', list(NAMES))\ndef test_t2_layouts(name): ...\n"
        "@task('t3')\n@points(5)\n@pytest.mark.parametrize('name, shape', [('a', (16,)), ('b', (2,))])\n"
        "def test_t3_shapes(name, shape): ...\n"
        "@task('t3')\n@points(1)\ndef test_t3_plain(): ...\n"
    )
    checks = grader_checks(source)
    assert checks["test_t2_layouts"].total == 8
    assert checks["test_t2_layouts[y_a_rep]"].total == 4
    assert checks["test_t3_shapes"].instances == ("a-shape0", "b-shape1")
    assert checks["test_t3_shapes[b-shape1]"].task == "t3"
    assert checks["test_t3_plain"].total == 1


def test_a_literal_the_text_names_and_no_clause_quotes_is_named_unless_waived_with_a_reason():
    """Checked on lab 4's own table: the row quoting `big_lhs` and `big_rhs` removed, its literals are named;
    a waiver covers one, and a waiver of a literal the text does not name, or that a row quotes, is refused."""
    lab = load_lab("lab4_collectives")
    rows, texts = read_table(table_path(lab)), task_texts(lab.solution_path)
    waivers = read_waivers(table_path(lab))
    assert literal_problems(rows, waivers, texts) == []
    assert text_literals("Bind `t` to `f(x)` on `mesh`; `t` again") == ["t", "f(x)", "mesh"]
    quoting = [r for r in rows if "`big_lhs`" in r.text]
    assert quoting, "lab 4's table quotes big_lhs"
    without = [r for r in rows if r not in quoting]
    problems = literal_problems(without, waivers, texts)
    assert any("t5 names `big_lhs`" in p for p in problems) and any("`big_rhs`" in p for p in problems)
    waived = [*waivers, Waiver("t5", "big_lhs", "a reason"), Waiver("t5", "big_rhs", "a reason")]
    assert literal_problems(without, waived, texts) == []
    assert any("t5's text does not name it" in p for p in literal_problems(rows, [Waiver("t5", "nowhere", "x")], texts))
    assert any(
        "a requirement of t5 quotes it" in p for p in literal_problems(rows, [Waiver("t5", "big_lhs", "x")], texts)
    )
