"""The kernel's malloc settings (autograder/run/kernel_malloc.py): every kernel runs with them, sandboxed or
not, whatever the grader's environment says, and the grader takes them before it measures, so that a time
measured in the kernel and the grader's own measurement cost the same."""

from __future__ import annotations

import contextlib
import subprocess
import sys

import pytest

from autograder.checks import measurement
from autograder.run import KERNEL_MALLOC_ENV, kernel_environment
from autograder.run.sandbox import sandbox_environment

# In a fresh process: how many of 50 blocks of 100 KiB malloc maps on their own, before, during and after
# under_kernel_malloc() (glibc's default threshold is 128 KiB; the kernel's is 64 KiB).
MAPPED_BLOCKS = """
import ctypes
from autograder.run.kernel_malloc import under_kernel_malloc

class MallInfo2(ctypes.Structure):
    names = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"
    _fields_ = [(name, ctypes.c_size_t) for name in names.split()]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MallInfo2
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]

def mapped_among_50_blocks():
    blocks = [libc.malloc(100 * 1024) for _ in range(50)]  # 5 MB: more than the heap's top holds
    mapped = libc.mallinfo2().hblks
    for block in blocks:
        libc.free(block)
    return mapped - libc.mallinfo2().hblks

before = mapped_among_50_blocks()
with under_kernel_malloc() as taken:
    during = mapped_among_50_blocks()
print(before, taken, during, mapped_among_50_blocks())
"""


def test_every_kernel_gets_the_settings_and_none_inherited():
    assert KERNEL_MALLOC_ENV == {"MALLOC_ARENA_MAX": "2", "MALLOC_MMAP_THRESHOLD_": "65536"}
    unsandboxed = kernel_environment({"PATH": "/usr/bin", "MALLOC_ARENA_MAX": "64", "MALLOC_TOP_PAD_": "1"})
    assert unsandboxed["MALLOC_ARENA_MAX"] == "2" and "MALLOC_TOP_PAD_" not in unsandboxed
    assert {k: v for k, v in sandbox_environment(unsandboxed).items() if k.startswith("MALLOC_")} == KERNEL_MALLOC_ENV


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_the_grader_process_takes_them_meanwhile_a_100_kib_block_is_then_mapped_on_its_own():
    shown = subprocess.run([sys.executable, "-c", MAPPED_BLOCKS], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    before, taken, during, after = shown.stdout.split()
    assert (int(before), taken, int(after)) == (0, "True", 0) and int(during) >= 40


def test_the_grader_measures_under_them(monkeypatch):
    seen = []

    @contextlib.contextmanager
    def recorded():
        seen.append("set")
        yield True
        seen.append("back")

    monkeypatch.setattr(measurement, "under_kernel_malloc", recorded)
    stats = measurement.measure_interleaved({"noop": lambda: seen.append("call")}, repeats=2, warmup=0)
    assert seen == ["set", "call", "call", "back"] and len(stats["noop"].samples) == 2
