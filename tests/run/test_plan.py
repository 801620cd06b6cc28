"""Aligning a submission with its lab's template: locked cells, answers, added cells, captures."""

import copy

import nbformat
import pytest

from autograder.authoring.assign import new_self_check_cell
from autograder.authoring.known_grades import answer_cells, solution_answers
from autograder.lab import lab_ids, load_lab
from autograder.run.plan import CaptureTask, RunCell, build_plan, is_self_check_cell, is_self_check_code


def _template():
    cells = [
        ("setup", None, False, "import jax\nA = 1"),
        ("prompt1", "t1", False, None),
        ("answer1", "t1", True, "### Your code here"),
        ("show1", "t1", False, "print(y)"),
        ("between", None, False, "B = 2"),
        ("answer2", "t2", True, "### Your code here"),
    ]
    nb = nbformat.v4.new_notebook()
    for cell_id, task, answer, source in cells:
        cell = nbformat.v4.new_markdown_cell("Task") if source is None else nbformat.v4.new_code_cell(source)
        cell.id = cell_id
        cell.metadata["autograder"] = {"task": task, "answer": answer}
        nb.cells.append(cell)
    nb.metadata["autograder"] = {"lab": "x", "tasks": [{"id": "t1", "points": 1}, {"id": "t2", "points": 1}]}
    return nb


def _steps(plan):
    return [("capture", s.task) if isinstance(s, CaptureTask) else (s.origin, s.source) for s in plan.steps]


def _answered(template, **answers):
    nb = copy.deepcopy(template)
    for cell in nb.cells:
        if cell.id in answers:
            cell.source = answers[cell.id]
    return nb


def test_locked_cells_run_in_the_labs_version_and_captures_follow_each_task():
    template = _template()
    plan = build_plan(template, _answered(template, answer1="y = A", answer2="z = B"))
    assert _steps(plan) == [
        ("lab", "import jax\nA = 1"),
        ("student", "y = A"),
        ("lab", "print(y)"),
        ("capture", "t1"),
        ("lab", "B = 2"),
        ("student", "z = B"),
        ("capture", "t2"),
    ]
    assert plan.changes == ()


def test_an_edited_locked_cell_is_replaced_and_reported():
    template = _template()
    plan = build_plan(template, _answered(template, setup="A = 'hacked'", answer2="z = 1"))
    assert ("lab", "import jax\nA = 1") in _steps(plan)
    assert ("lab", "A = 'hacked'") not in _steps(plan)
    assert plan.changes == ("cell 1 is a lab cell that was edited; the lab's version was run",)


def test_a_deleted_locked_cell_is_restored():
    template = _template()
    nb = _answered(template, answer2="z = B")
    del nb.cells[4]
    plan = build_plan(template, nb)
    assert ("lab", "B = 2") in _steps(plan)
    assert any("deleted" in change for change in plan.changes)


def test_added_cells_belong_to_the_task_they_follow():
    template = _template()
    nb = _answered(template, answer1="y = 1", answer2="z = 1")
    nb.cells.insert(3, nbformat.v4.new_code_cell("y = y + 1"))
    steps = _steps(build_plan(template, nb))
    assert steps.index(("student", "y = y + 1")) < steps.index(("capture", "t1"))


def test_stripped_metadata_and_ids_still_align_by_locked_source():
    template = _template()
    nb = _answered(template, answer1="y = A", answer2="z = B")
    for index, cell in enumerate(nb.cells):
        cell.id = f"other{index}"
        cell.metadata = {}
    steps = _steps(build_plan(template, nb))
    # answers are not recognisable any more, but they follow the locked cell before them
    assert steps.index(("student", "y = A")) < steps.index(("capture", "t1")) < steps.index(("student", "z = B"))


def test_lab_cells_after_the_students_last_code_are_skipped():
    template = _template()
    steps = _steps(build_plan(template, _answered(template, answer1="y = A")))
    assert steps == [("lab", "import jax\nA = 1"), ("student", "y = A"), ("capture", "t1"), ("capture", "t2")]
    assert [s for s in _steps(build_plan(template, template)) if s[0] != "capture"] == []


