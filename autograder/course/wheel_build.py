"""A wheel of the harness, staged as it runs here, checkout or installed alike (an instructor who only
installed it builds the zip's and the students' wheels too); built without isolation (this interpreter has
setuptools) and with fixed timestamps, so that the same source gives the same wheel.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from autograder.grading import DISTRIBUTION
from autograder.paths import BUNDLED_COPY, PACKAGE_DIR

SOURCE_DATE_EPOCH = "315532800"  # 1980-01-01: the wheel's timestamps, for identical builds


class WheelBuildError(RuntimeError):
    """The build failed or made other than one wheel, or the harness is not installed as a distribution."""


def build_wheel_of(source: Path, out: Path) -> Path:
    """The one wheel ``python -m build`` makes of ``source``, written into ``out``."""
    build = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--skip-dependency-check", "--outdir"]
    environment = {**os.environ, "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH}
    done = subprocess.run([*build, str(out), str(source)], capture_output=True, text=True, env=environment)
    wheels = sorted(out.glob("*.whl")) if out.is_dir() else []
    if done.returncode != 0 or len(wheels) != 1:
        raise WheelBuildError(done.stderr.strip()[-2000:])
    return wheels[0]


def installed_project() -> dict:
    """The installed harness's name, version, Python range and dependencies (extras left out)."""
    try:
        found = metadata.metadata(DISTRIBUTION)
        requires = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError as exc:
        raise WheelBuildError(
            f"the harness is not installed as {DISTRIBUTION} (pip install it, or `pip install -e .` in a checkout)"
        ) from exc
    return {
        "name": found["Name"],
        "version": found["Version"],
        "requires-python": found.json.get("requires_python") or ">=3.11",
        "dependencies": [r for r in requires if not re.search(r";.*\bextra\s*==", r)],
    }


def requirement_name(requirement: str) -> str:
    """The distribution a requirement names: ``jax`` of ``jax>=0.10.2,<0.13``."""
    return re.split(r"[\[<>=!~; (]", requirement, maxsplit=1)[0].strip().lower()


def stage_package(
    source: Path, project: dict, scripts: dict[str, str], package_data: dict[str, list[str]], left_out: tuple = ()
) -> Path:
    """``source/autograder``: this package without caches, ``left_out`` or the bundled course's notebooks; and
    ``source/pyproject.toml`` building it as ``project`` (as ``installed_project`` gives it)."""
    package = source / "autograder"
    shutil.copytree(PACKAGE_DIR, package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in (*left_out, BUNDLED_COPY):
        path = package / name
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    dependencies = "".join(f"    {json.dumps(d)},\n" for d in project["dependencies"])
    lines = [
        "[build-system]",
        'requires = ["setuptools>=68"]',
        'build-backend = "setuptools.build_meta"',
        "",
        "[project]",
        f"name = {json.dumps(project['name'])}",
        f"version = {json.dumps(project['version'])}",
        f"description = {json.dumps(project.get('description', 'Grading harness for JAX parallelism labs.'))}",
        f"requires-python = {json.dumps(project['requires-python'])}",
        f"dependencies = [\n{dependencies}]",
        "",
    ]
    if scripts:
        lines += ["[project.scripts]", *(f"{name} = {json.dumps(target)}" for name, target in scripts.items()), ""]
    lines += ["[tool.setuptools.packages.find]", 'include = ["autograder*"]', "", "[tool.setuptools.package-data]"]
    lines += [f"{json.dumps(name)} = {json.dumps(globs)}" for name, globs in package_data.items()]
    (source / "pyproject.toml").write_text("\n".join([*lines, ""]))
    return package
