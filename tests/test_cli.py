"""The command line: exit codes, Gradescope JSON, the student's self-check, and bad input."""

import json
import subprocess
import sys

import nbformat

from autograder.cli import main
from autograder.lab import load_lab

LAB = load_lab("lab2_three_ways")


def test_grade_writes_gradescope_results(tmp_path, capsys):
    out = tmp_path / "results.json"
    assert main(["grade", str(LAB.assignment_path), "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["score"] == 0 and data["extra_data"]["max_score"] == 100
    assert {t["visibility"] for t in data["tests"]} == {"visible", "after_published"}
    assert "Total (score): 0 / 100" in capsys.readouterr().out


def test_check_runs_public_checks_only(capsys):
    assert main(["check", str(LAB.assignment_path)]) == 0
    printed = capsys.readouterr().out
    assert "public checks" in printed
    total = printed.split("Total (public checks): 0 / ")[1].split()[0]
    assert 0 < float(total) < 100


def test_not_a_notebook_gets_a_clear_reason(tmp_path, capsys):
    path = tmp_path / "essay.ipynb"
    path.write_text("Dear grader, here is my answer.")
    assert main(["grade", str(path), "--lab", "lab2_three_ways"]) == 2
    assert "not a notebook" in capsys.readouterr().out


def test_a_notebook_without_lab_metadata_needs_lab(tmp_path, capsys):
    nb = nbformat.read(LAB.assignment_path, as_version=4)
    nb.metadata = {}
    path = tmp_path / "stripped.ipynb"
    nbformat.write(nb, path)
    assert main(["grade", str(path)]) == 2
    assert "pass --lab" in capsys.readouterr().out
    assert main(["grade", str(path), "--lab", "lab2_three_ways"]) == 0


def test_an_nbformat_3_notebook_is_upgraded_and_graded(tmp_path, capsys):
    v3 = {
        "nbformat": 3,
        "nbformat_minor": 0,
        "metadata": {},
        "worksheets": [{"cells": [{"cell_type": "code", "input": "x = 1", "language": "python", "outputs": []}]}],
    }
    path = tmp_path / "old.ipynb"
    path.write_text(json.dumps(v3))
    assert main(["grade", str(path), "--lab", "lab2_three_ways"]) == 0
    assert "Status: graded" in capsys.readouterr().out


def test_unknown_lab_is_named(tmp_path, capsys):
    assert main(["grade", str(LAB.assignment_path), "--lab", "lab9"]) == 2
    assert "unknown lab 'lab9'" in capsys.readouterr().out


def test_module_entry_point_runs():
    done = subprocess.run([sys.executable, "-m", "autograder", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "assign" in done.stdout and "grade" in done.stdout


def test_the_program_ends_a_grade_with_its_output_and_exit_code_intact(tmp_path):
    """``autograder grade`` leaves without the interpreter's teardown: what it printed to a pipe and wrote
    to --json must still all be there."""
    path, out = tmp_path / "essay.ipynb", tmp_path / "results.json"
    path.write_text("Dear grader, here is my answer.")
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(path), "--lab", "lab2_three_ways", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert "not a notebook" in done.stdout and done.stdout.rstrip().endswith("/ 100")
    assert json.loads(out.read_text())["extra_data"]["status"] == "not a notebook"


def test_without_a_sandbox_grade_refuses_and_a_students_check_runs(monkeypatch, capsys):
    import autograder.run.sandbox.bubblewrap

    monkeypatch.setattr(autograder.run.sandbox.bubblewrap, "sandbox_problem", lambda: "`bwrap` is not installed")
    monkeypatch.setattr(autograder.run.sandbox.bubblewrap, "uid_sandbox_problem", lambda: "it needs root")
    assert main(["grade", str(LAB.assignment_path)]) == 2
    assert "cannot sandbox the kernel" in capsys.readouterr().err
    assert main(["check", str(LAB.assignment_path)]) == 0
    captured = capsys.readouterr()
    assert "running without the sandbox" in captured.err and "Total (public checks)" in captured.out


def test_batch_chooses_the_sandbox_as_grade_does_and_names_each_levels_reason(tmp_path, monkeypatch, capsys):
    import autograder.run.sandbox.bubblewrap

    (tmp_path / "class").mkdir()
    batch = ["batch", str(tmp_path / "class"), "--lab", LAB.id, "--out", str(tmp_path / "out")]
    monkeypatch.setattr(autograder.run.sandbox.bubblewrap, "sandbox_problem", lambda: "`bwrap` is not installed")
    monkeypatch.setattr(autograder.run.sandbox.bubblewrap, "uid_sandbox_problem", lambda: None)
    assert main(batch) == 0  # the uid level, which grade uses too, is not refused
    monkeypatch.setattr(autograder.run.sandbox.bubblewrap, "uid_sandbox_problem", lambda: "it needs root")
    assert main(batch) == 2
    err = capsys.readouterr().err
    assert "`bwrap` is not installed" in err and "the uid sandbox cannot either: it needs root" in err
