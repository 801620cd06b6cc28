"""What graded a result (a grade can move with JAX, so a regrade can tell), and the JAX the harness is
tested on, from the range ``pyproject.toml`` declares: both read from the installed packages' metadata."""

from __future__ import annotations

import functools
import platform
from importlib import metadata

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

# The harness's distributions: the grader's and the students' (the import package of both is `autograder`;
# the name `autograder` on the package index is another project's).
DISTRIBUTION = "jax-labs-autograder"
STUDENT_DISTRIBUTION = "jax-labs-autograder-student"
PACKAGES = {"autograder": DISTRIBUTION, "jax": "jax", "jaxlib": "jaxlib", "numpy": "numpy"}  # shown -> distribution


@functools.cache
def grader_versions() -> dict[str, str]:
    """``{"autograder": "0.1.0", "jax": ..., "jaxlib": ..., "numpy": ..., "python": "3.11.2"}``."""
    found = {}
    for name, distribution in PACKAGES.items():
        try:
            found[name] = metadata.version(distribution)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    return {**found, "python": platform.python_version()}


def versions_line(versions: dict[str, str]) -> str:
    """'Graded by autograder 0.1.0 with JAX 0.10.2 (jaxlib 0.10.2), NumPy 2.3.1, Python 3.11.2.'"""
    return (
        f"Graded by autograder {versions.get('autograder', '?')} with JAX {versions.get('jax', '?')} "
        f"(jaxlib {versions.get('jaxlib', '?')}), NumPy {versions.get('numpy', '?')}, "
        f"Python {versions.get('python', '?')}."
    )


@functools.cache
def tested_range(package: str = "jax") -> SpecifierSet | None:
    """The versions of ``package`` the installed harness declares (``>=0.10.2,<0.13``); None if unknown."""
    for distribution in (DISTRIBUTION, STUDENT_DISTRIBUTION):
        try:
            requirements = [Requirement(line) for line in metadata.requires(distribution) or []]
        except (metadata.PackageNotFoundError, InvalidRequirement):
            continue
        for requirement in requirements:
            if requirement.name == package and requirement.specifier:
                return requirement.specifier
    return None


def version_problem(package: str, installed: str, tested: SpecifierSet | None) -> str | None:
    """None when ``installed`` is among the ``tested`` versions (or nothing is known), else what to do."""
    try:
        if tested is None or Version(installed) in tested:
            return None
    except InvalidVersion:
        return None
    spec = ",".join(sorted(str(s) for s in tested))
    return (
        f"This kernel has {package} {installed}; the checks are tested on {package} {spec}, and the course "
        f"grades with one of those. Install one into this kernel's environment, then restart the kernel:\n\n"
        f'    %pip install "{package}{spec}"'
    )
