"""The code the harness runs in a kernel's cells of its own, and what it copies into the kernel for it.

Before any student cell, ``startup_code`` loads the kernel package (autograder/kernel: the housekeeping,
the timing record, the recorder; copied into the kernel's modules folder as ``KERNEL_PACKAGE``) and the
lab's probe (copied beside it as ``LAB_PROBE_MODULE``), caps
the output, fixes the devices and starts the lab probe's warm-up; between the student's cells the harness
waits for that warm-up and has malloc keep large blocks before a cell that times code
(``before_timed_cell_code``, undone by ``after_timed_task_code``), reaps the children a cell left
(``reap_children_code``) and has the recorder take a task's facts (``recorder_code``). Kept apart from the
kernel's lifecycle (run/kernels/lifecycle.py) so that the words said to the kernel can be read in one place.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from autograder.kernel import LAB_PROBE_MODULE, SOURCE
from autograder.run.kernels.devices import DEVICE_COUNT

# What is copied into the kernel: the kernel package, under this name there, and beside it the lab's own
# probe (as LAB_PROBE_MODULE, which the package's housekeeping finds by that name).
KERNEL_PACKAGE = "_autograder_kernel"
KERNEL_SOURCE = Path(SOURCE)
HOUSEKEEPING = f"__import__({KERNEL_PACKAGE!r}).housekeeping"  # the package's modules, as the kernel's code names them
TIMING = f"__import__({KERNEL_PACKAGE!r}).timing_record"
RECORDER = f"__import__({KERNEL_PACKAGE!r}).recorder"
WARM_UP_ENDED = "warm-up-ended"  # the file the warm-up creates in the facts folder once it has ended
WARM_UP_WAIT = 60.0  # seconds a cell that measures time waits at most for the lab probe's warm-up


def copy_kernel_package(modules_dir: Path, lab_probe: Path | None = None) -> None:
    """Put the kernel package (its Python files alone) and the lab's probe into the kernel's modules folder:
    all the harness's code a kernel ever sees."""
    shutil.copytree(KERNEL_SOURCE, modules_dir / KERNEL_PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    if lab_probe is not None:
        shutil.copyfile(lab_probe, modules_dir / f"{LAB_PROBE_MODULE}.py")


def startup_code(
    modules_dir: str,
    with_lab_probe: bool,
    output_limit: int,
    warm_up_ended: str | None = None,
    compilation_settings: str = "",
    saves_memory: bool = True,
) -> str:
    """Run before any student cell: load the kernel package and the lab probe (from ``modules_dir``), cap
    the output, have malloc keep large blocks unless it ``saves_memory`` (run/kernels/malloc.py), fix the device
    count for the kernel's life, set where compiled programs are read or written (``compilation_settings``:
    compiled_programs.py) and start the lab probe's warm-up, which creates ``warm_up_ended`` once it has
    ended (see kernel/housekeeping.py).

    JAX's backend reads the device count once, when first used; using it here means that nothing a
    notebook later sets (``XLA_FLAGS``, ``jax_num_cpu_devices``) changes the devices.
    """
    modules = [f"{KERNEL_PACKAGE}.{m}" for m in ("housekeeping", "timing_record", "recorder")]
    modules += [LAB_PROBE_MODULE] if with_lab_probe else []
    return (
        "import sys as _ag_sys\n"
        f"_ag_sys.path.insert(0, {modules_dir!r})\n"
        + "".join(f"import {m}\n" for m in modules)
        + f"_ag_sys.path.remove({modules_dir!r})\n"
        f"{HOUSEKEEPING}.cap_output({output_limit})\n"
        f"{TIMING}.install()\n"
        + ("" if saves_memory else f"{HOUSEKEEPING}.malloc_for_timing()\n")
        + "import jax as _ag_jax\n"
        f"assert _ag_jax.device_count() == {DEVICE_COUNT}, _ag_jax.devices()\n"
        + compilation_settings
        + f"{HOUSEKEEPING}.start_warm_up({warm_up_ended!r})\n"
        f"del _ag_sys, _ag_jax, {KERNEL_PACKAGE}{', ' + LAB_PROBE_MODULE if with_lab_probe else ''}\n"
    )


def before_timed_cell_code(task: str) -> str:
    """Before each cell of a task that times code: the lab probe's warm-up has ended, malloc keeps large
    blocks (run/kernels/malloc.py), and the timing record records for ``task`` (kernel/timing_record.py; the
    recorder takes the record with the task's facts)."""
    return (
        f"{HOUSEKEEPING}.wait_for_warm_up({WARM_UP_WAIT})\n"
        f"{HOUSEKEEPING}.malloc_for_timing()\n"
        f"{TIMING}.start({task!r})\n"
    )


def after_timed_task_code() -> str:
    """After a task that times code, before its facts are recorded: malloc gives memory back again."""
    return f"{HOUSEKEEPING}.malloc_for_memory()\n"


def reap_children_code() -> str:
    return f"{HOUSEKEEPING}.reap_children()\n"


def recorder_code(manifest_json: str) -> str:
    return f"{RECORDER}.record_task_facts({manifest_json!r}, globals())\n"
