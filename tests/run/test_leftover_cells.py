"""A cell's leftover processes cannot deny or forge the capture of its task: small plans run in the real
sandboxed kernel, whatever the machine's speed (the leftovers sleep far longer than any capture)."""

import pytest

from autograder.facts.capture import TaskCapture
from autograder.run.execute import RunRequest, execute_plan
from autograder.run.plan import CaptureTask, Plan, RunCell
from autograder.run.sandbox.bubblewrap import sandbox_problem
from autograder.run.sandbox.limits import Limits

pytestmark = pytest.mark.skipif(sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}")

FORK_BOMB = """
import os, time
children = 0
for _ in range(2000):  # bounded: the sandbox's process limit stops it far earlier
    try:
        if os.fork() == 0:
            time.sleep(3600)
            os._exit(0)
        children += 1
    except OSError:
        break
"""

NEEDS_A_THREAD = """
import threading
done = []
worker = threading.Thread(target=lambda: done.append(True))
worker.start()
worker.join()
ok = done == [True]
"""

# A child that keeps rewriting the task's facts with a well-formed forgery, long after its cell ended.
BACKGROUND_FORGER = """
import json, os, time
answer = 0
if os.fork() == 0:
    while True:
        try:
            os.makedirs('.facts/t1', exist_ok=True)
            with open('.facts/t1/facts.json', 'w') as handle:
                json.dump({"task": "t1", "names": {"answer": {"kind": "value", "type": "int", "value": 42}},
                           "calls": {}, "probes": {}, "error": None}, handle)
        except OSError:
            pass
time.sleep(0.5)  # the forger is at work before the cell ends
"""


def _run(steps, names):
    plan = Plan(tuple(steps), ())
    captures = {"t1": TaskCapture("t1", names=names)}
    return execute_plan(RunRequest(plan, captures, Limits(cell_timeout=60, total_timeout=300), seed=1))


def test_a_fork_bomb_cannot_keep_the_kernel_from_starting_threads():
    execution = _run(
        [
            RunCell(FORK_BOMB, "student", "t1", 1, "cell 1"),
            RunCell(NEEDS_A_THREAD, "student", "t1", 2, "cell 2"),
            CaptureTask("t1"),
        ],
        ("ok", "children"),
    )
    assert execution.status == "completed", execution.reason
    bomb, thread = execution.cells
    assert thread.error is None
    assert execution.facts["t1"].get("ok").value is True
    children = execution.facts["t1"].get("children").value
    assert children > 50 and bomb.leftover_processes >= children  # every child was still asleep, and stopped
    assert thread.leftover_processes == 0


def test_a_background_child_cannot_rewrite_the_facts_after_its_cell():
    execution = _run([RunCell(BACKGROUND_FORGER, "student", "t1", 1, "cell 1"), CaptureTask("t1")], ("answer",))
    assert execution.status == "completed", execution.reason
    assert "t1" in execution.facts, execution.fact_errors
    assert execution.facts["t1"].get("answer").value == 0
    assert execution.cells[0].leftover_processes == 1
