"""``autograder assign``: the student notebook from the solution, deterministic, and checked in CI."""

import nbformat
import pytest

from autograder.authoring import markers
from autograder.authoring.assign import assign_lab, render, student_notebook
from autograder.cli import main
from autograder.lab import lab_ids, load_lab
from autograder.run.plan import is_self_check_cell, is_self_check_code


def _solution(*cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    return nb


def raw(text):
    return nbformat.v4.new_raw_cell(text)


def code(text):
    return nbformat.v4.new_code_cell(text)


def question(name="t1", points=5):
    return raw(f"# BEGIN QUESTION\nname: {name}\npoints: {points}")


def test_answers_become_the_prompt_and_everything_else_stays():
    setup = code("import jax\nx = 1")
    answer = code("# BEGIN SOLUTION\ny = x + 1\n# END SOLUTION")
    partial = code("def f(a):\n    # BEGIN SOLUTION\n    return a\n    # END SOLUTION")
    nb = _solution(
        setup, question(), nbformat.v4.new_markdown_cell("Bind `y`."), answer, partial, raw("# END QUESTION")
    )
    student = student_notebook(nb, "labX")
    sources = [c.source for c in student.cells if not is_self_check_cell(c)]
    assert sources == ["import jax\nx = 1", "Bind `y`.", "### Your code here", "def f(a):\n    ### Your code here"]
    tags = [c.metadata["autograder"] for c in student.cells if not is_self_check_cell(c)]
    assert tags == [
        {"task": None, "answer": False},
        {"task": "t1", "answer": False},
        {"task": "t1", "answer": True},
        {"task": "t1", "answer": True},
    ]
    assert student.metadata["autograder"] == {"lab": "labX", "tasks": [{"id": "t1", "points": 5.0}]}


def test_outputs_are_cleared():
    cell = code("x = 1")
    cell.outputs = [nbformat.v4.new_output("stream", text="hi")]
    cell.execution_count = 3
    student = student_notebook(_solution(cell), "labX")
    assert student.cells[0].outputs == [] and student.cells[0].execution_count is None


@pytest.mark.parametrize(
    "cells, words",
    [
        ([question(), code("x = 1")], "no END QUESTION"),
        ([raw("# END QUESTION")], "without BEGIN QUESTION"),
        ([question("t2"), raw("# END QUESTION")], "task ids must be"),
        ([raw("# BEGIN QUESTION\nname: t1"), raw("# END QUESTION")], "points"),
        ([code("# BEGIN SOLUTION\nx = 1\n# END SOLUTION")], "outside a question"),
        ([question(), code("# BEGIN SOLUTION\nx = 1"), raw("# END QUESTION")], "unbalanced"),
    ],
)
def test_malformed_markers_are_named(cells, words):
    with pytest.raises(markers.MarkerError, match=words):
        student_notebook(_solution(*cells), "labX")


@pytest.mark.parametrize("lab_id", lab_ids())
def test_assignments_are_up_to_date_and_deterministic(lab_id):
    lab = load_lab(lab_id)
    solution = nbformat.read(lab.solution_path, as_version=4)
    first = render(student_notebook(solution, lab_id))
    assert first == render(student_notebook(solution, lab_id))
    assert lab.assignment_path.read_text(encoding="utf-8") == first


@pytest.mark.parametrize("lab_id", lab_ids())
def test_locked_cells_are_the_solutions_byte_for_byte(lab_id):
    lab = load_lab(lab_id)
    solution = nbformat.read(lab.solution_path, as_version=4)
    by_id = {c.id: c for c in solution.cells}
    for cell in lab.template.cells:
        if not cell.metadata["autograder"]["answer"] and not is_self_check_cell(cell):
            assert cell.source == by_id[cell.id].source


def test_a_self_check_cell_follows_each_task_and_one_explains_them_after_the_first_cell():
    first = nbformat.v4.new_markdown_cell("# Lab X")
    nb = _solution(
        first,
        code("import jax"),
        question("t1"),
        code("# BEGIN SOLUTION\ny = 1\n# END SOLUTION"),
        code("print(y)"),
        raw("# END QUESTION"),
        nbformat.v4.new_markdown_cell("Between."),
        question("t2"),
        code("# BEGIN SOLUTION\nz = 2\n# END SOLUTION"),
        raw("# END QUESTION"),
    )
    student = student_notebook(nb, "labX")
    kinds = [
        ("check " if is_self_check_cell(c) else "") + (c.metadata["autograder"]["task"] or "-") for c in student.cells
    ]
    assert kinds == ["-", "check -", "-", "t1", "t1", "check t1", "-", "t2", "check t2"]
    assert "ag.check(" in student.cells[1].source and student.cells[1].cell_type == "markdown"
    assert student.cells[5].source.splitlines()[-1] == 'ag.check("t1", lab="labX")'
    assert is_self_check_code(student.cells[5].source) and student.cells[5].id == "check-t1"
    assert student.cells[8].metadata["autograder"] == {"task": "t2", "answer": False, "check": True}


@pytest.mark.parametrize("lab_id", lab_ids())
def test_every_task_of_a_lab_has_its_self_check_cell(lab_id):
    lab = load_lab(lab_id)
    self_checks = [c for c in lab.template.cells if is_self_check_cell(c) and c.cell_type == "code"]
    assert [c.metadata["autograder"]["task"] for c in self_checks] == [t.id for t in lab.tasks]
    assert all(f'lab="{lab_id}"' in c.source for c in self_checks)


def test_compare_only_reports_a_stale_assignment(tmp_path):
    lab = load_lab("lab2_three_ways")
    target = tmp_path / "assignment.ipynb"
    assert assign_lab(lab.solution_path, target, lab.id, compare_only=True).changed
    assert not target.exists()
    assign_lab(lab.solution_path, target, lab.id, compare_only=False)
    assert not assign_lab(lab.solution_path, target, lab.id, compare_only=True).changed
    target.write_text(target.read_text().replace("Your code here", "Your code"))
    assert assign_lab(lab.solution_path, target, lab.id, compare_only=True).changed
    assert assign_lab(lab.solution_path, target, lab.id, check=True).changed  # the earlier name
    assert "Your code here" not in target.read_text()


def test_cli_compare_exits_nonzero_naming_the_stale_file(tmp_path, monkeypatch, capsys):
    for lab_id in lab_ids():
        (tmp_path / "solutions" / lab_id).mkdir(parents=True)
        src = load_lab(lab_id).solution_path
        if src.exists():
            (tmp_path / "solutions" / lab_id / src.name).write_bytes(src.read_bytes())
    monkeypatch.setenv("AUTOGRADER_ROOT", str(tmp_path))
    labs = [lab for lab in lab_ids() if (tmp_path / "solutions" / lab / f"{lab}.ipynb").exists()]
    assert main(["assign", "--compare", *labs]) == 1
    assert "is stale" in capsys.readouterr().out
    assert main(["assign", "--check", *labs]) == 1  # --compare's earlier name, hidden from the help
    assert "--check" not in _assign_help(capsys)
    assert main(["assign", "--no-verify", *labs]) == 0
    assert main(["assign", "--compare", *labs]) == 0
    assert main(["assign", "--check", *labs]) == 0


def _assign_help(capsys) -> str:
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["assign", "--help"])
    return capsys.readouterr().out
