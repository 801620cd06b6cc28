"""The code the harness runs in a kernel's cells of its own, and what it copies into the kernel for it.

Before any student cell, ``startup_code`` loads the kernel's housekeeping, the timing record, the kernel
recorder and the lab's probe (copied into the kernel's modules folder as standalone modules under the names below), caps
the output, fixes the devices and starts the lab probe's warm-up; between the student's cells the harness
waits for that warm-up and has malloc keep large blocks before a cell that times code
(``before_timed_cell_code``, undone by ``after_timed_task_code``), reaps the children a cell left
(``reap_children_code``) and has the recorder take a task's facts (``recorder_code``). Kept apart from the
kernel's lifecycle (kernel_lifecycle.py) so that the words said to the kernel can be read in one place.
"""

from __future__ import annotations

from pathlib import Path

from autograder.run.devices import DEVICE_COUNT
from autograder.run.kernel_housekeeping import LAB_PROBE_MODULE

# What is copied into the kernel, each as a standalone module under its name there: the kernel's
# housekeeping first (the recorder finds it by its name), then the kernel recorder, then the lab's own
# probe (LAB_PROBE_MODULE, and the output's TRUNCATION_MARK, are the housekeeping's own).
HOUSEKEEPING_MODULE = "_autograder_housekeeping"  # as recorder.HOUSEKEEPING_MODULE
HOUSEKEEPING_SOURCE = Path(__file__).resolve().parent / "kernel_housekeeping.py"
TIMING_MODULE = "_autograder_timing"  # as recorder.TIMING_MODULE
TIMING_SOURCE = Path(__file__).resolve().parents[1] / "facts" / "timing_record.py"
RECORDER_MODULE = "_autograder_recorder"
RECORDER_SOURCE = Path(__file__).resolve().parents[1] / "facts" / "recorder.py"
WARM_UP_ENDED = "warm-up-ended"  # the file the warm-up creates in the facts folder once it has ended
WARM_UP_WAIT = 60.0  # seconds a cell that measures time waits at most for the lab probe's warm-up


def startup_code(
    modules_dir: str,
    with_lab_probe: bool,
    output_limit: int,
    warm_up_ended: str | None = None,
    compilation_settings: str = "",
    saves_memory: bool = True,
) -> str:
    """Run before any student cell: load the housekeeping, the kernel recorder and the lab probe (from
    ``modules_dir``), cap the output, have malloc keep large blocks unless it ``saves_memory``
    (kernel_malloc.py), fix the device count for the kernel's life, set where compiled
    programs are read or written (``compilation_settings``: compiled_programs.py) and start the lab
    probe's warm-up, which creates ``warm_up_ended`` once it has ended (see run/kernel_housekeeping.py).

    JAX's backend reads the device count once, when first used; using it here means that nothing a
    notebook later sets (``XLA_FLAGS``, ``jax_num_cpu_devices``) changes the devices.
    """
    modules = [HOUSEKEEPING_MODULE, TIMING_MODULE, RECORDER_MODULE] + ([LAB_PROBE_MODULE] if with_lab_probe else [])
    return (
        "import sys as _ag_sys\n"
        f"_ag_sys.path.insert(0, {modules_dir!r})\n"
        + "".join(f"import {m}\n" for m in modules)
        + f"_ag_sys.path.remove({modules_dir!r})\n"
        f"{HOUSEKEEPING_MODULE}.cap_output({output_limit})\n"
        f"{TIMING_MODULE}.install()\n"
        + ("" if saves_memory else f"{HOUSEKEEPING_MODULE}.malloc_for_timing()\n")
        + "import jax as _ag_jax\n"
        f"assert _ag_jax.device_count() == {DEVICE_COUNT}, _ag_jax.devices()\n"
        + compilation_settings
        + f"{HOUSEKEEPING_MODULE}.start_warm_up({warm_up_ended!r})\n"
        f"del _ag_sys, _ag_jax, {', '.join(modules)}\n"
    )


def before_timed_cell_code(task: str) -> str:
    """Before each cell of a task that times code: the lab probe's warm-up has ended, malloc keeps large
    blocks (kernel_malloc.py), and the timing record records for ``task`` (facts/timing_record.py; the
    recorder takes the record with the task's facts)."""
    return (
        f"__import__({HOUSEKEEPING_MODULE!r}).wait_for_warm_up({WARM_UP_WAIT})\n"
        f"__import__({HOUSEKEEPING_MODULE!r}).malloc_for_timing()\n"
        f"__import__({TIMING_MODULE!r}).start({task!r})\n"
    )


def after_timed_task_code() -> str:
    """After a task that times code, before its facts are recorded: malloc gives memory back again."""
    return f"__import__({HOUSEKEEPING_MODULE!r}).malloc_for_memory()\n"


def reap_children_code() -> str:
    return f"__import__({HOUSEKEEPING_MODULE!r}).reap_children()\n"


def recorder_code(manifest_json: str) -> str:
    return f"__import__({RECORDER_MODULE!r}).capture({manifest_json!r}, globals())\n"
