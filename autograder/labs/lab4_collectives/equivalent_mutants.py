"""Mutants of lab 4's solution that no check should fail, each with why (``autograder mutants``)."""

_CLAMPED = (
    "b[1] of a (1, 16) block: JAX clamps a static index past the end to the last row, so the body "
    "reads b[0] all the same; the same program, the same values on every device"
)
_CALLS = (
    "201 timed calls where the text asks for at least 200: a right answer (199, which the timing record "
    "counts, is killed)"
)
_VERDICT_TYPE = (
    "a NumPy bool for the verdict: t5's text asks whether the collective matmul is faster, naming no "
    "type, so its check accepts a NumPy bool explicitly (test_t5_verdict, accept=)"
)
_WARM_UP_NOT_AWAITED = (
    "the warm-up call not awaited: it compiles at the call all the same, and the first timed call waits "
    "behind its run: one call's time more in 200"
)
EQUIVALENT_MUTANTS = {
    "t5-timing-23578f2c": _WARM_UP_NOT_AWAITED,
    "t5-type-903b2071": _VERDICT_TYPE,
    "t2-off_by_one-c685a8a8": _CLAMPED,
    "t2-off_by_one-305b7baf": _CLAMPED,
    "t5-off_by_one-e8bbbfb1": _CALLS,
}
