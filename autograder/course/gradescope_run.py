"""What runs in Gradescope's container for each submission (``autograder gradescope-run``, called by the
zip's ``run_autograder``): the harness's files made private (a kernel at the uid level cannot read them),
the one notebook in ``ROOT/submission`` graded, and ``ROOT/results/results.json`` always written; and the
assignment's settings it grades with, which the zip's config.json holds.
"""

from __future__ import annotations

import json
import os
import time
import traceback
from dataclasses import dataclass, replace
from pathlib import Path

from autograder.paths import COURSE_ENVIRONMENT, COURSE_FILE, PACKAGE_DIR
from autograder.run import GIB, OUT_OF_MEMORY, Limits, ResourceLimits, SandboxUnavailable, megabytes, memory_limit_bytes

# The grading modules load JAX: they are imported where used, so that `autograder --help` stays quick.

CONFIG_FILE = "config.json"
LAB_DIR = "lab"  # in the source folder: the project root of the lab's notebooks ($AUTOGRADER_ROOT)
HIDDEN_VISIBILITIES = ("hidden", "after_due_date", "after_published")  # Gradescope's, for hidden checks
# A notebook has 480 s there, under Gradescope's default autograder timeout of 10 minutes, so that the results
# are written before Gradescope ends the run; its kernel is always sandboxed, and always saves memory: the
# default container has 768 MB, and a container whose cgroup cannot be read would show the host's memory.
GRADESCOPE_SANDBOX = ResourceLimits()
GRADESCOPE_LIMITS = replace(Limits(), total_timeout=480.0, sandbox=GRADESCOPE_SANDBOX, saves_memory=True)


class GradescopeError(RuntimeError):
    """The zip cannot be built here, or the container holds no usable configuration."""


def _settings(limits: Limits) -> dict[str, float]:
    """The limits an instructor may set (``autograder gradescope``'s options), under config.json's keys."""
    if limits.sandbox is None:
        raise GradescopeError("Gradescope's kernels are always sandboxed")
    memory_gib = limits.sandbox.memory_bytes / GIB
    return {"cell_timeout": limits.cell_timeout, "total_timeout": limits.total_timeout, "memory_gib": memory_gib}


def _limits(cell_timeout: float, total_timeout: float, memory_gib: float) -> Limits:
    """``GRADESCOPE_LIMITS`` with the settings under config.json's keys (``_settings``)."""
    sandbox = replace(GRADESCOPE_SANDBOX, memory_bytes=int(memory_gib * GIB))
    return replace(GRADESCOPE_LIMITS, cell_timeout=cell_timeout, total_timeout=total_timeout, sandbox=sandbox)


@dataclass(frozen=True)
class GradescopeConfig:
    """The zip's config.json: the lab, when students see its hidden checks, and ``GRADESCOPE_LIMITS`` but for
    the three an instructor may set."""

    lab: str
    hidden_visibility: str = "after_published"
    limits: Limits = GRADESCOPE_LIMITS

    def __post_init__(self):
        if self.hidden_visibility not in HIDDEN_VISIBILITIES:
            raise GradescopeError(
                f"hidden_visibility must be one of {', '.join(HIDDEN_VISIBILITIES)}, not {self.hidden_visibility!r}"
            )
        if self.limits != _limits(**_settings(self.limits)):  # config.json could not hold them
            raise GradescopeError(
                "config.json holds only the timeouts and the memory of Gradescope's limits (the others are "
                f"GRADESCOPE_LIMITS'): it cannot hold {self.limits}"
            )

    def to_json(self) -> dict:
        """config.json's keys: lab, hidden_visibility, cell_timeout, total_timeout and memory_gib."""
        return {"lab": self.lab, "hidden_visibility": self.hidden_visibility, **_settings(self.limits)}

    @classmethod
    def from_json(cls, data: dict) -> GradescopeConfig:
        """The config ``to_json`` gave; a setting left out has its default; TypeError names a missing or unknown key."""
        if not isinstance(data, dict):
            raise TypeError(f"config.json holds {type(data).__name__}, not a JSON object")
        settings = _settings(GRADESCOPE_LIMITS)
        given = {key: value for key, value in data.items() if key in settings}
        rest = {key: value for key, value in data.items() if key not in settings}
        return cls(**rest, limits=_limits(**{**settings, **given}))


def read_config(source: Path) -> GradescopeConfig:
    try:
        data = json.loads((source / CONFIG_FILE).read_text(encoding="utf-8"))
        return GradescopeConfig.from_json(data)
    except (OSError, ValueError, TypeError) as exc:
        raise GradescopeError(f"{source / CONFIG_FILE} is missing or malformed: {exc}") from None


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
