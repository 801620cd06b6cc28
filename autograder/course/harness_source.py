"""The harness's source, staged for a wheel: the package as it runs here, checkout or installed alike, so
that an instructor who only installed the harness builds the Gradescope zip's and the students' wheels
too. The package's folder is copied without caches; its ``pyproject.toml`` is written from the installed
distribution's own metadata.
"""

from __future__ import annotations

import json
import re
import shutil
from importlib import metadata
from pathlib import Path

from autograder.grading import DISTRIBUTION
from autograder.paths import BUNDLED_COPY, PACKAGE_DIR


class HarnessSourceError(RuntimeError):
    """The installed harness's metadata cannot be read: it is not installed as a distribution."""


def installed_project() -> dict:
    """The installed harness's name, version, Python range and dependencies (extras left out)."""
    try:
        found = metadata.metadata(DISTRIBUTION)
        requires = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError as exc:
        raise HarnessSourceError(
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


def stage_package(target: Path, left_out: tuple[str, ...] = ()) -> Path:
    """Copy the running ``autograder`` package into ``target/autograder``, without caches, ``left_out``
    (names of its folders and files) or the bundled course's notebooks; the copy's path."""
    package = target / "autograder"
    ignored = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(PACKAGE_DIR, package, ignore=ignored)
    for name in (*left_out, BUNDLED_COPY):
        path = package / name
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    return package


def pyproject_text(project: dict, scripts: dict[str, str], package_data: dict[str, list[str]]) -> str:
    """A ``pyproject.toml`` building ``project`` (as ``installed_project`` gives it) from a staged package."""
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
    lines += ["[tool.setuptools.packages.find]", 'include = ["autograder*"]', ""]
    if package_data:
        lines += ["[tool.setuptools.package-data]"]
        lines += [f"{json.dumps(name)} = {json.dumps(globs)}" for name, globs in package_data.items()]
        lines += [""]
    return "\n".join(lines)


GRADER_PACKAGE_DATA = {"autograder.authoring": ["templates/**/*.j2"], "autograder.labs": ["*/requirements.toml"]}


def stage_harness(target: Path) -> Path:
    """The grader's source tree in ``target/source``: the package and its ``pyproject.toml``."""
    source = target / "source"
    source.mkdir(parents=True)
    stage_package(source)
    scripts = {"autograder": "autograder.cli:program"}
    (source / "pyproject.toml").write_text(pyproject_text(installed_project(), scripts, GRADER_PACKAGE_DATA))
    return source
