"""The first code cell of every lab: the lab's 8 CPU devices set before JAX starts, in a student's own
Jupyter, which lacks the harness's environment (under grading the cell changes nothing). The tests keep
each solution's locked setup cell equal to ``SOURCE``.
"""

from __future__ import annotations

from importlib import metadata

import nbformat

from autograder.grading import DISTRIBUTION, STUDENT_DISTRIBUTION, tested_range
from autograder.run import DEVICE_COUNT, HARNESS_ENV

CELL_ID = "setup-devices"
# the students' package (``autograder student-wheel``), whose wheel is named as Python names wheels
WHEEL = f"{STUDENT_DISTRIBUTION.replace('-', '_')}-{metadata.version(DISTRIBUTION)}-py3-none-any.whl"
INSTALL_COMMAND = f"%pip install {WHEEL}"
RESTART_MESSAGE = "restart the kernel and run this cell first"


def _tested_jax() -> tuple[str, str]:
    """``pyproject.toml``'s range of JAX: the lowest tested, the first not."""
    tested = tested_range("jax")
    bounds = {spec.operator: spec.version for spec in tested or ()}
    if ">=" not in bounds or "<" not in bounds:
        raise RuntimeError(f"the installed harness declares no JAX range of the form >=LOW,<HIGH (found {tested})")
    return bounds[">="], bounds["<"]


JAX_LOW, JAX_HIGH = _tested_jax()
UNTESTED_JAX_MESSAGE = f"the lab's checks are tested on JAX >={JAX_LOW},<{JAX_HIGH}"

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


def _version(text):
    return tuple(int(part) for part in _re.findall(r"\\d+", text)[:3])


if not _version("{JAX_LOW}") <= _version(jax.__version__) < _version("{JAX_HIGH}"):
    print(f"This kernel has JAX {{jax.__version__}}; {UNTESTED_JAX_MESSAGE}: install one, e.g. "
          '%pip install "jax>={JAX_LOW},<{JAX_HIGH}" "jaxlib>={JAX_LOW},<{JAX_HIGH}", then restart the kernel.',
          file=_sys.stderr)
'''


def new_setup_cell() -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(SOURCE)
    cell.id = CELL_ID
    return cell
