"""The suite's kernels end with the test module that started them.

A kernel left running holds 0.5–1 GB until the session ends and slows every later test on a small
machine (nbclient, given a kernel manager, does not shut its kernel down: ``execute(cleanup_kc=True)``
does). ``kernels_end_with_their_module``, autouse in tests/conftest.py, notes the kernels running under
pytest when a module starts; when it ends, a kernel started since that is still running after a grace
period fails the module's last test, naming it, and is stopped. A kernel is a Python process under
pytest (at any depth) whose command line names ipykernel; kernels a module's processes orphaned are out
of its sight.
"""

from __future__ import annotations

import psutil
import pytest

GRACE_SECONDS = 10.0  # a kernel shut down as its module ends may take this long to exit


def running_kernels() -> list[psutil.Process]:
    """The kernels running under this process now."""
    found = []
    for process in psutil.Process().children(recursive=True):
        try:
            if process.name().startswith("python") and any("ipykernel" in arg for arg in process.cmdline()):
                if process.status() != psutil.STATUS_ZOMBIE:
                    found.append(process)
        except psutil.Error:  # it ended meanwhile
            continue
    return found


def kernels_left(before: set[psutil.Process], grace: float) -> list[psutil.Process]:
    """The kernels not in ``before`` still running once ``grace`` seconds have passed."""
    new = [p for p in running_kernels() if p not in before]
    _, alive = psutil.wait_procs(new, timeout=grace) if new else ((), [])
    return [p for p in alive if _running(p)]


def _running(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _described(process: psutil.Process) -> str:
    try:
        return f"{process.pid} ({' '.join(process.cmdline())[:200]}, {process.memory_info().rss / 2**20:.0f} MB)"
    except psutil.Error:
        return str(process.pid)


@pytest.fixture(scope="module", autouse=True)
def kernels_end_with_their_module(request):
    """Fails the module's last test when a kernel it started outlives it (and stops that kernel)."""
    before = set(running_kernels())
    yield
    left = kernels_left(before, GRACE_SECONDS)
    if not left:
        return
    described = [_described(p) for p in left]
    for process in left:
        try:
            process.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(left, timeout=5)
    pytest.fail(
        f"{request.module.__name__} left {len(left)} kernel process(es) running (now stopped): " + "; ".join(described),
        pytrace=False,
    )
