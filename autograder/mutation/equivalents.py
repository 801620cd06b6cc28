"""The mutants a lab accepts as equivalent to its solution: ``EQUIVALENT_MUTANTS`` in the lab's
``equivalent_mutants.py``, mutant id -> why no check should fail it."""

from __future__ import annotations

import importlib

from autograder.lab import load_lab

MODULE = "equivalent_mutants"


class EquivalentsError(ValueError):
    """The lab's equivalent_mutants.py is malformed; the message says how."""


def recorded_equivalents(lab_id: str) -> dict[str, str]:
    """The lab's recorded equivalent mutants (id -> reason); {} when the lab records none."""
    name = f"{load_lab(lab_id).package.__name__}.{MODULE}"  # the lab's package first: a course's joins the path
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == name:
            return {}
        raise
    records = getattr(module, "EQUIVALENT_MUTANTS", None)
    if not isinstance(records, dict):
        raise EquivalentsError(f"{module.__file__}: EQUIVALENT_MUTANTS must be a dict: mutant id -> reason")
    unexplained = sorted(k for k, v in records.items() if not isinstance(v, str) or not v.strip())
    if unexplained:
        raise EquivalentsError(f"{module.__file__}: no reason given for {', '.join(map(str, unexplained))}")
    return dict(records)
