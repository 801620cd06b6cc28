"""The kernel's malloc settings (autograder/run/kernels/malloc.py): every kernel saves memory with them, sandboxed
or not, whatever the grader's environment says; a task that times code, and the grader's own measurement,
run with large blocks kept in the heap (up to a bound where the kernel saves memory), so that a call costs the
same whatever the heap held before."""

from __future__ import annotations

import contextlib
import subprocess
import sys

import pytest

from autograder.checks import measurement
from autograder.facts.capture import TaskCapture
from autograder.run import KERNEL_MALLOC_ENV, kernel_environment
from autograder.run.execute import RunRequest, execute_plan
from autograder.run.plan import CaptureTask, Plan, RunCell
from autograder.run.sandbox.bubblewrap import sandbox_environment, sandbox_problem
from autograder.run.sandbox.limits import Limits

glibc = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")

# How many of 50 blocks of 100 KiB malloc maps on their own (the kernel's threshold is 64 KiB).
MAPPED_BLOCKS = """
import ctypes

class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]

_libc = ctypes.CDLL(None)
_libc.mallinfo2.restype = _MallInfo2
_libc.malloc.restype = ctypes.c_void_p
_libc.free.argtypes = [ctypes.c_void_p]

def mapped_among_50_blocks(size=100 * 1024):
    blocks = [_libc.malloc(size) for _ in range(50)]  # 5 MB: more than the heap's top holds
    mapped = _libc.mallinfo2().hblks
    for block in blocks:
        _libc.free(block)
    return mapped - _libc.mallinfo2().hblks
"""

# In a fresh process started with the kernel's settings: the blocks mapped under them, with the grader's
# timing thresholds, and after.
GRADER_SIDE = (
    MAPPED_BLOCKS
    + """
import sys
from autograder.run.kernels.malloc import timing_as_kernel, under_timing_malloc

before = mapped_among_50_blocks()
with timing_as_kernel(sys.argv[1] == "saves"), under_timing_malloc() as taken:
    during = mapped_among_50_blocks()
    large = mapped_among_50_blocks(2 * 2**20)
print(before, taken, during, large, mapped_among_50_blocks())
"""
)

# Page faults of one call that allocates, fills and frees 8 MB, after two such calls: with timing's
# thresholds, whether the heap is fresh or already holds free memory, and with the kernel's.
FAULTS_PER_CALL = """
import ctypes, resource, sys
from autograder.kernel import housekeeping

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes, libc.free.argtypes = [ctypes.c_size_t], [ctypes.c_void_p]
SIZE = int(sys.argv[1])
BOUNDED = sys.argv[2] == "bounded"

def call():
    block = libc.malloc(SIZE)
    ctypes.memset(block, 1, SIZE)
    libc.free(block)

def faults_per_call():
    call(); call()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(5):
        call()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 5

saving = faults_per_call()
housekeeping.malloc_for_timing(BOUNDED)
fresh = faults_per_call()
housekeeping.malloc_for_memory()
freed = [libc.malloc(20 * 2**10) for _ in range(1000)]  # 20 MB in small blocks, run together once freed
for block in freed:
    libc.free(block)
housekeeping.malloc_for_timing(BOUNDED)
with_history = faults_per_call()
print(saving, fresh, with_history)
"""


def _run_with_kernel_settings(code: str, *args: str) -> list[str]:
    shown = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=kernel_environment(),
    )
    assert shown.returncode == 0, shown.stderr
    return shown.stdout.split()


def test_every_kernel_gets_the_settings_and_none_inherited():
    assert KERNEL_MALLOC_ENV == {"MALLOC_ARENA_MAX": "2", "MALLOC_MMAP_THRESHOLD_": "65536"}
    unsandboxed = kernel_environment({"PATH": "/usr/bin", "MALLOC_ARENA_MAX": "64", "MALLOC_TOP_PAD_": "1"})
    assert unsandboxed["MALLOC_ARENA_MAX"] == "2" and "MALLOC_TOP_PAD_" not in unsandboxed
    assert {k: v for k, v in sandbox_environment(unsandboxed).items() if k.startswith("MALLOC_")} == KERNEL_MALLOC_ENV


