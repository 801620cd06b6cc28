"""Mutants of lab 4's solution that no check should fail, each with why (``autograder mutants``)."""

_CLAMPED = ("b[1] of a (1, 16) block: JAX clamps a static index past the end to the last row, so the body "
            "reads b[0] all the same; the same program, the same values on every device")
_CALLS = ("one timed call more or fewer than 200, divided by the same count it ran: the text asks for at "
          "least 200 calls, and a mean of 199 or 201 calls measures the same time per call")
_CANNOT_TELL = ("survives only where the grader's own measurement cannot tell the two products apart (its 90 % "
                "interval of gathered ÷ collective holds 1): then either verdict is right, and the two times, "
                "swapped, still agree with the grader's; where it can tell them apart the verdict and speedup "
                "checks fail it")

EQUIVALENT_MUTANTS = {
    "t2-off_by_one-c685a8a8": _CLAMPED,
    "t2-off_by_one-305b7baf": _CLAMPED,
    "t5-off_by_one-900bfbbf": _CALLS,
    "t5-off_by_one-e8bbbfb1": _CALLS,
    "t5-swap-bd17942e": _CANNOT_TELL,
    "t5-negate-a400e666": _CANNOT_TELL,
}
