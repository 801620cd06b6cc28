"""Mutants of lab 4's solution that no check should fail, each with why (``autograder mutants``)."""

_CLAMPED = (
    "b[1] of a (1, 16) block: JAX clamps a static index past the end to the last row, so the body "
    "reads b[0] all the same; the same program, the same values on every device"
)
_CALLS = (
    "one timed call more or fewer than 200, divided by the same count it ran: the text asks for at "
    "least 200 calls, and a mean of 199 or 201 calls measures the same time per call"
)
_VERDICT_TYPE = (
    "a NumPy bool for the verdict: t5's text asks whether the collective matmul is faster, naming no "
    "type, so its check accepts a NumPy bool explicitly (test_t5_verdict, accept=)"
)
EQUIVALENT_MUTANTS = {
    "t5-type-903b2071": _VERDICT_TYPE,
    "t2-off_by_one-c685a8a8": _CLAMPED,
    "t2-off_by_one-305b7baf": _CLAMPED,
    "t5-off_by_one-900bfbbf": _CALLS,
    "t5-off_by_one-e8bbbfb1": _CALLS,
}
