"""``autograder gradescope LAB --try SUBMISSION``: the zip is installed and run in a scratch folder, as
Gradescope would run it, and the results are printed; no system folder is written and the scratch folder
goes."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from gradescope_session import remove_scratch, traversable_scratch

from autograder.authoring.known_grades import make_submission, solved
from autograder.cli import main
from autograder.lab import load_lab

LAB = load_lab("lab4_collectives")  # the quickest lab to run
T1 = next(task.points for task in LAB.tasks if task.id == "t1")
# where setup.sh installs by default, as root: the image's folders
SYSTEM_FOLDERS = (Path("/opt/autograder-venv"), Path("/opt/autograder-cache"), Path("/usr/local/bin/autograder"))


def _state(path: Path) -> tuple[bool, int]:
    return (path.exists(), path.stat().st_mtime_ns if path.exists() else 0)


@pytest.mark.slow
def test_try_grades_a_submission_with_the_zip_in_a_scratch_folder(tmp_path, monkeypatch, capsys):
    before = {path: _state(path) for path in SYSTEM_FOLDERS}
    scratch_parent = traversable_scratch()  # the kernels' uids search their way to the scratch venv's Python
    monkeypatch.setattr(tempfile, "tempdir", str(scratch_parent))
    try:
        notebook = make_submission(LAB, solved("t1"), tmp_path / "mine.ipynb")
        code = main(["gradescope", LAB.id, "--out", str(tmp_path / "autograder.zip"), "--try", str(notebook)])
        printed = capsys.readouterr()
        assert code == 0, printed.err[-3000:]
        assert f"score: {T1:g} / {LAB.max_score:g} (sandbox: " in printed.out, printed.out[-3000:]
        assert "Status: graded" in printed.out
        assert {path: _state(path) for path in SYSTEM_FOLDERS} == before
        assert list(scratch_parent.iterdir()) == []  # the try's scratch folder is removed
    finally:
        remove_scratch(scratch_parent)


def test_try_names_a_missing_submission(tmp_path, capsys):
    code = main(["gradescope", LAB.id, "--out", str(tmp_path / "autograder.zip"), "--try", str(tmp_path / "none")])
    assert code == 2 and "does not exist" in capsys.readouterr().err