@glibc
@pytest.mark.parametrize("kernel", ["keeps", "saves"], ids=["a kernel keeping large blocks", "a kernel saving memory"])
def test_the_grader_measures_with_the_blocks_its_kernel_kept_while_it_timed(kernel):
    before, taken, during, large, after = _run_with_kernel_settings(GRADER_SIDE, kernel)
    assert int(before) >= 40, "the kernel's own settings map 100 KiB blocks on their own"
    assert (taken, int(during), int(after)) == ("True", 0, 0)
    if kernel == "saves":
        assert int(large) == 50, "a kernel saving memory keeps blocks up to 1 MiB while it times, not 2 MiB"
    else:
        assert int(large) == 0


@glibc
@pytest.mark.parametrize(
    ("size", "bound"),
    [(8 * 2**20, "unbounded"), (512 * 2**10, "bounded")],
    ids=["8 MB kept by a kernel keeping large blocks", "512 KiB kept by a kernel saving memory"],
)
def test_a_timed_call_costs_no_page_faults_whatever_the_heap_held_before(size, bound):
    saving, fresh, with_history = (float(n) for n in _run_with_kernel_settings(FAULTS_PER_CALL, str(size), bound))
    assert fresh <= 4 and with_history <= 4, (fresh, with_history)
    assert saving >= 10 * max(fresh, with_history, 1), "the kernel's settings fault a mapped block in on each call"


@glibc
def test_a_kernel_saving_memory_maps_a_block_over_its_bound_afresh_on_every_timed_call():
    saving, fresh, with_history = (
        float(n) for n in _run_with_kernel_settings(FAULTS_PER_CALL, str(8 * 2**20), "bounded")
    )
    assert min(fresh, with_history) >= 1000, "8 MB past the 1 MiB bound: mapped and faulted in on each call, alike"


def test_the_grader_measures_under_them(monkeypatch):
    seen = []

    @contextlib.contextmanager
    def recorded():
        seen.append("set")
        yield True
        seen.append("back")

    monkeypatch.setattr(measurement, "under_timing_malloc", recorded)
    stats = measurement.measure_interleaved({"noop": lambda: seen.append("call")}, repeats=2, warmup=0)
    assert seen == ["set", "call", "call", "back"] and len(stats["noop"].samples) == 2


@pytest.mark.skipif(sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}")
@glibc
@pytest.mark.parametrize("saves_memory", [True, False], ids=["a student's kernel", "a course notebook's kernel"])
def test_only_a_timed_task_s_cells_run_with_large_blocks_kept(saves_memory):
    """In the real sandboxed kernel: a cell of an untimed task, of a timed one, and of an untimed one after
    it, each counting how many 100 KiB blocks malloc maps on their own. Without ``saves_memory`` (the
    course's own notebooks), every cell keeps them."""
    count = "mapped = mapped_among_50_blocks()\nlarge = mapped_among_50_blocks(2 * 2**20)"
    plan = Plan(
        (
            RunCell(MAPPED_BLOCKS + count, "student", "t1", 1, "cell 1"),
            CaptureTask("t1"),
            RunCell(count, "student", "t2", 2, "cell 2"),
            CaptureTask("t2"),
            RunCell(count, "student", "t3", 3, "cell 3"),
            CaptureTask("t3"),
        ),
        (),
    )
    captures = {
        "t1": TaskCapture("t1", names=("mapped", "large")),
        "t2": TaskCapture("t2", names=("mapped", "large"), times_code=True),
        "t3": TaskCapture("t3", names=("mapped", "large")),
    }
    limits = Limits(cell_timeout=60, total_timeout=300, saves_memory=saves_memory)
    execution = execute_plan(RunRequest(plan, captures, limits, seed=1))
    assert execution.status == "completed", execution.reason
    assert [c.error for c in execution.cells] == [None, None, None]
    mapped = [execution.facts[task].get("mapped").value for task in ("t1", "t2", "t3")]
    large = [execution.facts[task].get("large").value for task in ("t1", "t2", "t3")]
    if saves_memory:
        assert mapped[0] >= 40 and mapped[1] == 0 and mapped[2] >= 40, mapped
        assert large == [50, 50, 50], "blocks over the bound are mapped afresh, timed or not"
    else:
        assert mapped == [0, 0, 0] and large == [0, 0, 0]
