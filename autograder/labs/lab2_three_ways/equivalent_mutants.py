"""Mutants of lab 2's solution that no check should fail, each with why (``autograder mutants``)."""

_PRINTED_ONLY = (
    "the arguments of jnp.allclose swapped inside a print: only the printed diagnostic can change "
    "(and it does not, the two arrays being equal); nothing the task asks for is bound or returned"
)
_SAME_SHAPES = (
    "x and y (and x_sh and y_sh) are both (1024, 1) float32 with the same layout: the swapped call "
    "compiles to the same program and costs the same, and t8 grades the times alone"
)
_WARM_ALREADY = (
    "a warm-up call left out or not waited for: grad_loss was compiled and run on both the unsharded "
    "and the sharded arguments before t8 (the lab's cell after the data, and t7's training), so "
    "the timed calls are warm without it"
)

_A_BY_ANOTHER_NAME = (
    "A put on the mesh from one of its other layouts (A_xN, A_Ny or A_NN, each A's values) rather than from A: "
    "device_put copies the values, so the array bound is the same, values and layout"
)
_VISUALIZED_ONLY = (
    "another array shown in the loop that visualizes the four: what the student sees changes, the four names "
    "the task binds (which the grader reads) do not"
)

_MEDIAN_IS_A_FLOAT = (
    "float(...) left out around np.median(...): np.median returns a numpy.float64, which is a Python "
    "float (a subclass of float), so the time is the float the text asks for either way"
)

EQUIVALENT_MUTANTS = {
    "t2-text_name-b1ed9751": _A_BY_ANOTHER_NAME,
    "t2-text_name-d28ae749": _A_BY_ANOTHER_NAME,
    "t2-text_name-6bc2345f": _A_BY_ANOTHER_NAME,
    "t2-text_name-b651243f": _VISUALIZED_ONLY,
    "t2-text_name-57187699": _VISUALIZED_ONLY,
    "t2-text_name-2cf35320": _VISUALIZED_ONLY,
    "t2-text_name-1c4cee39": _VISUALIZED_ONLY,
    "t8-text_name-6a4bbee5": (
        "the sharded warm-up made with params rather than params_replicated: grad_loss was compiled and run on "
        "params_replicated, x_sh and y_sh before t8 (t7's training), so the timed calls are warm without it"
    ),
    "t8-text_name-11b25f22": _SAME_SHAPES,
    "t8-text_name-286ae3b4": _SAME_SHAPES,
    "t8-type-27b4a229": _MEDIAN_IS_A_FLOAT,
    "t8-type-3b19f2d4": _MEDIAN_IS_A_FLOAT,
    "t4-swap-e6e950cd": _PRINTED_ONLY,
    "t5-swap-1d0e092a": _PRINTED_ONLY,
    "t6-swap-6b03942d": _PRINTED_ONLY,
    "t8-off_by_one-9c3750a8": (
        "9 timed rounds instead of 10: the text says 'say 10 times', the median is what is graded"
    ),
    "t8-off_by_one-96b4e3b8": (
        "11 timed rounds instead of 10: the text says 'say 10 times', the median is what is graded"
    ),
    "t8-swap-9f7643e5": _SAME_SHAPES,
    "t8-swap-19e9ca3f": _SAME_SHAPES,
    "t8-swap-65967150": _SAME_SHAPES,
    "t8-swap-9e509120": _SAME_SHAPES,
    "t8-swap-55bad44a": "two empty lists bound in each other's place: the same values",
    "t8-timing-86119f65": _WARM_ALREADY,
    "t8-timing-7f87f2d0": _WARM_ALREADY,
    "t8-timing-70f7b99b": _WARM_ALREADY,
    "t8-timing-c6d79d4d": _WARM_ALREADY,
    "t6-whole_operand-ce049d07": (
        "x laid out whole (P()) inside the jitted function right before its shard_map, whose in_specs split it "
        "by rows again: XLA folds the two into nothing (the compiled program has no collective, as "
        "test_t6_no_communication finds), so each device still holds only its rows and the values and layouts "
        "are the same"
    ),
    "t6-whole_operand-c9a923f0": "W laid out whole right before the shard_map: it is replicated (P()) already",
    "t6-whole_operand-a6afd965": "b laid out whole right before the shard_map: it is replicated (P()) already",
}
