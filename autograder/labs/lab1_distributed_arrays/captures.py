"""Lab 1, "distributed arrays and automatic parallelization": what the harness reads from the kernel after each task."""

from autograder.facts import Call, Input, Probe, TaskCapture
from autograder.labs.lab1_distributed_arrays.reference import FRESH_SHAPE, MESH

# The grader's input of task 5 is laid out as the lab's own input of f: rows over 'a', columns over 'b'; the
# text asks f to take an array in any layout on mesh, so it is called on another layout too.
FRESH_INPUT = Input(FRESH_SHAPE, key=1, mesh=MESH, spec=("a", "b"))
OTHER_LAYOUT_INPUT = Input(FRESH_SHAPE, key=2, mesh=MESH, spec=("b", None))

CAPTURES = (
    TaskCapture("t1", names=("y",)),
    TaskCapture("t2", names=("y_ba", "y_a_rep", "y_cols_b", "y_rows_ab")),
    TaskCapture("t3", names=("y_lhs", "y_rhs", "w", "w_layout_guess")),
    TaskCapture("t4", names=("err_msg",)),
    TaskCapture(
        "t5",
        calls=(
            Call("f", "f", hlo=True, args=(FRESH_INPUT,)),
            Call("f_replicated", "f_replicated", hlo=True, args=(FRESH_INPUT,)),
            Call("f_other_layout", "f", args=(OTHER_LAYOUT_INPUT,)),
            Call("f_replicated_other_layout", "f_replicated", args=(OTHER_LAYOUT_INPUT,)),
        ),
    ),
    TaskCapture("t6", names=("batch_dp", "params_dp", "loss_dp", "params", "batch")),
    TaskCapture("t7", names=("batch_tp", "params_placed", "params_tp", "loss_tp")),
    TaskCapture("t8", names=("params_single", "batch_single", "t_single", "t_sharded", "speedup"), times_code=True),
    TaskCapture(
        "t9",
        names=("communicating_stable", "communicating_partitionable"),
        probes=(Probe("flag", "threefry_flag"),),  # the flag the task sets back to True
    ),
)
