"""Warm kernels: each is used once, nothing of one submission reaches the next, a kernel warmed for
another lab (or other limits) or one that died while waiting is not used, and a closed pool leaves no
kernel process and no directory behind. Plans of a few cells, no lab notebook."""

from __future__ import annotations

import asyncio
import signal
import threading
from pathlib import Path

import psutil
import pytest
from process_ended import ended

from autograder.facts.fact_reader import PARSER_LOCK
from autograder.facts.taken_facts import TakenFacts
from autograder.run import kernel_pool
from autograder.run.execute import RunRequest, execute_plan_async
from autograder.run.kernels import KernelSpec
from autograder.run.plan import CaptureTask, Plan, RunCell
from autograder.run.sandbox.limits import Limits

LIMITS = Limits(cell_timeout=30, total_timeout=120)


def _plan(*sources: str) -> Plan:
    return Plan(tuple(RunCell(source, "student", None, i + 1, f"cell {i + 1}") for i, source in enumerate(sources)), ())


LEAVE_TRACES = _plan(
    "import os\nLEFT_BEHIND = 42\nopen('left_behind.txt', 'w').write('mine')\nos.environ['LEFT_BEHIND'] = '1'\n"
    "import numpy\nnumpy.LEFT_BEHIND = 1",
)
SEE_NO_TRACES = _plan(
    "assert 'LEFT_BEHIND' not in globals(), 'a global of the student before'",
    "import os\nassert not os.path.exists('left_behind.txt'), os.listdir('.')",
    "assert 'LEFT_BEHIND' not in os.environ, 'an environment variable of the student before'",
    "import numpy\nassert not hasattr(numpy, 'LEFT_BEHIND'), 'a module patched by the student before'",
    "import jax\nassert jax.device_count() == 8",
    f"import os\nassert not os.path.exists({str(Path(kernel_pool.__file__).parent)!r}), 'the harness is visible'",
    "import subprocess\nsubprocess.Popen(['sleep', '600'])",  # stopped when the cell ends
)

CAPTURED = Plan((RunCell("x = 1", "student", "t1", 1, "cell 1"), CaptureTask("t1")), ())  # one task's facts to read


@pytest.fixture
def pool(monkeypatch):
    """A pool that records each kernel it hands to an execution: the kernel, whether it was started
    ahead, and the pid of the process that launched it."""
    used = []

    async def recording(request, live=None, kernel=None):
        warm = kernel.state == "started"
        try:
            return await execute_plan_async(request, live, kernel)
        finally:
            used.append((kernel, warm, kernel.km._launcher.pid))

    monkeypatch.setattr(kernel_pool, "execute_plan_async", recording)
    made = kernel_pool.KernelPool()
    made.used = used
    yield made
    made.close()


def _cells(execution) -> list[tuple[str, str | None]]:
    return [(c.status, c.error) for c in execution.cells]


def test_a_warm_kernel_is_used_once_and_shows_nothing_of_the_submission_before(pool, tmp_path):
    first = pool.execute(RunRequest(LEAVE_TRACES, {}, LIMITS, seed=1))
    assert first.status == "completed" and _cells(first) == [("ok", None)]
    spare = pool.run(pool.spare())
    assert spare is not None and spare.state == "started" and spare.failure is None
    second = pool.execute(RunRequest(SEE_NO_TRACES, {}, LIMITS, seed=2))
    assert second.status == "completed", second.reason
    assert _cells(second) == [("ok", None)] * 7
    assert [c.leftover_processes for c in second.cells] == [0] * 6 + [1]
    (cold, was_warm, cold_pid), (warm, is_warm, warm_pid) = pool.used
    assert not was_warm  # the first submission had nothing warm: its kernel was started for it
    assert warm is spare and is_warm and warm_pid != cold_pid and warm.root != cold.root
    assert not warm.root.exists() and not cold.root.exists()  # used, shut down, removed
    assert ended(warm_pid) and ended(cold_pid)
    assert warm.km.uid is None or warm.km.uid != cold.km.uid  # a uid lease of its own


