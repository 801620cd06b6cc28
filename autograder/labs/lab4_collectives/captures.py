"""Lab 4, communication inside shard_map: what the harness reads from the kernel after each task."""

from autograder.facts import Call, Input, TaskCapture
from autograder.labs.lab4_collectives import reference as ref

CAPTURES = (
    TaskCapture(
        "t1",
        names=("gathered",),
        calls=(
            # placed as the shard_map's in_specs say: on a mesh with Explicit axes an unsharded input is refused
            Call("ring_gather", "ring_gather", args=(Input((ref.FRESH_N,), mesh=ref.MESH, spec=("x",)),)),
        ),
    ),
    TaskCapture(
        "t2",
        calls=(
            Call(
                "summed_everywhere", "summed_everywhere", args=(Input(ref.FRESH_ROWS, mesh=ref.MESH, spec=("x", None)),)
            ),
            Call(
                "summed_scattered", "summed_scattered", args=(Input(ref.FRESH_ROWS, mesh=ref.MESH, spec=("x", None)),)
            ),
        ),
    ),
    TaskCapture("t3", names=("psum_block_shape", "scatter_block_shape")),
    TaskCapture(
        "t4",
        calls=(
            Call(
                "collective_matmul",
                "collective_matmul",
                args=(
                    Input(ref.FRESH_LHS, key=1, mesh=ref.MESH, spec=("x", None)),
                    Input(ref.FRESH_RHS, key=2, mesh=ref.MESH, spec=("x", None)),
                ),
            ),
        ),
    ),
    TaskCapture("t5", names=("t_collective", "t_gathered", "speedup", "collective_faster"), times_code=True),
)
