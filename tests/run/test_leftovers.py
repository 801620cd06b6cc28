"""Processes a cell leaves behind are found and stopped: children, grandchildren, orphans, a fork bomb
still forking, inside the sandbox and without it; the kernel's own processes are kept."""

import contextlib
import os
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

from autograder.run.sandbox.bubblewrap import bwrap_command, sandbox_problem
from autograder.run.sandbox.leftovers import launcher_process, process_tree, stop_leftover_processes
from autograder.run.sandbox.limits import ResourceLimits
from autograder.run.sandbox.uid_lease import lease_uid

# The "kernel": waits for a line, then leaves processes behind and says how many it started.
KERNEL = textwrap.dedent("""
    import os, sys, time
    sys.stdin.readline()
    started = 0
    for _ in range(20):                      # children that sleep
        if os.fork() == 0:
            time.sleep(600); os._exit(0)
        started += 1
    if os.fork() == 0:                       # an orphan: its parent exits at once
        if os.fork() == 0:
            open("orphan.pid", "w").write(str(os.getpid()))
            time.sleep(600); os._exit(0)
        os._exit(0)
    started += 2
    os.wait()                                # the orphan's parent is gone
    started -= 1
    if os.fork() == 0:                       # a fork bomb that keeps forking
        while True:
            try:
                if os.fork() == 0:
                    time.sleep(600); os._exit(0)
            except OSError:
                time.sleep(0.01)
    started += 1
    print("started", started, flush=True)
    time.sleep(600)
""")


def _start(command, **kwargs):
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, **kwargs)
    launcher = launcher_process(process.pid)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # until the kernel process itself runs (bwrap starts it in steps)
        tree = process_tree(launcher)
        if any("python" in _name(pid) for pid in tree):
            break
        time.sleep(0.05)
    return process, launcher, tree


def _name(pid):
    try:
        return psutil.Process(pid).name()
    except psutil.Error:
        return ""


def _alive(pids):
    alive = set()
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.add(pid)
        except psutil.Error:
            pass
    return alive


def _written_pid(path, seconds=30.0) -> int:
    """The pid a process of the "kernel" wrote to ``path``, once it has."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            return int(path.read_text())
        except (OSError, ValueError):  # not written yet, or half
            time.sleep(0.05)
    raise AssertionError(f"nothing wrote its pid to {path}")


def _assert_only_the_harness_lives_on(process, launcher, harness, uid=None):
    process.stdin.write("go\n")
    process.stdin.flush()
    assert process.stdout.readline().split()[0] == "started"
    time.sleep(0.5)  # the fork bomb is at work
    stopped = stop_leftover_processes(launcher, harness, uid)
    assert stopped >= 21  # 20 children, the bomb and what it had forked by then (the orphan when findable)
    left = process_tree(launcher) - harness
    assert not _alive(left), [(p, _name(p)) for p in _alive(left)]
    assert _alive(harness) == set(harness)  # the kernel and its launcher live on
    time.sleep(0.5)
    assert not _alive(process_tree(launcher) - harness)  # and nothing came back
    process.kill()
    process.wait()


def test_leftovers_of_an_unsandboxed_kernel_are_stopped(tmp_path):
    process, launcher, harness = _start([sys.executable, "-c", KERNEL], cwd=tmp_path)
    assert harness == {process.pid}
    try:
        _assert_only_the_harness_lives_on(process, launcher, harness)
    finally:  # without a pid namespace or a uid of its own, an orphan is out of reach: a trusted run only
        os.kill(int((tmp_path / "orphan.pid").read_text()), 9)


@pytest.mark.skipif(sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}")
def test_leftovers_in_the_sandbox_are_stopped_orphans_included(tmp_path):
    workdir = tmp_path / "work"
    workdir.mkdir()
    lease = lease_uid()
    uid = lease and lease.uid
    if uid is not None:
        os.chmod(tmp_path, 0o755)
        os.chown(workdir, uid, uid)
    try:
        command = bwrap_command([sys.executable, "-c", KERNEL], workdir, [], {}, ResourceLimits(), uid)
        process, launcher, harness = _start(command, cwd=tmp_path)
        assert len(harness) >= 2  # bubblewrap, and the kernel inside
        _assert_only_the_harness_lives_on(process, launcher, harness)
    finally:
        if lease:
            lease.release()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a process as another uid")
def test_a_uid_of_its_own_finds_orphans_outside_any_namespace(tmp_path):
    """The "kernel" runs as a leased uid in a folder of its own, where its orphan writes its pid (in the
    test's own folder it could not: the orphan died of that, and only the fork bomb's count was tested)."""
    lease = lease_uid()
    uid = lease.uid
    workdir = tmp_path / "work"
    workdir.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chown(workdir, uid, uid)
    try:
        command = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--", sys.executable, "-c", KERNEL]
        process, launcher, harness = _start(command, cwd=workdir)
        process.stdin.write("go\n")
        process.stdin.flush()
        assert process.stdout.readline().split()[0] == "started"
        orphan = _written_pid(workdir / "orphan.pid")
        assert orphan not in process_tree(launcher)  # re-parented outside the kernel's tree
        stopped = stop_leftover_processes(launcher, harness, uid)
        assert stopped >= 22  # 20 children, the bomb, and the orphan, found by its uid
        assert orphan not in _alive([orphan])
        running = [p for p in psutil.process_iter(["uids"]) if p.info["uids"].real == uid]
        assert {p.pid for p in running if p.status() != psutil.STATUS_ZOMBIE} <= set(harness)
    finally:  # whatever failed, nothing of the uid outlives the test
        for leftover in [p for p in psutil.process_iter(["uids"]) if p.info["uids"].real == uid]:
            with contextlib.suppress(psutil.Error):
                leftover.kill()
        lease.release()
