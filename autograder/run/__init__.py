"""The run: a submission's cells executed in a sandboxed kernel, task by task, with its facts taken.

``plan`` splits the notebook into tasks (leaving out the student's self-check cells, which ``assign`` adds and
``self_check_cells`` recognises); ``sandbox``, ``kernel_manager`` and ``devices`` start a kernel the student's code
cannot escape, on the grader's devices (``kernel_lifecycle`` holds its lifecycle, ``kernel_client`` talks to it,
``kernel_code`` is what the harness runs in it, and ``kernel_start`` starts a fresh kernel when one fails to start,
a fault of the harness's; the kernel package, autograder/kernel, is all it copies into the kernel), within the
``limits`` declared once for every command and context; ``run_request`` names what one run is asked to do, and an
``Executor`` (``execute``, or the ``kernel_pool``) runs its cells and has the kernel recorder write each task's
facts (``live_execution`` hands each task over as soon as it is taken; ``run_status`` names how a run and each cell
ended, ``execution`` what it produced); ``leftovers`` stops what a cell left running; its kernels take the turns the
machine's fairness (autograder/fairness) gives a task that times code; ``kernel_malloc`` has the kernel give memory
back and both sides time with large blocks kept, ``kernel_pool`` starts the next kernel ahead, ``compiled_programs``
keeps what a run of the lab's solution compiled for the kernels of the course's own notebooks (never a student's),
``phase_clock`` counts where a grading's time goes, and ``stale_roots`` removes the folders a killed grader left.
Grading reads what the run hands on: each task's facts.
"""

from typing import TYPE_CHECKING

from autograder.doors import lazy_exports

if TYPE_CHECKING:
    from autograder.run.compiled_programs import (
        COMPILED_PROGRAMS_VARIABLE,
        CompiledPrograms,
        compiled_programs_folder,
    )
    from autograder.run.container_memory import CGROUP_ROOT, OUT_OF_MEMORY, megabytes, memory_limit_bytes
    from autograder.run.devices import DEVICE_COUNT, HARNESS_ENV, configure_grader_process, kernel_environment
    from autograder.run.execute import execute_plan
    from autograder.run.execution import CellOutcome, Execution, Executor, timed_cells_share
    from autograder.run.kernel_malloc import KERNEL_MALLOC_ENV, under_timing_malloc
    from autograder.run.kernel_pool import worker_pool
    from autograder.run.limits import GIB, TRUSTED_LIMITS, Limits, ResourceLimits
    from autograder.run.live_execution import LiveExecution
    from autograder.run.phase_clock import (
        CAPTURE,
        CELLS,
        CHECKS,
        GRADER_PHASES,
        KERNEL_START,
        MEASURE,
        PHASES,
        TURN_WAIT,
        PhaseClock,
        rounded_phases,
    )
    from autograder.run.plan import RunCell, build_plan, has_code
    from autograder.run.run_request import KernelSpec, RunRequest
    from autograder.run.run_status import CellStatus, RunStatus
    from autograder.run.sandbox import (
        NO_SANDBOX,
        SandboxUnavailable,
        sandbox_level,
        sandbox_problem,
        try_bubblewrap_in_background,
    )
    from autograder.run.sandbox_levels import LEVEL_DESCRIPTIONS
    from autograder.run.self_check_cells import SELF_CHECK_MODULE
    from autograder.run.stale_roots import claim

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
