"""Grading harness for JAX parallelism lab notebooks. Each folder of the package is a stage, and its
``__init__`` its door (``doors.py``). Opening the package does one thing at once: every process that
imports it imports nbformat a second sooner (``jsonschema_formats``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from autograder.jsonschema_formats import install as _leave_out_jsonschemas_iri_checker

__version__ = "0.1.0"

_leave_out_jsonschemas_iri_checker()

if TYPE_CHECKING:
    from autograder.authoring import assign_lab
    from autograder.course import BatchOptions, collect_submissions, run_batch
    from autograder.doors import door_names, is_type_checking_block, lazy_exports
    from autograder.grading import GradeOptions, GradeResult, grade_notebook
    from autograder.lab import Lab, lab_ids, load_lab


def _open() -> None:
    """Install this door's ``lazy_exports`` at the first name asked for, so ``import autograder`` alone loads
    nothing else."""
    from autograder.doors import lazy_exports

    getattr_, dir_, exported = lazy_exports(__name__, __file__)
    globals().update(__getattr__=getattr_, __dir__=dir_, __all__=["__version__", *exported])


def __getattr__(name: str) -> Any:
    _open()
    return globals()[name] if name == "__all__" else globals()["__getattr__"](name)


def __dir__() -> list[str]:
    _open()
    return globals()["__dir__"]()
