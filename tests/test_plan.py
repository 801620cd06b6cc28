"""Aligning a submission with its lab's template: locked cells, answers, added cells, captures."""

import copy

import nbformat

from autograder.plan import CaptureTask, RunCell, build_plan


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
        ("lab", "import jax\nA = 1"), ("student", "y = A"), ("lab", "print(y)"), ("capture", "t1"),
        ("lab", "B = 2"), ("student", "z = B"), ("capture", "t2"),
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
