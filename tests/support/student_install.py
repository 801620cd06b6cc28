"""A student's setup, for tests: the students' wheel (``autograder student-wheel``) installed into a fresh
venv, the lab notebooks copied out of the checkout, and the environment a student's Jupyter gives a kernel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import nbformat

from autograder.authoring.known_grades import make_submission, solved
from autograder.course import build_student_wheel
from autograder.lab import Lab
from autograder.run.devices import INHERITED_PREFIXES_DROPPED


def plain_environment() -> dict[str, str]:
    """The environment a student's own Jupyter gives a kernel: none of the harness's device settings,
    nothing pointing into the checkout."""
    dropped = ("PYTHONPATH", "VIRTUAL_ENV", "AUTOGRADER_ROOT", "JPY_PARENT_PID")
    return {k: v for k, v in os.environ.items() if not k.startswith(INHERITED_PREFIXES_DROPPED) and k not in dropped}


def installed_venv(directory: Path) -> Path:
    """A fresh venv holding the students' wheel of this checkout, installed (not editable); its
    other packages (JAX, Jupyter's kernel) are this interpreter's, reached through a ``.pth`` file, so
    nothing is downloaded. Returns the venv's python."""
    wheel = build_student_wheel(None, directory / "build")
    venv = directory / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    ours = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (Path(purelib) / "test_interpreter_packages.pth").write_text("".join(f"{p}\n" for p in ours))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--disable-pip-version-check",
            str(wheel),
        ],
        check=True,
        timeout=300,
    )
    return python


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
