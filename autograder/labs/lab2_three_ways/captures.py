"""Lab 2, "three ways to parallelize": what the harness reads from the kernel after each task."""

from autograder.facts import Call, Input, TaskCapture
from autograder.labs.lab2_three_ways.reference import FRESH_N_DATA, MESH_1D_EXPLICIT, N_FEATURES, N_OUT


def _explicit_layer_inputs(first_key: int) -> tuple[Input, Input, Input]:
    """Fresh x, W, b for t5's layer: the data split by rows over `x` of an Explicit 8-device mesh."""
    return (
        Input((FRESH_N_DATA, N_FEATURES), key=first_key, mesh=MESH_1D_EXPLICIT, spec=("x", None)),
        Input((N_FEATURES, N_OUT), key=first_key + 1, mesh=MESH_1D_EXPLICIT, spec=()),
        Input((N_OUT,), key=first_key + 2, mesh=MESH_1D_EXPLICIT, spec=()),
    )


CAPTURES = (
    TaskCapture("t1", names=("A_sharded",)),
    TaskCapture("t2", names=("A_xN", "A_Ny", "A_NN", "A_Nx")),
    TaskCapture("t3", names=("B", "C", "B_plus_C", "Bt_C", "B_plus_C_spec", "Bt_C_spec")),
    TaskCapture("t4", names=("x_dp", "W_dp", "b_dp", "out_dp")),
    TaskCapture(
        "t5",
        names=("out_explicit",),
        calls=(
            Call(
                "layer_explicit",
                "layer_explicit",
                mesh=MESH_1D_EXPLICIT,
                args=_explicit_layer_inputs(first_key=1),
            ),
            # Called again on new values of the very same types: a jitted function is not traced again, so
            # what it prints while traced does not come again; a plain function prints on every call.
            Call(
                "layer_explicit_again",
                "layer_explicit",
                mesh=MESH_1D_EXPLICIT,
                args=_explicit_layer_inputs(first_key=4),
            ),
        ),
    ),
    TaskCapture(
        "t6",
        names=("out_man",),
        calls=(
            # Uncommitted inputs, like the lab's own x, W, b: shard_map places them as its in_specs say.
            Call(
                "layer_man",
                "layer_man",
                hlo=True,
                args=(
                    Input((FRESH_N_DATA, N_FEATURES), key=1),
                    Input((N_FEATURES, N_OUT), key=2),
                    Input((N_OUT,), key=3),
                ),
            ),
        ),
    ),
    TaskCapture("t7", names=("x_sh", "y_sh", "params_replicated", "params_sharded")),
    TaskCapture("t8", names=("t_unsharded", "t_sharded", "speedup", "cpu_faster"), times_code=True),
)
