"""Test session setup: 8 virtual CPU devices for the grader-side JAX, as the harness uses."""

import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ["JAX_PLATFORMS"] = "cpu"
os.environ.setdefault("PJRT_NPROC", "16")


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def lab_grades(tmp_path_factory):
    """lab id -> (lab, grades): the lab's solution, untouched notebook and known-grade submissions,
    graded once per session on first use, two at a time."""
    from autograder.lab import load_lab
    from grading_session import grade_all
    from lab_submissions import CASES_BY_LAB

    graded = {}

    def grades(lab_id: str):
        if lab_id not in graded:
            lab = load_lab(lab_id)
            graded[lab_id] = (lab, grade_all(lab, CASES_BY_LAB[lab_id], tmp_path_factory.mktemp(lab_id)))
        return graded[lab_id]

    return grades
