"""A lab probe's warm-up runs in the kernel beside the first cells, never beside a cell that measures time:
a small plan in the real sandboxed kernel with a lab probe of the test's own."""

import asyncio
import textwrap

import pytest

from autograder.facts.capture import TaskCapture
from autograder.fairness import timed_turns
from autograder.kernel import LAB_PROBE_MODULE
from autograder.run.execute import RunRequest, execute_plan
from autograder.run.kernels import KernelSpec
from autograder.run.kernels.harness_code import WARM_UP_ENDED
from autograder.run.kernels.lifecycle import StartedKernel
from autograder.run.plan import CaptureTask, Plan, RunCell
from autograder.run.sandbox.bubblewrap import sandbox_problem
from autograder.run.sandbox.limits import Limits

pytestmark = pytest.mark.skipif(sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}")

# The warm-up waits for the first cell to open the gate, then works on for 3 s: without the wait, the
# timed cell would start long before it ends.
LAB_PROBE = textwrap.dedent("""
    import threading, time

    gate, ended = threading.Event(), []


    def warm_up():
        gate.wait(60)
        time.sleep(3)
        ended.append(True)
""")

OPEN_THE_GATE = f"""
import sys
probe = sys.modules[{LAB_PROBE_MODULE!r}]
probe.gate.set()
"""


def test_a_cell_that_measures_time_waits_for_the_warm_up_to_end(tmp_path):
    lab_probe = tmp_path / "kernel_probe.py"
    lab_probe.write_text(LAB_PROBE)
    plan = Plan(
        (
            RunCell(OPEN_THE_GATE, "student", "t1", 1, "cell 1"),
            CaptureTask("t1"),
            RunCell("warmed = bool(probe.ended)", "student", "t2", 2, "cell 2"),
            CaptureTask("t2"),
        ),
        (),
    )
    captures = {"t1": TaskCapture("t1"), "t2": TaskCapture("t2", names=("warmed",), times_code=True)}
    limits = Limits(cell_timeout=60, total_timeout=300)
    execution = execute_plan(RunRequest(plan, captures, limits, seed=1, lab_probe=lab_probe))
    assert execution.status == "completed", execution.reason
    assert [c.error for c in execution.cells] == [None, None]
    assert execution.facts["t2"].get("warmed").value is True


SLOW_WARM_UP = textwrap.dedent("""
    import time


    def warm_up():
        time.sleep(3)
""")


def test_another_grading_s_timed_task_waits_for_a_starting_kernel_s_warm_up(tmp_path, monkeypatch):
    """A kernel started while another grading times a task (a batch's next submission, a spare) compiles
    its warm-up on a thread after its start-up cell: the timed task waits until the warm-up has ended."""
    monkeypatch.setenv(timed_turns.DIRECTORY_VARIABLE, str(tmp_path / "turns"))
    lab_probe = tmp_path / "kernel_probe.py"
    lab_probe.write_text(SLOW_WARM_UP)

    async def start_then_time():
        kernel = StartedKernel(KernelSpec(Limits(cell_timeout=60, total_timeout=300), lab_probe))
        try:
            await kernel.start()
            assert kernel.failure is None and not (kernel.facts_dir / WARM_UP_ENDED).exists()
            turn = timed_turns.TimedTurn(owner=1)
            await turn.acquire("t4")
            ended_first = (kernel.facts_dir / WARM_UP_ENDED).exists()
            turn.release()
            return ended_first
        finally:
            await kernel.close()

    assert asyncio.run(start_then_time())
