"""Folders a killed grader left behind (a kernel's root, a run's facts) are removed by the next grader's
first kernel, and no folder of a live grader, of another pid namespace or kept for inspection
(autograder/run/sandbox/stale_roots.py)."""

import asyncio
import os
import subprocess
import sys
import time

import psutil

from autograder.run.kernels import KernelSpec
from autograder.run.kernels.lifecycle import StartedKernel
from autograder.run.sandbox.limits import Limits
from autograder.run.sandbox.stale_roots import OWNER_FILE, claim, disown, sweep

# a grader that made a kernel root holding a copy of a submission, then ended without removing it
KILLED_GRADER = (
    "import pathlib, sys\n"
    "from autograder.run.sandbox.stale_roots import claim\n"
    "root = pathlib.Path(sys.argv[1]); root.mkdir(); claim(root)\n"
    "(root / 'work').mkdir(); (root / 'work' / 'answers.ipynb').write_text('{}')\n"
)


def test_the_folders_of_a_grader_that_ended_are_removed_and_no_others(tmp_path):
    ended = tmp_path / "autograder-ended"
    subprocess.run([sys.executable, "-c", KILLED_GRADER, str(ended)], check=True)
    live = tmp_path / "autograder-live"
    kept = tmp_path / "autograder-kept"
    unowned = tmp_path / "autograder-unowned"
    elsewhere = tmp_path / "autograder-other-namespace"
    reused_pid = tmp_path / "autograder-reused-pid"
    not_the_harness = tmp_path / "other-tool"
    for folder in (live, kept, unowned, elsewhere, reused_pid, not_the_harness):
        folder.mkdir()
    claim(live)
    claim(kept)
    disown(kept)  # AUTOGRADER_KEEP_RUNS
    namespace, pid, start = (live / OWNER_FILE).read_text().split()
    (elsewhere / OWNER_FILE).write_text(f"pid:[1] {pid} {start}")  # a container's, sharing /tmp
    (reused_pid / OWNER_FILE).write_text(f"{namespace} {pid} {int(start) - 1}")  # this pid, an earlier process
    (not_the_harness / OWNER_FILE).write_text(f"{namespace} 999999999 1")
    another_users = tmp_path / "autograder-made-by-a-kernel"
    another_users.mkdir()
    (another_users / OWNER_FILE).write_text(f"{namespace} 999999999 1")
    removed = [ended, reused_pid]
    if os.geteuid() == 0:
        os.chown(another_users, 60999, 60999)  # a sandbox uid's folder: not the grader's to remove
    else:
        removed.append(another_users)  # without root there is no other user to stand for: it is this one's
    link = tmp_path / "autograder-link"
    link.symlink_to(ended)  # to a folder that is the sweep's to remove: the link is not followed
    assert sorted(sweep(tmp_path)) == sorted(removed)
    assert not ended.exists() and not reused_pid.exists()
    assert all(folder.is_dir() for folder in (live, kept, unowned, elsewhere, not_the_harness))


def test_the_folders_of_a_grader_that_is_a_zombie_are_removed(tmp_path):
    """A killed grader's orphan waits as a zombie until the machine's first process reaps it: it has ended."""
    zombie = tmp_path / "autograder-zombie"
    grader = subprocess.Popen([sys.executable, "-c", KILLED_GRADER, str(zombie)])  # not waited for: a zombie
    try:
        deadline = time.monotonic() + 60
        while psutil.Process(grader.pid).status() != psutil.STATUS_ZOMBIE and time.monotonic() < deadline:
            time.sleep(0.05)
        assert psutil.Process(grader.pid).status() == psutil.STATUS_ZOMBIE
        assert (zombie / OWNER_FILE).read_text().split()[1] == str(grader.pid)
        assert sweep(tmp_path) == [zombie]
        assert not zombie.exists()
    finally:
        grader.wait(timeout=60)


def test_a_kernels_root_names_its_grader_until_it_is_kept():
    kernel = StartedKernel(KernelSpec(Limits()))
    try:
        owner = (kernel.root / OWNER_FILE).read_text().split()
        assert owner[1] == str(os.getpid())
        assert (kernel.root / OWNER_FILE).stat().st_mode & 0o777 == 0o600
    finally:
        asyncio.run(kernel.close())
    assert not kernel.root.exists()
