"""The processes a cell leaves behind in the sandbox (a fork bomb, a background writer): every process of
the run but the harness's own, found and stopped before anything else runs."""

from __future__ import annotations

import contextlib
import time

import psutil

MAX_ROUNDS = 100
SETTLE_SECONDS = 5.0
GONE = frozenset({psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD})
FROZEN = GONE | {psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP}  # cannot fork any more


def launcher_process(pid: int | None) -> psutil.Process | None:
    """The kernel's launcher; psutil remembers its start time, so a reused pid is not it."""
    try:
        return psutil.Process(pid) if pid and pid > 0 else None
    except psutil.Error:
        return None


def process_tree(launcher: psutil.Process | None) -> frozenset[int]:
    if launcher is None:
        return frozenset()
    try:
        return frozenset([launcher.pid, *(p.pid for p in launcher.children(recursive=True))])
    except psutil.Error:
        return frozenset()


def run_processes(launcher: psutil.Process | None, uid: int | None) -> list[psutil.Process]:
    """The launcher's descendants and, given the kernel's own ``uid`` (no pid namespace to keep orphans
    under the launcher), every process of that uid."""
    found: dict[int, psutil.Process] = {}
    with contextlib.suppress(psutil.Error):
        for process in launcher.children(recursive=True) if launcher is not None else ():
            found[process.pid] = process
    if uid is not None:
        for process in psutil.process_iter(["uids"]):
            uids = process.info.get("uids")
            if uids is not None and uid in (uids.real, uids.effective):
                found.setdefault(process.pid, process)
    return list(found.values())


def stop_leftover_processes(launcher: psutil.Process | None, keep: frozenset[int], uid: int | None = None) -> int:
    """Stop every process of the run not in ``keep``; how many were running (killed children of the kernel
    stay zombies until it reaps them). Suspends round after round until a scan made once all found are
    frozen finds nothing new (a process sent SIGSTOP may still fork for a moment), then kills them all."""
    stopped: dict[int, psutil.Process] = {}
    running = 0
    for _ in range(MAX_ROUNDS):
        new = [p for p in run_processes(launcher, uid) if p.pid not in keep and p.pid not in stopped]
        if not new:
            _kill(stopped.values())
            if not [p for p in run_processes(launcher, uid) if p.pid not in keep and p.pid not in stopped]:
                break
            continue
        for process in new:
            running += _suspend(process)
            stopped[process.pid] = process
        _wait_until(stopped.values(), FROZEN)
    else:
        _kill(stopped.values())
    _wait_until(stopped.values(), GONE)
    return running


def _state(process: psutil.Process) -> str:
    try:
        return process.status()
    except psutil.Error:  # gone
        return psutil.STATUS_DEAD


def _suspend(process: psutil.Process) -> int:
    if _state(process) in GONE:
        return 0
    try:
        process.suspend()
    except psutil.Error:
        return 0
    return 1


def _kill(processes) -> None:
    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.kill()


def _wait_until(processes, states: frozenset[str]) -> None:
    deadline = time.monotonic() + SETTLE_SECONDS
    pending = list(processes)
    while pending and time.monotonic() < deadline:
        pending = [process for process in pending if _state(process) not in states]
        if pending:
            time.sleep(0.01)
