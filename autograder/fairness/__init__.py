"""The machine's fairness, so that a grade does not depend on the machine's load: timings taken while nothing
else runs on their cores, and the time other work took given back (docs/how-grading-works.md maps it)."""

from typing import TYPE_CHECKING

from autograder.doors import lazy_exports

if TYPE_CHECKING:
    from autograder.fairness.cell_turns import (
        CellTurn,
        checks_running,
        checks_waiting,
        grading_with,
        kernel_not_moved,
        measuring,
        not_running,
        pass_the_gate,
        student_code_running,
        wait_for_quiet,
    )
    from autograder.fairness.core_pinning import (
        PIN_VARIABLE,
        cores_to_pin,
        home_cores,
        pin_process,
        pinned_process_pool,
        process_cores,
        switched_off,
    )
    from autograder.fairness.others_load import (
        MOST_SHARE,
        CpuQuota,
        LoadClock,
        ThreadTimes,
        container_cpu_quota,
        min_sample_seconds,
        others_share,
        process_cpu_seconds,
        start_reading,
        stretch,
        thread_times,
        until_machine_quiet,
        wait_until_machine_quiet,
    )
    from autograder.fairness.timed_turns import WAITED_BEHIND, TimedTurn

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
