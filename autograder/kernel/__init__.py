"""The kernel package: all of the harness that runs inside the student's untrusted kernel, and nothing else.

Copied whole into each grading kernel's modules folder and imported there, before any student cell, as
``_autograder_kernel`` (run/kernels/harness_code.py); the student's self-check imports it as ``autograder.kernel`` in
the notebook's own kernel. It imports only itself, the standard library, JAX and numpy, and no other module
of the harness is sent into a kernel (tests/test_architecture.py holds both): what lies outside this folder
— graders, references, hidden checks — never enters the kernel's view. It holds no answers and no checks.

- ``housekeeping``: the output cap, the lab probe's warm-up, reaping children, malloc's thresholds;
- ``timing_record``: what a timed task's cells did (clock reads, compilations, waits);
- ``recorder``: a task's facts as plain data (``record_task_facts``), from ``inputs`` (the grader's
  inputs, rebuilt alike in the grader's process), ``program`` (what a function's trace holds) and
  ``layouts`` (shardings and types), with the library functions ``originals`` took before any student cell.

A lab's own ``kernel_probe.py`` is copied beside the package, as ``LAB_PROBE_MODULE``.
"""

import importlib
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autograder.kernel.housekeeping import (
        LAB_PROBE_MODULE,
        SAVING_MMAP_THRESHOLD,
        TRUNCATION_MARK,
        libc_function,
        malloc_for_timing,
    )
    from autograder.kernel.inputs import make_input
    from autograder.kernel.recorder import record_task_facts

SOURCE = os.path.dirname(os.path.abspath(__file__))  # the folder copied into each grading kernel

# Each exported name's module, loaded on first use (the recorder imports JAX); the same list as above.
_HOMES = {
    "LAB_PROBE_MODULE": "housekeeping",
    "SAVING_MMAP_THRESHOLD": "housekeeping",
    "TRUNCATION_MARK": "housekeeping",
    "libc_function": "housekeeping",
    "malloc_for_timing": "housekeeping",
    "make_input": "inputs",
    "record_task_facts": "recorder",
}


def __getattr__(name):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
