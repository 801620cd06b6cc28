"""The sandbox: the bounds a student's kernel runs within and cannot escape, each declared once with its default.
docs/how-grading-works.md's map says what each module does."""

from typing import TYPE_CHECKING

from autograder.doors import lazy_exports

if TYPE_CHECKING:
    from autograder.run.sandbox.bubblewrap import (
        bwrap_command,
        kernel_allowlist,
        sandbox_environment,
        sandbox_level,
        sandbox_problem,
        try_bubblewrap_in_background,
        uid_command,
    )
    from autograder.run.sandbox.confinement import confined_command, filter_problem
    from autograder.run.sandbox.leftovers import launcher_process, process_tree, run_processes, stop_leftover_processes
    from autograder.run.sandbox.limits import (
        BUBBLEWRAP,
        CGROUP_ROOT,
        GIB,
        LANDLOCK_LEVELS,
        LEVEL_DESCRIPTIONS,
        MIB,
        NO_SANDBOX,
        OUT_OF_MEMORY,
        TRUSTED_LIMITS,
        Limits,
        ResourceLimits,
        megabytes,
        memory_limit_bytes,
        oom_first,
        oom_kills,
        out_of_memory_words,
    )
    from autograder.run.sandbox.stale_roots import claim, disown, sweep_once
    from autograder.run.sandbox.uid_lease import SandboxUnavailable, lease_uid, make_private
    from autograder.run.sandbox.write_bound import (
        BOUND_WORDS,
        SCRATCH,
        SHARED_MEMORY,
        WriteWatch,
        bound_root,
        explain_write_error,
        remove_owned,
        remove_root,
    )

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
