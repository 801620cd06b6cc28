"""Points earned are never lost to the grader's own death: in Gradescope's container, results.json is
rewritten after each check, so a grader killed (memory, a signal, the time limit) leaves the points of
the checks it made, with the reason; run_autograder keeps that file and tells the instructor."""

import json
import shutil
import subprocess
import sys
import textwrap

from autograder.lab import load_lab

GRADER_KILLED_AFTER_TWO_CHECKS = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    import autograder.course.gradescope_run as gradescope
    from autograder.grading.results import CheckResult

    def grade_submission(root, config, on_check=None):
        done = [CheckResult("t1", "test_t1_values", "`A_sharded` holds A", 4.0, True, "", False),
                CheckResult("t2", "test_t2_layouts", "each layout", 3.0, False, "expected P('x', None)", False)]
        on_check(done[:1])
        on_check(done)
        os.kill(os.getpid(), signal.SIGKILL)  # as the container's out-of-memory killer would

    gradescope.protect_harness = lambda root: None  # this test's root is a scratch folder
    gradescope.grade_submission = grade_submission
    gradescope.run_gradescope(Path(sys.argv[1]))
""")


def test_a_grader_killed_after_some_checks_leaves_their_points_and_the_reason(tmp_path):
    root = tmp_path / "autograder"
    (root / "source").mkdir(parents=True)
    (root / "submission").mkdir()
    (root / "source" / "config.json").write_text(json.dumps({"lab": "lab2_three_ways"}))
    lab_notebook = root / "source" / "lab" / "assignments" / "lab2_three_ways" / "lab2_three_ways.ipynb"
    lab_notebook.parent.mkdir(parents=True)  # as the zip holds it
    shutil.copyfile(load_lab("lab2_three_ways").assignment_path, lab_notebook)
    killed = subprocess.run([sys.executable, "-c", GRADER_KILLED_AFTER_TWO_CHECKS, str(root)], capture_output=True)
    assert killed.returncode == -9
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 4.0
    assert [(t["name"], t["score"]) for t in results["tests"]] == [
        ("t1: `A_sharded` holds A", 4.0),
        ("t2: each layout", 0.0),
    ]
    assert "grading stopped before its end" in results["output"] and "after 2 of the lab's checks" in results["output"]
    assert results["extra_data"]["status"] == "grader error" and results["extra_data"]["max_score"] == 100


def test_run_autograder_keeps_the_points_of_a_grader_killed_for_memory_and_says_so(tmp_path):
    from autograder.course.gradescope_zip import RUN_AUTOGRADER

    root = tmp_path / "root"
    (root / "source").mkdir(parents=True)
    (root / "source" / "run_autograder").write_text(RUN_AUTOGRADER)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    kept = {"score": 12, "output": "grading stopped before its end ...", "tests": []}
    (bin_dir / "autograder").write_text(  # a grader that wrote its progress, then was killed
        '#!/bin/sh\nmkdir -p "$AUTOGRADER_GRADESCOPE_ROOT/results"\n'
        f"echo '{json.dumps(kept)}' > \"$AUTOGRADER_GRADESCOPE_ROOT/results/results.json\"\nexit 137\n"
    )
    (bin_dir / "autograder").chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "AUTOGRADER_GRADESCOPE_ROOT": str(root)}
    done = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, capture_output=True, text=True)
    assert done.returncode == 0
    assert json.loads((root / "results" / "results.json").read_text()) == kept
    assert "killed, most likely for memory, after some checks (their points are kept)" in done.stderr