def test_a_prepared_kernel_serves_the_first_submission_and_one_for_other_limits_is_not_used(pool, tmp_path):
    """A batch's worker starts its first kernel before any submission arrives (``prepare``): the first
    submission gets it, started; prepared for other limits, it is shut down and one is started to fit."""
    pool.prepare(KernelSpec(LIMITS))
    prepared = pool.run(pool.spare())
    assert prepared is not None and prepared.state == "started" and prepared.failure is None
    first = pool.execute(RunRequest(SEE_NO_TRACES, {}, LIMITS, 1))
    assert first.status == "completed" and _cells(first) == [("ok", None)] * 7
    assert pool.used[0][0] is prepared and pool.used[0][1]  # started ahead
    pool.prepare(KernelSpec(LIMITS))  # a spare is there already (started after the first): nothing more
    spare = pool.run(pool.spare())
    assert spare is not prepared and spare.state == "started"
    pool.close()
    other = kernel_pool.KernelPool()
    try:
        other.prepare(KernelSpec(LIMITS))
        wrong = other.run(other.spare())
        assert other.execute(RunRequest(_plan("pass"), {}, Limits(cell_timeout=31), 2)).status == "completed"
        assert not wrong.root.exists()  # did not fit: shut down, not used
    finally:
        other.close()


def test_a_grading_with_none_after_it_starts_no_spare(pool):
    """One of a class's last gradings (``executor(start_next=False)``) uses the kernel started ahead and
    starts none after it: a spare would take its core, then be shut down unused. Should a submission come
    after all, it gets a kernel started for it."""
    pool.prepare(KernelSpec(LIMITS))
    prepared = pool.run(pool.spare())
    assert pool.executor(start_next=False)(RunRequest(_plan("pass"), {}, LIMITS, 1)).status == "completed"
    assert pool.used[0][0] is prepared and pool.used[0][1]  # started ahead
    assert pool.run(pool.spare()) is None
    assert pool.execute(RunRequest(_plan("pass"), {}, LIMITS, 2)).status == "completed"
    assert not pool.used[1][1]  # started for it


def test_a_run_waiting_to_read_its_facts_leaves_the_kernels_loop_free(pool, monkeypatch):
    """A grader holds the facts' parser lock for its whole session, and may wait inside it for the machine's
    timed turn. A run that ends meanwhile waits for that lock to read its facts, off the loop that serves
    the worker's kernels, where a spare kernel's hold on the turn is let go: on the loop, two gradings
    waited on each other for good."""
    reading = threading.Event()
    read_all = TakenFacts.read_all

    def noted(self):
        reading.set()
        return read_all(self)

    monkeypatch.setattr(TakenFacts, "read_all", noted)
    with PARSER_LOCK:  # this thread plays the grader
        done: list = []
        runner = threading.Thread(target=lambda: done.append(pool.execute(RunRequest(CAPTURED, {}, LIMITS, 1))))
        runner.start()
        assert reading.wait(120), "the run did not end"
        answered = asyncio.run_coroutine_threadsafe(asyncio.sleep(0, result="loop free"), pool._loop)
        assert answered.result(timeout=10) == "loop free"
    runner.join(60)
    assert done and done[0].status == "completed", done


