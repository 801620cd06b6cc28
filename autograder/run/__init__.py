"""The run: a submission's cells executed in a sandboxed kernel, task by task, with its facts taken.
docs/how-grading-works.md's map says what each module does."""

from typing import TYPE_CHECKING

from autograder.doors import lazy_exports

if TYPE_CHECKING:
    from autograder.run.execute import Executor, RunRequest, execute_plan
    from autograder.run.execution import CellOutcome, CellStatus, Execution, LiveExecution, RunStatus, timed_cells_share
    from autograder.run.kernel_pool import worker_pool
    from autograder.run.kernels import (
        COMPILED_PROGRAMS_VARIABLE,
        DEVICE_COUNT,
        HARNESS_ENV,
        KERNEL_MALLOC_ENV,
        CompiledPrograms,
        KernelSpec,
        compiled_programs_folder,
        configure_grader_process,
        kernel_environment,
        timing_as_kernel,
        under_timing_malloc,
    )
    from autograder.run.phase_clock import CHECKS, GRADER_PHASES, MEASURE, TURN_WAIT, rounded_phases
    from autograder.run.plan import SELF_CHECK_MODULE, RunCell, build_plan, has_code
    from autograder.run.sandbox import (
        CGROUP_ROOT,
        GIB,
        LEVEL_DESCRIPTIONS,
        NO_SANDBOX,
        OUT_OF_MEMORY,
        TRUSTED_LIMITS,
        Limits,
        ResourceLimits,
        SandboxUnavailable,
        claim,
        megabytes,
        memory_limit_bytes,
        sandbox_level,
        sandbox_problem,
        try_bubblewrap_in_background,
    )

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
