"""The suite's own check that kernels end with their test module can fail: a module that leaves a
kernel running fails, naming it, and the kernel is stopped; a module whose kernels end passes."""

import subprocess
import sys
import time

import kernel_leaks
import psutil

# A stand-in for a kernel: a Python process whose command line names ipykernel, started by the test.
LEAVES_A_KERNEL = f"""
import subprocess

def test_starts_a_kernel_and_leaves_it():
    subprocess.Popen([{sys.executable!r}, "-c", "import time; time.sleep(120)", "ipykernel_launcher"])
"""

CONFTEST = "from kernel_leaks import kernels_end_with_their_module  # noqa: F401\n"


def test_a_module_that_leaves_a_kernel_running_fails_and_the_kernel_is_stopped(pytester, monkeypatch):
    monkeypatch.setattr(kernel_leaks, "GRACE_SECONDS", 0.5)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_leaky=LEAVES_A_KERNEL)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*test_leaky left 1 kernel process(es) running (now stopped): *ipykernel_launcher*"])
    assert not [p for p in kernel_leaks.running_kernels() if "time.sleep(120)" in p.cmdline()]


def test_a_kernel_that_ends_with_its_test_is_not_reported():
    kernel = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "ipykernel_launcher"])
    try:
        # Popen returns once exec has closed the child's descriptors, a moment before the kernel fills in
        # its command line: on a loaded machine the first look can find it empty.
        deadline = time.monotonic() + 10
        while psutil.Process(kernel.pid) not in kernel_leaks.running_kernels() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert psutil.Process(kernel.pid) in kernel_leaks.running_kernels()
    finally:
        kernel.kill()
        kernel.wait()
    assert kernel_leaks.kernels_left(set(), grace=0.0) == []
