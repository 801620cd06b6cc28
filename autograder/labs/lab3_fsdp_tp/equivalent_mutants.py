"""Mutants of lab 3's solution that no check should fail, each with why (``autograder mutants``)."""

_MEDIAN = (
    "the median of 30 blocked calls does not move with the warm-up's count, a first slow (compiling) "
    "call, or a round more or less: the graded time is the same"
)

_MEDIAN_IS_A_FLOAT = (
    "float(...) left out around np.median(...): np.median returns a numpy.float64, which is a Python "
    "float (a subclass of float), so the time is a float either way"
)

_WHOLE_FIRST = (
    "an operand laid out whole on every device (P()) inside the jitted function, right before its "
    "shard_map: the body still receives the block its in_specs name, so the values, the output layout, "
    "the jitted shard_map and the collectives the text asks for are the same; the text says the function "
    "accepts its inputs in any layout on mesh and asks nothing of what each device holds before the body"
)

EQUIVALENT_MUTANTS = {
    "t4-type-cc14d8bb": _MEDIAN_IS_A_FLOAT,
    "t4-off_by_one-ea193f7e": _MEDIAN,
    "t4-off_by_one-31ba550e": _MEDIAN,
    "t4-off_by_one-7b80a964": _MEDIAN,
    "t4-off_by_one-dd5eb3f9": _MEDIAN,
    "t4-timing-5909ebce": _MEDIAN,
    "t4-timing-0d2ba562": _MEDIAN,
    "t4-timing-ee9f83ac": _MEDIAN,
    "t5-jit-5f646bcc": (
        "all_to_all_back without jax.jit: the text asks for a jitted all_to_all and for X_roundtrip's "
        "values and layout, which an eager inverse all_to_all gives the same"
    ),
    "t6-jit-414d6bb4": (
        "apply_layer without @nnx.jit: the text suggests nnx.jit ('compiles the layer once') but "
        "grades layer_out, whose values and layout are the same computed eagerly"
    ),
    "t1-whole_operand-1221adb1": _WHOLE_FIRST,
    "t1-whole_operand-a760ed1f": _WHOLE_FIRST,
    "t2-whole_operand-ec404641": _WHOLE_FIRST,
    "t2-whole_operand-5fc4e547": _WHOLE_FIRST,
    "t2-whole_operand-3ee7a023": _WHOLE_FIRST,
    "t3-whole_operand-3fef26c7": _WHOLE_FIRST,
    "t5-whole_operand-b948ac23": _WHOLE_FIRST,
    "t5-whole_operand-d35ae484": _WHOLE_FIRST,
    "t4-whole_operand-f7dca613": _WHOLE_FIRST,
}
