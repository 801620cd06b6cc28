"""A fresh venv holding a wheel installed as a user installs it (not editable), for tests: the students'
wheel, or the harness's own. Its other packages (JAX, Jupyter's kernel) are this interpreter's, reached
through a ``.pth`` file, so nothing is downloaded."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from autograder.course.student_package import build_wheel_of
from autograder.paths import PACKAGE_DIR

CHECKOUT = PACKAGE_DIR.parent
# What a build of the harness reads: its declaration and the bundled course setup.py copies into the wheel.
PROJECT_FILES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "autograder-course.toml")
PROJECT_FOLDERS = ("autograder", "solutions", "assignments", "tests/labs")


def harness_wheel(directory: Path) -> Path:
    """The harness's wheel, built from a copy of this checkout (the build's files stay out of it)."""
    source = directory / "source"
    for name in PROJECT_FILES:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(CHECKOUT / name, source / name)
    for name in PROJECT_FOLDERS:
        shutil.copytree(CHECKOUT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return build_wheel_of(source, directory / "dist")


def venv_with(wheel: Path, venv: Path) -> Path:
    """A fresh venv at ``venv`` with ``wheel`` installed; the venv's python."""
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