def test_a_kernel_warmed_for_another_lab_or_other_limits_is_not_used(pool, tmp_path):
    lab_a, lab_b = tmp_path / "a.py", tmp_path / "b.py"
    lab_a.write_text("LAB = 'a'\n")
    lab_b.write_text("LAB = 'b'\n")
    which_lab = "import sys\nassert sys.modules['_autograder_lab_probe'].LAB == {!r}"
    pool.execute(RunRequest(_plan(which_lab.format("a")), {}, LIMITS, 1, lab_probe=lab_a))
    warmed_for_a = pool.run(pool.spare())
    warmed_for_a.launcher = warmed_for_a.km.provisioner.process.pid
    assert warmed_for_a.fits(KernelSpec(LIMITS, lab_a)) and not warmed_for_a.fits(KernelSpec(LIMITS, lab_b))
    other_lab = pool.execute(RunRequest(_plan(which_lab.format("b")), {}, LIMITS, 2, lab_probe=lab_b))
    assert _cells(other_lab) == [("ok", None)]
    assert not pool.used[-1][1]  # started for it, not the one warmed for lab a
    assert not warmed_for_a.root.exists() and ended(warmed_for_a.launcher)
    warmed_for_b = pool.run(pool.spare())
    other_limits = Limits(cell_timeout=31, total_timeout=120)
    assert pool.execute(RunRequest(_plan("pass"), {}, other_limits, 3, lab_probe=lab_b)).status == "completed"
    assert not pool.used[-1][1] and not warmed_for_b.root.exists()
    same_lab_changed = tmp_path / "b2.py"
    same_lab_changed.write_text("LAB = 'b2'\n")  # a lab probe is known by its content
    assert not pool.run(pool.spare()).fits(KernelSpec(other_limits, same_lab_changed))


def test_a_warm_kernel_that_died_while_waiting_is_replaced(pool):
    pool.execute(RunRequest(_plan("pass"), {}, LIMITS, 1))
    spare = pool.run(pool.spare())
    launcher = spare.km.provisioner.process.pid
    for process in psutil.Process(launcher).children(recursive=True):  # the kernel, inside its sandbox
        try:
            command = " ".join(process.cmdline())
        except psutil.Error:  # a short-lived process of the sandbox's, ended (or a zombie) since the listing
            continue
        if "ipykernel_launcher" in command:
            process.send_signal(signal.SIGKILL)
    psutil.wait_procs([psutil.Process(launcher)], timeout=60)  # the sandbox ends with its kernel
    execution = pool.execute(RunRequest(SEE_NO_TRACES, {}, LIMITS, 2))
    assert execution.status == "completed", execution.reason
    assert _cells(execution) == [("ok", None)] * 7
    assert not pool.used[-1][1] and pool.used[-1][0] is not spare and not spare.root.exists()


def test_after_close_no_kernel_process_or_directory_remains(pool):
    pool.execute(RunRequest(_plan("pass"), {}, LIMITS, 1))
    spare = pool.run(pool.spare())
    launcher = spare.km.provisioner.process.pid
    pool.close()
    assert ended(launcher) and not spare.root.exists()
    leftovers = [
        p for p in psutil.process_iter(["cmdline"]) if any(str(spare.root) in arg for arg in p.info["cmdline"] or [])
    ]
    assert leftovers == []
    with pytest.raises(RuntimeError, match="closed"):
        pool.execute(RunRequest(_plan("pass"), {}, LIMITS, 2))


def test_the_worker_pool_is_made_once_and_closed_with_its_spare():
    pool = kernel_pool.worker_pool()
    assert kernel_pool.worker_pool() is pool
    pool.execute(RunRequest(_plan("pass"), {}, LIMITS, 1))
    spare = pool.run(pool.spare())
    launcher = spare.km.provisioner.process.pid
    kernel_pool.close_worker_pool()
    assert not spare.root.exists() and ended(launcher)
    assert kernel_pool.worker_pool() is not pool
    kernel_pool.close_worker_pool()


def test_executions_at_once_get_a_kernel_each_and_leave_none_behind(pool):
    from concurrent.futures import ThreadPoolExecutor

    pool.execute(RunRequest(_plan("pass"), {}, LIMITS, 1))  # a spare for one of the next two
    with ThreadPoolExecutor(2) as threads:
        executions = list(threads.map(lambda seed: pool.execute(RunRequest(SEE_NO_TRACES, {}, LIMITS, seed)), (2, 3)))
    assert [e.status for e in executions] == ["completed"] * 2
    kernels = [kernel for kernel, _, _ in pool.used]
    assert len({id(k) for k in kernels}) == 3 and len({pid for _, _, pid in pool.used}) == 3
    spare = pool.run(pool.spare())
    assert spare is not None
    pool.close()
    assert not any(k.root.exists() for k in [*kernels, spare]) and all(ended(pid) for _, _, pid in pool.used)
