"""All of the harness that runs inside the student's untrusted kernel, copied there as ``_autograder_kernel``
(run/kernels/harness_code.py). It imports only itself, the standard library, JAX and numpy, so graders,
references and hidden checks never enter the kernel's view; docs/how-grading-works.md maps its modules."""

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
