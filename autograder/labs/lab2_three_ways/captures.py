"""Lab 2, "three ways to parallelize": what the harness reads from the kernel after each task."""

from autograder.facts import Call, Input, TaskCapture
from autograder.labs.lab2_three_ways.reference import FRESH_N_DATA, MESH_1D_EXPLICIT, N_FEATURES, N_OUT

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
                args=(
                    Input((FRESH_N_DATA, N_FEATURES), key=1, mesh=MESH_1D_EXPLICIT, spec=("x", None)),
                    Input((N_FEATURES, N_OUT), key=2, mesh=MESH_1D_EXPLICIT, spec=()),
                    Input((N_OUT,), key=3, mesh=MESH_1D_EXPLICIT, spec=()),
                ),
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
    TaskCapture("t7", names=("x_sh", "y_sh", "params_sharded")),
    TaskCapture("t8", names=("t_unsharded", "t_sharded", "speedup", "cpu_faster"), times_code=True),
)
