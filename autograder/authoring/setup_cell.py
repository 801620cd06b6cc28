"""The first code cell of every lab: the lab's 8 CPU devices set before JAX starts, in any Jupyter.

A student's kernel is started by their own Jupyter (a laptop, JupyterHub, Colab) without the harness's
environment, so the cell sets it; when JAX had already started with other devices it says to restart
the kernel. Under grading the kernel already has the harness's settings (``devices.HARNESS_ENV``) and
its 8 devices, and the cell changes nothing. The cell is a locked cell of each solution notebook, kept
equal to ``SOURCE`` by the tests.
"""

from __future__ import annotations

from importlib import metadata

import nbformat

from autograder.run import DEVICE_COUNT, HARNESS_ENV

CELL_ID = "setup-devices"
STUDENT_DISTRIBUTION = "autograder-student"  # the students' package (``autograder student-wheel``)
WHEEL = f"{STUDENT_DISTRIBUTION.replace('-', '_')}-{metadata.version('autograder')}-py3-none-any.whl"
INSTALL_COMMAND = f"%pip install {WHEEL}"
RESTART_MESSAGE = "restart the kernel and run this cell first"

SOURCE = f'''\
# Setup: run this cell first. It gives JAX the lab's {DEVICE_COUNT} CPU devices, which only works before JAX
# starts. The checks under each task need the grading harness: put the wheel your course gives next to
# this notebook (or use its address), install it once into this kernel's environment, restart the kernel:
#     {INSTALL_COMMAND}
import os as _os
import re as _re
import sys as _sys

_os.environ["JAX_PLATFORMS"] = _os.environ.get("JAX_PLATFORMS") or "{HARNESS_ENV["JAX_PLATFORMS"]}"
_os.environ["PJRT_NPROC"] = _os.environ.get("PJRT_NPROC") or "{HARNESS_ENV["PJRT_NPROC"]}"  # no collective deadlock on few cores
_os.environ["XLA_FLAGS"] = " ".join(
    [f for f in _os.environ.get("XLA_FLAGS", "").split() if not _re.match("--xla_force_host_platform_device_count", f)]
    + ["--xla_force_host_platform_device_count={DEVICE_COUNT}"])

import jax

if jax.device_count() != {DEVICE_COUNT}:
    print(f"JAX started with {{jax.device_count()}} device(s) before this cell ran; the lab needs {DEVICE_COUNT}: "
          "{RESTART_MESSAGE}.", file=_sys.stderr)
'''


def new_setup_cell() -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(SOURCE)
    cell.id = CELL_ID
    return cell
