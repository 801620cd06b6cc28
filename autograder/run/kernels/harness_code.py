"""The code the harness runs in a kernel's cells of its own, and the kernel package it copies in for it:
kept apart from the kernel's lifecycle so that what is said to the kernel reads in one place."""

from __future__ import annotations

import shutil
from pathlib import Path

from autograder.kernel import LAB_PROBE_MODULE, SOURCE
from autograder.run.kernels.devices import DEVICE_COUNT

KERNEL_PACKAGE = "_autograder_kernel"
KERNEL_SOURCE = Path(SOURCE)
HOUSEKEEPING = f"__import__({KERNEL_PACKAGE!r}).housekeeping"
TIMING = f"__import__({KERNEL_PACKAGE!r}).timing_record"
RECORDER = f"__import__({KERNEL_PACKAGE!r}).recorder"
WARM_UP_ENDED = "warm-up-ended"  # the file the warm-up creates in the facts folder once it has ended
WARM_UP_WAIT = 60.0  # seconds a cell that measures time waits at most for the lab probe's warm-up
AFTER_TIMED_TASK_CODE = f"{HOUSEKEEPING}.malloc_for_memory()\n"
REAP_CHILDREN_CODE = f"{HOUSEKEEPING}.reap_children()\n"


def copy_kernel_package(modules_dir: Path, lab_probe: Path | None = None) -> None:
    """The kernel package and the lab's probe: all the harness's code a kernel ever sees."""
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
    """Before any student cell. JAX's backend reads the device count once, when first used: using it here
    means that nothing a notebook later sets changes the devices."""
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


def before_timed_cell_code(task: str, saves_memory: bool) -> str:
    """A kernel that saves memory times with blocks kept up to a bound (``malloc_for_timing``)."""
    return (
        f"{HOUSEKEEPING}.wait_for_warm_up({WARM_UP_WAIT})\n"
        f"{HOUSEKEEPING}.malloc_for_timing({saves_memory!r})\n"
        f"{TIMING}.start({task!r})\n"
    )


def recorder_code(manifest_json: str) -> str:
    return f"{RECORDER}.record_task_facts({manifest_json!r}, globals())\n"
