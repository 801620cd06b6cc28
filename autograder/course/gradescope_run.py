"""What runs in Gradescope's container for each submission (``autograder gradescope-run``, called by the
zip's ``run_autograder``): the harness's files made private (a kernel at the uid level cannot read them),
the one notebook in ``ROOT/submission`` graded, and ``ROOT/results/results.json`` always written.
"""

from __future__ import annotations

import os
import time
import traceback
from pathlib import Path

from autograder.course.gradescope_config import LAB_DIR, GradescopeConfig, read_config
from autograder.paths import COURSE_ENVIRONMENT, COURSE_FILE, PACKAGE_DIR
from autograder.run import OUT_OF_MEMORY, SandboxUnavailable, megabytes, memory_limit_bytes

# The grading modules load JAX: they are imported where used, so that `autograder --help` stays quick.

ROOT_VARIABLE = "AUTOGRADER_GRADESCOPE_ROOT"
DEFAULT_ROOT = "/autograder"
# In a container with less memory, the graders load only once the kernel has ended (grading/pipeline.py: overlap).
OVERLAP_FROM_BYTES = 2 * 2**30


def protect_harness(root: Path) -> None:
    """Make private to root what a kernel must not read or write (the kernel gets a copy of the submission)."""
    from autograder.caches import cache_root

    for directory in (root / "source", root / "results", root / "submission", PACKAGE_DIR, cache_root()):
        if directory.is_dir():
            try:
                os.chmod(directory, 0o700)
            except OSError:  # a read-only file system: fine if it is private already
                if os.stat(directory).st_mode & 0o077:
                    raise
    metadata_file = root / "submission_metadata.json"
    if metadata_file.is_file():
        os.chmod(metadata_file, 0o600)


def find_notebook(submission: Path) -> Path | str:
    """The one notebook submitted, or why there is not exactly one."""
    files = sorted(
        p
        for p in submission.rglob("*")
        if p.is_file()
        and not p.is_symlink()
        and not any(part.startswith((".", "__MACOSX")) for part in p.relative_to(submission).parts)
    )
    notebooks = [p for p in files if p.suffix == ".ipynb"]
    names = ", ".join(str(p.relative_to(submission)) for p in (notebooks or files)[:10])
    if len(notebooks) == 1:
        return notebooks[0]
    if notebooks:
        return f"the submission holds {len(notebooks)} notebooks ({names}); submit exactly one .ipynb file"
    if files:
        return f"the submission holds no notebook (.ipynb file), only: {names}"
    return "the submission is empty: submit your notebook (.ipynb file)"


def grade_submission(root: Path, config: GradescopeConfig, on_check=None):
    """Grade the one notebook in ``root/submission``; ``on_check`` is given the checks done so far after each."""
    from autograder.grading import GradeOptions, GradeResult, GradeStatus, grade_notebook
    from autograder.lab import load_lab

    found = find_notebook(root / "submission")
    if isinstance(found, str):
        return GradeResult(
            config.lab, str(root / "submission"), GradeStatus.NOT_A_NOTEBOOK, found, load_lab(config.lab).max_score
        )
    limit = memory_limit_bytes()
    overlap = limit is None or limit >= OVERLAP_FROM_BYTES
    return grade_notebook(found, GradeOptions(config.lab, limits=config.limits, overlap=overlap, on_check=on_check))


STOPPED_BEFORE_THE_END = (
    "grading stopped before its end (the autograder was stopped: out of memory, a signal or "
    "the time limit) after {done} of the lab's checks; the points of the checks below are kept"
)


def checked_so_far(lab_id: str, notebook: str, checks: list):
    """The result to keep should the grader die now: the checks done, each task out of its full points."""
    from autograder.grading import GradeResult, GradeStatus, TaskResult
    from autograder.lab import load_lab

    lab = load_lab(lab_id)
    tasks = tuple(TaskResult(task.id, task.points, tuple(c for c in checks if c.task == task.id)) for task in lab.tasks)
    reason = STOPPED_BEFORE_THE_END.format(done=len(checks))
    return GradeResult(lab_id, notebook, GradeStatus.GRADER_ERROR, reason, lab.max_score, tasks=tasks)


def run_gradescope(root: Path):
    """Grade the submission under ``root`` and write results/results.json, whatever happens."""
    from autograder.grading import RESULTS_FILE, GradeResult, GradeStatus, print_grade, write_results_json

    started = time.monotonic()
    results = root / "results"
    results.mkdir(parents=True, exist_ok=True)
    hidden_visibility, lab = "after_published", None

    def write(result: GradeResult) -> None:
        data = {**result.to_gradescope(hidden_visibility), "execution_time": round(time.monotonic() - started)}
        write_results_json(results / RESULTS_FILE, data)

    try:
        config = read_config(root / "source")
        hidden_visibility, lab = config.hidden_visibility, config.lab
        protect_harness(root)
        # The zip's course folder: the lab's student notebook, and a course's own lab's graders (a zip
        # built before courses has the notebook alone, and no marker).
        lab_folder = root / "source" / LAB_DIR
        os.environ["AUTOGRADER_ROOT"] = str(lab_folder)
        if (lab_folder / COURSE_FILE).is_file():
            os.environ[COURSE_ENVIRONMENT] = str(lab_folder)
        else:
            os.environ.pop(COURSE_ENVIRONMENT, None)

        def keep(checks: list) -> None:  # points earned are kept should the grader be killed later
            write(checked_so_far(config.lab, str(root / "submission"), checks))

        result = grade_submission(root, config, on_check=keep)
    except Exception as exc:  # the grader's own failure: still a results.json, and the traceback in stdout
        if isinstance(exc, SandboxUnavailable):
            reason = f"this grading machine cannot sandbox notebooks, so none was run: {exc}"
        else:
            traceback.print_exc()
            reason = f"the autograder failed ({type(exc).__name__}: {exc}); please tell your instructor"
        result = GradeResult(lab, str(root / "submission"), GradeStatus.GRADER_ERROR, reason, 0.0)
    write(result)
    print_grade(result)
    if OUT_OF_MEMORY in (result.reason or ""):
        limit = memory_limit_bytes()
        print(
            f"Out of memory: the notebook's kernel was killed when the container's memory "
            f"({megabytes(limit) if limit else 'its limit'}) ran out. Raise the memory limit in this "
            "assignment's Autograder Settings on Gradescope (README: Grading on Gradescope gives each lab's)."
        )
    return result
