"""The submissions with known grades of every lab, by lab id, and the checks no grade of theirs may fix.

Each lab the harness knows has its own ``tests/labs/<lab id>_submissions.py`` (written by ``autograder
new-lab``), found here by its name: ``CASES``, its submissions with known grades, and optionally
``MEASURED_VERDICTS``, the names of checks whose outcome follows from which side of 1 the grader's own
timing falls on, this grading, on this machine. No known grade holds those (a case's scores leave their
points out); what they decide is tested on constructed measurements (tests/checks/test_timing.py,
tests/labs/test_grader_timing.py).
"""

import importlib

from autograder.authoring import grade_expectations
from autograder.lab import lab_ids


def _submissions_module(lab_id: str):
    """The lab's known-grade module, or None when the lab has none."""
    try:
        return importlib.import_module(f"{lab_id}_submissions")
    except ModuleNotFoundError as exc:
        if exc.name != f"{lab_id}_submissions":
            raise
        return None


_MODULES = {lab_id: _submissions_module(lab_id) for lab_id in lab_ids()}

LABS_WITHOUT_KNOWN_GRADES = sorted(lab_id for lab_id, module in _MODULES.items() if module is None)
CASES_BY_LAB = {lab_id: module.CASES for lab_id, module in _MODULES.items() if module is not None}
MEASURED_VERDICTS = {
    lab_id: frozenset(getattr(module, "MEASURED_VERDICTS", ()))
    for lab_id, module in _MODULES.items()
    if module is not None
}


def fixed_checks(lab_id, checks):
    """The checks whose outcome a known grade may state: all but the lab's MEASURED_VERDICTS."""
    return grade_expectations.fixed_checks(checks, MEASURED_VERDICTS.get(lab_id, ()))