def _with_self_check_cells(nb):
    """The notebook with a self-check cell after each task's last cell, as ``assign`` makes them."""
    nb = copy.deepcopy(nb)
    cells = []
    for index, cell in enumerate(nb.cells):
        cells.append(cell)
        task = cell.metadata["autograder"]["task"]
        later = [c.metadata["autograder"]["task"] for c in nb.cells[index + 1 :]]
        if task is not None and task not in later:
            cells.append(new_self_check_cell(task, "x"))
    nb.cells = cells
    return nb


def _runs(plan):
    """What grading does: the code run (and where it comes from) and where facts are read."""
    return [("capture", s.task) if isinstance(s, CaptureTask) else (s.origin, s.source, s.task) for s in plan.steps]


def test_self_check_cells_are_not_run_and_old_submissions_without_them_plan_the_same():
    old_template = _template()
    template = _with_self_check_cells(old_template)
    assert sum(is_self_check_cell(c) for c in template.cells) == 2
    answers = {"answer1": "y = A", "answer2": "z = B"}
    kept = build_plan(template, _answered(template, **answers))
    old = build_plan(template, _answered(old_template, **answers))
    assert _runs(kept) == _runs(old) == _runs(build_plan(old_template, _answered(old_template, **answers)))
    assert kept.changes == old.changes == ()
    assert not any("check" in s.source for s in kept.steps if isinstance(s, RunCell))


def test_edited_deleted_or_copied_self_check_cells_are_not_run():
    template = _with_self_check_cells(_template())
    reference = _runs(build_plan(template, _answered(template, answer1="y = A", answer2="z = B")))
    nb = _answered(template, answer1="y = A", answer2="z = B")
    self_checks = [c for c in nb.cells if is_self_check_cell(c)]
    self_checks[0].source = "import autograder.self_check as ag\nag.check()"  # edited, still only a self-check
    nb.cells.remove(self_checks[1])  # deleted
    copied = copy.deepcopy(self_checks[0])
    copied.id = "copied"
    nb.cells.append(copied)
    nb.cells.insert(1, nbformat.v4.new_code_cell("ag.check('t1')"))  # added by the student
    plan = build_plan(template, nb)
    assert _runs(plan) == reference and plan.changes == ()


def test_code_put_in_a_self_check_cell_is_reported_as_not_run():
    template = _with_self_check_cells(_template())
    nb = _answered(template, answer1="y = A", answer2="z = B")
    self_check = next(c for c in nb.cells if is_self_check_cell(c))
    self_check.source += "\nw = 3"
    plan = build_plan(template, nb)
    assert not any("w = 3" in s.source for s in plan.steps if isinstance(s, RunCell))
    position = nb.cells.index(self_check) + 1
    assert plan.changes == (
        f"cell {position} is a check cell holding other code: check cells are not run when "
        "grading, so that code was not run",
    )


def test_a_cell_is_self_check_code_only_when_it_does_nothing_but_the_self_check():
    assert is_self_check_code('import autograder.self_check as ag\nag.check("t1", lab="x")')
    assert is_self_check_code("ag.check()") and is_self_check_code(
        "from autograder.self_check import check\ncheck('t2')"
    )
    assert is_self_check_code('import autograder.notebook as ag\nag.check("t1")')  # assigned before the rename
    assert is_self_check_code("from autograder import notebook\nnotebook.check()")
    assert not is_self_check_code("import autograder.grading as ag\nag.check()")
    assert not is_self_check_code("ag.check()\ny = 1")
    assert (
        not is_self_check_code("model.check()")
        and not is_self_check_code("# ag.check()")
        and not is_self_check_code("ag.check(")
    )


@pytest.mark.parametrize("lab_id", lab_ids())
def test_a_lab_submission_plans_the_same_with_or_without_its_self_check_cells(lab_id):
    lab = load_lab(lab_id)
    nb = copy.deepcopy(lab.template)
    solved = solution_answers(lab)
    for task, indices in answer_cells(nb).items():
        for index, source in zip(indices, solved[task]):
            nb.cells[index].source = source
    without = copy.deepcopy(nb)
    without.cells = [c for c in nb.cells if not is_self_check_cell(c)]
    assert len(without.cells) == len(nb.cells) - len(lab.tasks) - 1
    with_self_checks, old = build_plan(lab.template, nb), build_plan(lab.template, without)
    assert _runs(with_self_checks) == _runs(old)
    assert with_self_checks.changes == old.changes == ()
    assert [s.task for s in with_self_checks.steps if isinstance(s, CaptureTask)] == [t.id for t in lab.tasks]
