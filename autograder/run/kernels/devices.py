"""The device setup the harness owns: 8 virtual CPU devices, for the kernel and for the grader."""

import os
import sys

from autograder.caches import enable_compilation_cache
from autograder.run.kernels.malloc import KERNEL_MALLOC_ENV

DEVICE_COUNT = 8

# PJRT_NPROC at twice the device count keeps XLA:CPU collectives from deadlocking on 2 cores.
HARNESS_ENV = {
    "XLA_FLAGS": f"--xla_force_host_platform_device_count={DEVICE_COUNT}",
    "JAX_PLATFORMS": "cpu",
    "PJRT_NPROC": str(2 * DEVICE_COUNT),
}

# what a notebook's author could set to change devices, threads or JAX: never inherited by a kernel
INHERITED_PREFIXES_DROPPED = ("XLA_", "JAX_", "PJRT_", "TF_", "OMP_", "MKL_", "OPENBLAS_", "CUDA_", "TPU_", "MALLOC_")


class DeviceSetupError(RuntimeError):
    """JAX was initialised in this process before the harness could set up its devices."""


def kernel_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    given = os.environ if base is None else base
    kept = {k: v for k, v in given.items() if k != "JPY_PARENT_PID" and not k.startswith(INHERITED_PREFIXES_DROPPED)}
    return {**kept, **HARNESS_ENV, **KERNEL_MALLOC_ENV, "PYTHONHASHSEED": "0"}


def configure_grader_process() -> None:
    """The harness's devices and compilation cache for this process, before JAX is first used."""
    os.environ.update(HARNESS_ENV)
    enable_compilation_cache()
    if "jax" in sys.modules:
        import jax

        if jax.device_count() != DEVICE_COUNT:
            raise DeviceSetupError(
                f"JAX was initialised with {jax.device_count()} devices before the grader could set "
                f"{DEVICE_COUNT}; start the grader in a fresh process"
            )
