"""A student notebook older than its solution is refused: in a course folder outside this repository, a
lab assigned and then its solution edited (its points), ``grade``, ``check``, ``test``, ``batch`` and
``gradescope`` stop with exit 2 and say to run ``autograder assign LAB``, before anything runs; with
``--allow-stale-assignment`` they go on; once assigned, the lab grades with its new points. The verdict is
kept on the machine, the bundled labs are never refused, a lab without a solution has nothing to compare,
and a student's ``ag.check`` in the notebook is never refused."""

from __future__ import annotations

import sys

import nbformat
import pytest

import autograder.authoring
import autograder.authoring.assign
import autograder.course
import autograder.grading
import autograder.labs
from autograder.authoring import stale_assignment
from autograder.cli import main
from autograder.cli.options import STALE_OPTION as OPTION
from autograder.lab import bundled_lab_ids, load_lab
from autograder.paths import COURSE_ENVIRONMENT

LAB = "lab7_edited"
ADVICE = f"run `autograder assign {LAB}`"


class WentOn(Exception):
    """Raised by a command's machinery, stubbed: the command got past the refusal."""


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A course of one lab, assigned, whose solution was then edited: its one task is worth 34 points now."""
    monkeypatch.delenv(COURSE_ENVIRONMENT, raising=False)
    monkeypatch.setattr(autograder.labs, "__path__", list(autograder.labs.__path__))
    root = tmp_path / "course"
    root.mkdir()
    monkeypatch.chdir(root)
    assert main(["new-lab", LAB, "--tasks", "1"]) == 0
    assert main(["assign", LAB, "--no-verify"]) == 0
    solution = root / "solutions" / LAB / f"{LAB}.ipynb"
    solution.write_text(solution.read_text().replace("points: 100", "points: 34"))
    yield root
    for name in [m for m in sys.modules if m.startswith(f"autograder.labs.{LAB}")]:
        del sys.modules[name]


def _went_on(*args, **kwargs):
    raise WentOn(args)


def _stub_machinery(monkeypatch) -> None:
    """Each command's machinery raises WentOn: nothing is executed, graded or built."""
    monkeypatch.setattr(autograder.grading, "grade_notebook", _went_on)
    monkeypatch.setattr(autograder.authoring, "run_lab_tests", _went_on)
    monkeypatch.setattr(autograder.course, "run_batch", _went_on)
    monkeypatch.setattr(autograder.course, "build_autograder_zip", _went_on)


@pytest.fixture
def stubbed(monkeypatch):
    _stub_machinery(monkeypatch)


def _commands(root) -> dict[str, list[str]]:
    notebook = str(root / "assignments" / LAB / f"{LAB}.ipynb")
    return {
        "grade": ["grade", notebook, "--no-sandbox"],
        "grade --lab": ["grade", str(root / "not-a-notebook.txt"), "--lab", LAB, "--no-sandbox"],
        "check": ["check", notebook, "--no-sandbox"],
        "test": ["test", LAB],
        "batch": ["batch", str(root / "assignments"), "--lab", LAB, "--out", str(root / "grades"), "--no-sandbox"],
        "gradescope": ["gradescope", LAB, "--out", str(root / "autograder.zip")],
    }


COMMANDS = ["grade", "grade --lab", "check", "test", "batch", "gradescope"]


@pytest.mark.parametrize("command", COMMANDS)
def test_a_command_refuses_a_student_notebook_older_than_its_solution(course, stubbed, command, capsys):
    assert main(_commands(course)[command]) == 2
    said = capsys.readouterr().err
    assert ADVICE in said and OPTION in said
    assert not (course / "grades").exists() and not (course / "autograder.zip").exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_with_the_option_a_command_goes_on(course, stubbed, command):
    argv = _commands(course)[command]
    argv = [*argv[:1], OPTION, *argv[1:]]
    with pytest.raises(WentOn):
        main(argv)


def test_the_option_may_follow_the_lab_of_test_and_is_not_given_to_pytest(course, stubbed):
    with pytest.raises(WentOn) as went:
        main(["test", LAB, "-x", OPTION])
    assert went.value.args[0] == (LAB, ["-x"])


def test_once_assigned_every_command_goes_on_and_the_lab_grades_with_its_new_points(course, monkeypatch, capsys):
    assert main(["assign", LAB, "--no-verify"]) == 0
    notebook = course / "assignments" / LAB / f"{LAB}.ipynb"
    assert main(["grade", str(notebook), "--no-sandbox", "--seed", "1"]) == 0
    assert "Total (score): 0 / 34" in capsys.readouterr().out
    with monkeypatch.context() as patched:
        _stub_machinery(patched)
        for command in COMMANDS:
            with pytest.raises(WentOn):
                main(_commands(course)[command])


def test_a_verdict_of_current_is_kept_until_a_notebook_changes(course, monkeypatch, tmp_path):
    monkeypatch.setenv("AUTOGRADER_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["assign", LAB, "--no-verify"]) == 0
    lab = load_lab(LAB)
    assert stale_assignment(lab) is None
    compared = []

    def compare(*args, **kwargs):
        compared.append(args)
        return autograder.authoring.assign.AssignOutcome(LAB, lab.assignment_path, changed=True)

    monkeypatch.setattr(autograder.authoring.assign, "assign_lab", compare)
    assert stale_assignment(lab) is None and not compared  # read from the cache: nothing compared
    nb = nbformat.read(lab.assignment_path, as_version=4)
    nb.cells[0].source += "\n\nEdited by hand."
    nbformat.write(nb, lab.assignment_path)
    assert ADVICE in (stale_assignment(lab) or "") and compared


def test_the_bundled_labs_are_never_refused(monkeypatch, tmp_path):
    monkeypatch.setenv("AUTOGRADER_CACHE_DIR", str(tmp_path / "cache"))  # compared, not read from a cache
    for lab_id in bundled_lab_ids():
        assert stale_assignment(load_lab(lab_id)) is None, lab_id


def test_a_lab_without_its_solution_has_nothing_to_compare(course):
    """As in a student's install of the course's notebooks, or in Gradescope's container."""
    lab = load_lab(LAB)
    assert stale_assignment(lab) is not None
    lab.solution_path.unlink()
    assert stale_assignment(lab) is None


def test_a_students_self_check_in_the_notebook_is_never_refused(course):
    """``ag.check`` runs no command: in a notebook of the stale lab it checks as it always did."""
    import autograder.self_check as ag

    report = ag.self_check_namespace({}, None, LAB)
    assert report.problem is None and [t.task for t in report.tasks] == ["t1"]
