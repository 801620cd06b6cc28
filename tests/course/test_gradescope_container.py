"""run_autograder in a container's limits (a cgroup of little memory, no bubblewrap, a fresh HOME), as
Gradescope runs it: a notebook that outgrows the memory loses its kernel, not the grader, keeps the
points of the tasks before, and the result says it ran out of memory at which cell and what the
container allows; the instructor's output names the setting to raise. The module's submissions are graded
side by side, once (``runs``): the slowest, in half a CPU, leaves the rest of the machine to the others. A
solution's grade is full marks but for the verdict on the grader's own timing, which the machine's load at
that moment decides (solution_results.py)."""

import json
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest
from cgroup_box import box_problem
from gradescope_session import (
    GRADESCOPE_LAB,
    UID_LEVEL,
    Installation,
    remove_scratch,
    traversable_scratch,
)
from searchable_python import python_searchable_by_all, restore_modes
from solution_results import full_marks_problems
from system_python_image import IMAGE_TEST_MODULE, SHARES_THE_BUILD, start_build

from autograder.authoring.known_grades import SOLUTION, make_submission
from autograder.lab import load_lab
from autograder.run.sandbox.bubblewrap import sandbox_problem

pytestmark = SHARES_THE_BUILD
LAB = load_lab(GRADESCOPE_LAB)
T1, T2 = (int(task.points) for task in LAB.tasks if task.id in ("t1", "t2"))  # a right t1's and t2's points
AS_ROOT = os.geteuid() == 0
GRADESCOPE_DEFAULT_MEMORY = 768 * 2**20
BOX_MEMORY = 1536 * 2**20  # the grader and lab 2's first tasks fit; two more GB do not
ALLOCATE_2_GB = "import numpy as np\nhuge = np.ones(2**28)  # 2 GiB of float64\nhuge.sum()"

needs_a_cgroup = pytest.mark.skipif(box_problem() is not None, reason=f"no cgroup can be made here: {box_problem()}")


@pytest.fixture(scope="module")
def installation(request):
    """The zip of the container's lab installed as setup.sh installs it. Where this session also tests the
    image's build on the system Python, that build starts first, beside this installation and the runs
    (system_python_image.py): pip on one core, where the installation's steps and the default container's
    half a CPU leave the machine idle much of the time, and none of the runs' timing verdicts is judged."""
    if sandbox_problem() is not None and not AS_ROOT:
        pytest.skip(f"no sandbox here: {sandbox_problem()}")
    if any(item.path.stem == IMAGE_TEST_MODULE for item in request.session.items):
        start_build()
    scratch = traversable_scratch()
    restore = python_searchable_by_all() if AS_ROOT else None
    try:
        yield Installation(scratch)
    finally:
        restore_modes(restore)
        remove_scratch(scratch)


def _can_mount_read_only() -> str | None:
    if not AS_ROOT or shutil.which("unshare") is None:
        return "a read-only bind mount needs root and unshare"
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount --bind / /mnt && mount -o remount,ro,bind /mnt"],
        capture_output=True,
        text=True,
    )
    return None if done.returncode == 0 else f"cannot make a mount namespace here: {done.stderr.strip()}"


READ_ONLY_PROBLEM = _can_mount_read_only()
needs_read_only_mounts = pytest.mark.skipif(READ_ONLY_PROBLEM is not None, reason=str(READ_ONLY_PROBLEM))


def _entries(cache) -> dict:
    return {path: path.stat().st_mtime_ns for path in (cache / "references").rglob("*") if path.is_file()}


def _greedy(installation):
    notebook = make_submission(
        LAB, {"t1": SOLUTION, "t2": SOLUTION, "t3": ALLOCATE_2_GB}, installation.scratch / "notebooks" / "greedy.ipynb"
    )
    return installation.run_autograder_in_box("greedy", {"lab.ipynb": notebook.read_bytes()}, BOX_MEMORY, cpus=1.0)


