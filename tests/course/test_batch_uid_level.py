"""``autograder batch`` as root where bubblewrap is not on PATH grades at the uid level with Landlock, as
``grade`` and Gradescope's zip do: the class is graded, each result names that level, and a student whose
code reads a classmate's notebook from the disk (readable by any user) gets none of its points."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from gradescope_session import path_without, traversable_scratch
from uid_level import private_harness, python_for_the_uid_level, skip_without_the_uid_level

from autograder.authoring.known_grades import make_submission, solved
from autograder.course.gradebook import GRADE_FILE
from autograder.lab import load_lab
from autograder.run.sandbox.bubblewrap import readable_by_others
from autograder.run.sandbox.confinement import filter_problem

LAB = load_lab("lab4_collectives")  # the quickest lab to run
T1, T2 = (int(task.points) for task in LAB.tasks if task.id in ("t1", "t2"))
LEVEL = "uid+seccomp+landlock" if filter_problem() is None else "uid+landlock"

READ_CLASSMATE = """
import json
classmate = json.load(open({path!r}))
for cell in classmate['cells']:
    meta = cell['metadata'].get('autograder', {{}})
    if meta.get('task') == 't1' and meta.get('answer'):
        exec(''.join(cell['source']))
"""


def test_a_batch_without_bubblewrap_grades_at_the_uid_level_and_a_classmates_notebook_stays_unread():
    skip_without_the_uid_level()
    scratch, private = traversable_scratch(), tempfile.mkdtemp(prefix="autograder-private-harness-")
    try:
        checkout = private_harness(Path(private), LAB)
        folder = scratch / "class"
        folder.mkdir(mode=0o755)
        classmate = make_submission(LAB, solved("t1", "t2"), folder / "solver.ipynb")
        os.chmod(classmate, 0o644)
        assert readable_by_others(classmate)  # only the sandbox keeps it from the reader's kernel
        make_submission(
            LAB, {"t1": READ_CLASSMATE.format(path=str(classmate)), **solved("t2")}, folder / "reader.ipynb"
        )
        env = {k: v for k, v in os.environ.items() if k not in ("AUTOGRADER_ROOT", "AUTOGRADER_COURSE")}
        env.update(PATH=path_without(scratch / "no-bwrap", "bwrap"), PYTHONPATH=str(checkout))
        out = scratch / "out"
        command = [sys.executable, "-m", "autograder", "batch", str(folder), "--lab", LAB.id, "--out", str(out)]
        with python_for_the_uid_level():
            done = subprocess.run(
                [*command, "--workers", "1", "--cell-timeout", "30"],
                cwd=checkout,
                env=env,
                capture_output=True,
                text=True,
                timeout=900,
            )
        assert done.returncode == 0, done.stderr[-3000:]
        with open(out / "grades.csv", newline="") as handle:
            rows = {row["student"]: row for row in csv.DictReader(handle)}
        assert {student: (row["t1"], row["t2"]) for student, row in rows.items()} == {
            "solver": (f"{T1}", f"{T2}"),
            "reader": ("0", f"{T2}"),
        }, {student: row["reason"] for student, row in rows.items()}
        assert {row["sandbox"] for row in rows.values()} == {LEVEL}
        reader = json.loads((out / "reader" / GRADE_FILE).read_text())
        assert any("PermissionError" in error for error in reader["cell_errors"]), reader["cell_errors"]
        results = json.loads((out / "solver" / "results.json").read_text())
        assert results["extra_data"]["sandbox"] == LEVEL
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(private, ignore_errors=True)
