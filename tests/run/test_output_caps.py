"""Output a submission floods is cut, and the result says so, whichever side cuts it: the kernel's own
cap (which IPython's per-cell wrapping of the streams must not undo), the grader's caps per cell and
in total, or the transport, whose message size cap drops the connection without a word."""

import pytest

from autograder.facts.capture import TaskCapture
from autograder.run.execute import RunRequest, execute_plan
from autograder.run.kernels.harness_code import KERNEL_PACKAGE
from autograder.run.plan import CaptureTask, Plan, RunCell
from autograder.run.sandbox.bubblewrap import sandbox_problem
from autograder.run.sandbox.limits import Limits

pytestmark = pytest.mark.skipif(sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}")

# Small writes, each far under every message cap: only the kernel's cap on the total stops them.
MANY_SMALL_WRITES = """
import sys
for _ in range(10_000):
    sys.stdout.write('x' * 1000)
"""

KERNEL_CAP = f"""
import sys
cap_cut = sys.modules[{KERNEL_PACKAGE + ".housekeeping"!r}]._output['cut']
cap_chars = sys.modules[{KERNEL_PACKAGE + ".housekeeping"!r}]._output['chars']
"""

# One display message larger than the grader accepts: it bypasses the streams and their cap.
HUGE_DISPLAY = """
from IPython.display import display
display({'text/plain': 'x' * (20 << 20)}, raw=True)
"""

LATER_ERROR = "raise ValueError('reported after the flood')"


def _run(steps, names, limits=Limits(cell_timeout=60, total_timeout=300, output_bytes_total=2_000_000)):
    plan = Plan(tuple(steps) + (CaptureTask("t1"),), ())
    return execute_plan(RunRequest(plan, {"t1": TaskCapture("t1", names=names)}, limits, seed=1))


def test_the_kernels_own_cap_holds_after_ipython_wraps_the_streams():
    execution = _run(
        [RunCell(MANY_SMALL_WRITES, "student", "t1", 1, "cell 1"), RunCell(KERNEL_CAP, "student", "t1", 2, "cell 2")],
        ("cap_cut", "cap_chars"),
    )
    assert execution.status == "completed", execution.reason
    facts = execution.facts["t1"].names
    assert facts["cap_cut"].value is True and facts["cap_chars"].value == 10_000_000
    assert execution.cells[0].output_truncated


def test_a_message_over_the_transports_cap_is_said_and_later_output_still_arrives():
    execution = _run(
        [RunCell(HUGE_DISPLAY, "student", "t1", 1, "cell 1"), RunCell(LATER_ERROR, "student", "t1", 2, "cell 2")], ()
    )
    assert execution.status == "completed", execution.reason
    flood, later = execution.cells
    assert flood.output_truncated
    assert later.error is not None and "reported after the flood" in later.error
    assert not later.output_truncated
