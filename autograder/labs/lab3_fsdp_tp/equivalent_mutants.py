"""Mutants of lab 3's solution that no check fails, each with why (``autograder mutants``).

t4 binds only the four medians (``collective_times``): the functions timed are not part of the answer, so
a function of the table replaced by one whose collective costs about as much (within the grader's
fourfold margin on a shared machine) cannot be told apart. Telling them apart would need the task to bind
its functions too; until then these are accepted here, named, and counted out of the score.
"""

_TIMES_ONLY = ("t4 grades the four times alone, and this function's collective costs about as much as the "
               "table's (the same collective with another output layout or shape, or an all-reduce for a "
               "reduce-scatter of the same block): within the margin the timing check needs")
_MEDIAN = ("the median of 30 blocked calls does not move with the warm-up's count, a first slow (compiling) "
           "call, or a round more or less: the graded time is the same")

EQUIVALENT_MUTANTS = {
    "t4-spec-22c2ade8": _TIMES_ONLY,
    "t4-spec-f22feaee": _TIMES_ONLY,
    "t4-collective-eaca3c9e": _TIMES_ONLY,
    "t4-collective-ba220b1b": _TIMES_ONLY,
    "t4-collective-3f488df6": _TIMES_ONLY,
    "t4-collective-9c6f361b": _TIMES_ONLY,
    "t4-off_by_one-ea193f7e": _MEDIAN,
    "t4-off_by_one-31ba550e": _MEDIAN,
    "t4-off_by_one-7b80a964": _MEDIAN,
    "t4-off_by_one-dd5eb3f9": _MEDIAN,
    "t4-timing-5909ebce": _MEDIAN,
    "t4-timing-0d2ba562": _MEDIAN,
    "t4-timing-ee9f83ac": _MEDIAN,
    "t5-jit-5f646bcc": ("all_to_all_back without jax.jit: the text asks for a jitted all_to_all and for X_roundtrip's "
                        "values and layout, which an eager inverse all_to_all gives the same"),
    "t6-jit-414d6bb4": ("apply_layer without @nnx.jit: the text suggests nnx.jit ('compiles the layer once') but "
                        "grades layer_out, whose values and layout are the same computed eagerly"),
}
