"""Kernels that fail to start, for real: each launch is wrapped in a shell that exits before the
kernel runs while a marker file exists — as a kernel killed at start on a busy machine would, which
jupyter_client reports as "Kernel died before replying to kernel_info"."""

from pathlib import Path

import autograder.run.kernels.manager as kernel_module

DIED_AT_START = "Kernel died before replying to kernel_info"

# $0 is the marker, $1 what to do with it ("once": remove it, so only this launch fails); while the
# marker exists, a launch exits before the kernel runs. Every launch leaves a line in $0.launches.
LAUNCH = (
    'echo launch >> "$0.launches"; if [ -e "$0" ]; then [ "$1" = once ] && rm -f "$0"; exit 3; fi; shift; exec "$@"'
)


def fail_kernel_launches(monkeypatch, folder: Path, how: str):
    """The next kernels' launches exit at once: the first only ("once"), all ("always") or none
    ("never"); returns a function that counts the launches so far."""
    marker = folder / "fail-at-start"
    if how != "never":
        marker.write_text("")
    wrap = kernel_module.oom_first
    monkeypatch.setattr(kernel_module, "oom_first", lambda argv: ["sh", "-c", LAUNCH, str(marker), how, *wrap(argv)])
    launches = marker.with_name(marker.name + ".launches")
    return lambda: len(launches.read_text().splitlines()) if launches.exists() else 0
