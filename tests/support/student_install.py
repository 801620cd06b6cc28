"""A student's setup, for tests: the students' wheel (``autograder student-wheel``) installed into a fresh
venv, the lab notebooks copied out of the checkout, and the environment a student's Jupyter gives a kernel."""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
from wheel_venv import venv_with

from autograder.authoring.known_grades import make_submission, solved
from autograder.course import build_student_wheel
from autograder.lab import Lab
from autograder.run.kernels.devices import INHERITED_PREFIXES_DROPPED


def plain_environment() -> dict[str, str]:
    """The environment a student's own Jupyter gives a kernel: none of the harness's device settings,
    nothing pointing into the checkout."""
    dropped = ("PYTHONPATH", "VIRTUAL_ENV", "AUTOGRADER_ROOT", "JPY_PARENT_PID")
    return {k: v for k, v in os.environ.items() if not k.startswith(INHERITED_PREFIXES_DROPPED) and k not in dropped}


def installed_venv(directory: Path) -> Path:
    """A fresh venv holding the students' wheel of this checkout, installed (not editable); its python."""
    return venv_with(build_student_wheel(None, directory / "build"), directory / "venv")


def kernel_spec(kernels: Path, python: Path, name: str = "student") -> str:
    """A kernel spec (in the folder ``kernels``) that starts ``python``'s ipykernel, as Jupyter does."""
    spec = kernels / name
    spec.mkdir(parents=True, exist_ok=True)
    argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": f"Python 3 ({name})", "language": "python"})
    )
    return name


def filled_notebook(lab: Lab, directory: Path) -> Path:
    """The lab's student notebook with every answer filled in, in a folder of its own."""
    return make_submission(lab, solved(*(t.id for t in lab.tasks)), directory / lab.id / f"{lab.id}.ipynb")


def untouched_notebook(lab: Lab, directory: Path) -> Path:
    """The lab's student notebook as handed out, in a folder of its own."""
    path = directory / lab.id / f"{lab.id}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(lab.template, path)
    return path