def _default_container(installation):
    return installation.run_autograder_in_box(
        "default", {"lab.ipynb": LAB.solution_path.read_bytes()}, GRADESCOPE_DEFAULT_MEMORY, cpus=0.5
    )


def _warm(installation):
    return installation.run_autograder("warm", {"lab.ipynb": LAB.solution_path.read_bytes()})


def _read_only_cache(installation):
    """run_autograder with the image's cache bind-mounted read-only: (results.json, its output)."""
    root, source, env = installation.prepare("read-only-cache", {"lab.ipynb": LAB.solution_path.read_bytes()})
    cache = str(installation.cache)
    script = f"mount --bind {cache} {cache} && mount -o remount,ro,bind {cache} && exec {source / 'run_autograder'}"
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script], env=env, cwd=root, capture_output=True, text=True, timeout=900
    )
    return json.loads((root / "results" / "results.json").read_text()), done.stdout + done.stderr


@pytest.fixture(scope="module")
def runs(installation):
    """name -> what each submission's run returned, for the runs this machine can make; all side by side,
    the cache's entries taken before any ran (``warmed``)."""
    jobs = {"warm": _warm}
    if box_problem() is None:
        jobs = {"default": _default_container, "greedy": _greedy, **jobs}
    if READ_ONLY_PROBLEM is None:
        jobs["read-only cache"] = _read_only_cache
    warmed = _entries(installation.cache)
    with ThreadPoolExecutor(len(jobs)) as pool:
        futures = {name: pool.submit(job, installation) for name, job in jobs.items()}
        return {"warmed": warmed, **{name: future.result() for name, future in futures.items()}}


@needs_a_cgroup
def test_a_notebook_that_outgrows_the_container_is_told_and_keeps_its_points(installation, runs):
    results, run = runs["greedy"]
    assert run.oom_kills >= 1, run.output  # the container's killer struck...
    assert results["extra_data"]["status"] == "kernel died", results["output"]  # ...the kernel, not the grader
    assert results["extra_data"]["sandbox"] == UID_LEVEL
    assert "the notebook ran out of memory at cell " in results["output"]
    assert "(this container allows 1,536 MB)" in results["output"]
    scores = {}
    for test in results["tests"]:
        scores[test["name"].split(":")[0]] = scores.get(test["name"].split(":")[0], 0) + test["score"]
    assert scores["t1"] == T1 and scores["t2"] == T2 and results["score"] == T1 + T2, results["output"]
    assert "Autograder Settings" in run.output and "1,536 MB" in run.output
    assert os.path.exists(installation.scratch / "greedy" / "results" / "results.json")


def test_the_image_is_warm_and_each_submission_reads_its_references(installation, runs):
    assert f"the reference cache in {installation.cache} is warm for {GRADESCOPE_LAB}" in installation.setup_output
    warmed = runs["warmed"]
    assert warmed, "setup.sh stored no reference"
    results, output, _ = runs["warm"]
    assert not full_marks_problems(results, LAB), output
    assert _entries(installation.cache) == warmed  # every reference was read; none computed or rewritten
    assert os.stat(installation.cache).st_mode & 0o077 == 0  # a kernel at the uid level cannot read them


@needs_a_cgroup
def test_lab_2_gets_full_marks_in_gradescope_s_default_container(runs):
    """768 MB and half a CPU: the graders load only once the kernel has ended, and the kernel's malloc
    keeps two arenas; the whole tree (grader, kernel, checker) stays under the limit."""
    results, run = runs["default"]
    seen = f"{results['output']}\nin {run.seconds:.0f} s, the box {run.cpu_periods}"
    assert run.oom_kills == 0 and not full_marks_problems(results, LAB), seen
    assert run.seconds < 600, run.seconds  # Gradescope's default timeout


@needs_read_only_mounts
def test_an_image_cache_it_cannot_write_is_read(installation, runs):
    """The image's cache on a read-only file system: grading reads it, and neither fails nor writes."""
    results, output = runs["read-only cache"]
    assert not full_marks_problems(results, LAB), output
    assert _entries(installation.cache) == runs["warmed"]
