"""The sandbox: the bounds a student's kernel runs within and cannot escape, declared once (``limits``).

``bubblewrap`` wraps the kernel's command (with the uid ``uid_lease`` lends), ``levels`` names how far it is
sandboxed, ``network_filter`` and ``landlock`` (with ``file_allowlist``) close what the uid level leaves
open, ``write_bound`` and ``write_watch`` bound what it writes, ``container_memory`` reads the memory limit
and OOM kills, ``leftovers`` stops what a cell left running, ``stale_roots`` removes what a killed grader
left, and ``system_tools`` finds the system's own commands."""

from typing import TYPE_CHECKING

from autograder.doors import lazy_exports

if TYPE_CHECKING:
    from autograder.run.sandbox.bubblewrap import (
        bwrap_command,
        sandbox_environment,
        sandbox_level,
        sandbox_problem,
        try_bubblewrap_in_background,
        uid_command,
    )
    from autograder.run.sandbox.container_memory import (
        CGROUP_ROOT,
        OUT_OF_MEMORY,
        megabytes,
        memory_limit_bytes,
        oom_first,
        oom_kills,
        out_of_memory_words,
    )
    from autograder.run.sandbox.file_allowlist import kernel_allowlist
    from autograder.run.sandbox.landlock import landlock_command
    from autograder.run.sandbox.leftovers import launcher_process, process_tree, run_processes, stop_leftover_processes
    from autograder.run.sandbox.levels import BUBBLEWRAP, LANDLOCK_LEVELS, LEVEL_DESCRIPTIONS, NO_SANDBOX
    from autograder.run.sandbox.limits import GIB, MIB, TRUSTED_LIMITS, Limits, ResourceLimits
    from autograder.run.sandbox.network_filter import filter_command, filter_problem
    from autograder.run.sandbox.stale_roots import claim, disown, sweep_once
    from autograder.run.sandbox.uid_lease import SandboxUnavailable, lease_uid, make_private
    from autograder.run.sandbox.write_bound import SCRATCH, bound_root, explain_write_error, unbind_root
    from autograder.run.sandbox.write_watch import SHARED_MEMORY, WriteWatch, remove_owned

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
