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
# Measured on this project's 2-core machine, collective_matmul on big_lhs and big_rhs, 200 calls, 3 runs.
_COLD_FIRST_CALL = (
    "the warm-up left out: the first of the 200 timed calls compiles, which spread over 200 calls is not "
    "told apart on 8 CPU devices (2.9-5.4 ms a call cold against 1.7-2.3 ms warm, inside the time check's "
    "factor of 4); the text's 'compile before timing' is quoted in requirements.toml with this measurement"
)
_WARM_UP_NOT_AWAITED = (
    "the warm-up call not awaited: it compiles at the call all the same, and the first timed call waits "
    "behind its run: one call's time more in 200"
)
_LOOP_NOT_BLOCKED = (
    "block_until_ready dropped in the timed loop: 200 calls dispatched without waiting queue behind each "
    "other, so the loop takes about as long (1.3-1.9 ms a call unblocked against 1.7-2.3 ms blocked): not "
    "told apart on 8 CPU devices"
)
_SWAPPED_ARGUMENTS = (
    "collective_matmul timed on big_rhs and big_lhs swapped: the shapes pass (the body's dynamic_slice clamps "
    "its start) and the product it computes does about 4 times the multiplications of the right one on "
    "8 CPU devices, where a call is mostly overhead, so its time is inside the time check's factor of 4 or "
    "not depending on the machine's load: killed on a quiet machine, kept on a busy one"
)
EQUIVALENT_MUTANTS = {
    "t5-swap-ec736e42": _SWAPPED_ARGUMENTS,
    "t5-timing-a605939e": _COLD_FIRST_CALL,
    "t5-timing-23578f2c": _WARM_UP_NOT_AWAITED,
    "t5-timing-3f7dfe8a": _LOOP_NOT_BLOCKED,
    "t5-type-903b2071": _VERDICT_TYPE,
    "t2-off_by_one-c685a8a8": _CLAMPED,
    "t2-off_by_one-305b7baf": _CLAMPED,
    "t5-off_by_one-900bfbbf": _CALLS,
    "t5-off_by_one-e8bbbfb1": _CALLS,
}
