"""Lab 1's own probe functions. This file runs INSIDE the student's kernel, as a standalone module.

It holds no answers and no checks: it reads JAX's configuration as task 9 leaves it, which no name the
student binds can show (the task asks to set ``jax_threefry_partitionable`` back to True afterwards).
"""

import jax

_config = jax.config


def threefry_flag(namespace, seed, params):
    """The value of ``jax_threefry_partitionable`` right after the task's cells."""
    return {"jax_threefry_partitionable": _config.jax_threefry_partitionable}
