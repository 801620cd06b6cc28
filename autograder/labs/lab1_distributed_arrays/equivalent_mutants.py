"""Mutants of lab 1's solution that no check should fail, each with why (``autograder mutants``)."""

_TWO_DEVICES = (
    "the two copies bound in each other's names: x is still committed to device 0 and a copy to device 1, and "
    "adding them raises the error the task asks for, naming device 1 first"
)
_MEDIAN = (
    "t8 reports the median of the rounds: one round more or less, or a first slow (compiling) round "
    "without its warm-up call, leaves the median where it was (and grad_loss on the data-parallel "
    "arrays is already compiled by t6's training)"
)

_MEDIAN_IS_A_FLOAT = (
    "float(...) left out around np.median(...): np.median returns a numpy.float64, which is a Python "
    "float (a subclass of float), so the time is the float the text asks for either way"
)

_TIMES_SWAPPED = (
    "t_single and t_sharded bound in each other's place: on 8 CPU devices sharing 2 cores the two times are "
    "of the same order, so each swapped time can fall inside the time check's factor of "
    "4 of the other and the inverted speedup inside the speedup check's margin or not depending on the "
    "machine's load: killed on a quiet machine, kept under load 13"
)
EQUIVALENT_MUTANTS = {
    "t8-swap-517d15ec": _TIMES_SWAPPED,
    "t8-type-ebe4a940": _MEDIAN_IS_A_FLOAT,
    "t8-type-23d78293": _MEDIAN_IS_A_FLOAT,
    "t4-swap-f937d6d6": _TWO_DEVICES,
    "t8-off_by_one-dced85ba": _MEDIAN,
    "t8-off_by_one-1aac280b": _MEDIAN,
    "t8-timing-2cbf877d": _MEDIAN,
    "t8-timing-2cf4299a": _MEDIAN,
    "t8-swap-343bea25": "two empty lists bound in each other's place: the same values",
}
