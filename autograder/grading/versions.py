"""What graded a result: the harness's, JAX's, jaxlib's, NumPy's and Python's versions, kept with it.

A grade can move with JAX (a collective's name in the HLO, a rounding): a result says what produced it,
so an instructor comparing two runs, or a regrade months later, can tell. Read from the installed
packages' metadata: importing JAX is not needed for it.
"""

from __future__ import annotations

import functools
import platform
from importlib import metadata

PACKAGES = ("autograder", "jax", "jaxlib", "numpy")


@functools.cache
def grader_versions() -> dict[str, str]:
    """``{"autograder": "0.1.0", "jax": ..., "jaxlib": ..., "numpy": ..., "python": "3.11.2"}``."""
    found = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    return {**found, "python": platform.python_version()}


def versions_line(versions: dict[str, str]) -> str:
    """'Graded by autograder 0.1.0 with JAX 0.10.2 (jaxlib 0.10.2), NumPy 2.3.1, Python 3.11.2.'"""
    if not versions:
        return ""
    return (f"Graded by autograder {versions.get('autograder', '?')} with JAX {versions.get('jax', '?')} "
            f"(jaxlib {versions.get('jaxlib', '?')}), NumPy {versions.get('numpy', '?')}, "
            f"Python {versions.get('python', '?')}.")
