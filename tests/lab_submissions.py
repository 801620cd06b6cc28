"""The submissions with known grades of every lab, by lab id, and the checks no grade of theirs may fix."""

import lab1_submissions
import lab2_submissions
import lab3_submissions
import lab4_collectives_submissions

CASES_BY_LAB = {
    "lab1_distributed_arrays": lab1_submissions.CASES,
    "lab2_three_ways": lab2_submissions.CASES,
    "lab3_fsdp_tp": lab3_submissions.CASES,
    "lab4_collectives": lab4_collectives_submissions.CASES,
}

# Checks whose outcome follows from which side of 1 the grader's own timing falls on, this grading, on
# this machine: no known grade holds them (a case's scores leave their points out). What they decide is
# tested on constructed measurements (tests/test_checks_timing.py, tests/test_grader_timing.py). A lab
# not named here has none.
MEASURED_VERDICTS = {
    "lab2_three_ways": {"test_t8_verdict"},
}


def fixed_checks(lab_id, checks):
    """The checks whose outcome a known grade may state: all but the lab's MEASURED_VERDICTS."""
    return [c for c in checks if c.name not in MEASURED_VERDICTS.get(lab_id, ())]
