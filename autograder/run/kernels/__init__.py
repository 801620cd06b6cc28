"""The kernels a run uses: started in the sandbox on the grader's devices, talked to, and stopped.
docs/how-grading-works.md's map says what each module does."""

from typing import TYPE_CHECKING

from autograder.doors import lazy_exports

if TYPE_CHECKING:
    from autograder.run.kernels.client import TIMEOUT_ENAME, cell_error
    from autograder.run.kernels.compiled_programs import (
        COMPILED_PROGRAMS_VARIABLE,
        CompiledPrograms,
        compiled_programs_folder,
    )
    from autograder.run.kernels.devices import DEVICE_COUNT, HARNESS_ENV, configure_grader_process, kernel_environment
    from autograder.run.kernels.harness_code import (
        AFTER_TIMED_TASK_CODE,
        REAP_CHILDREN_CODE,
        WARM_UP_WAIT,
        before_timed_cell_code,
        recorder_code,
    )
    from autograder.run.kernels.lifecycle import KernelSpec, StartedKernel, start_kernel
    from autograder.run.kernels.malloc import KERNEL_MALLOC_ENV, memory_decided, timing_as_kernel, under_timing_malloc

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
