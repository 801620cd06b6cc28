"""The processes a cell leaves behind in the sandbox: found and stopped before anything else runs.

A cell may fork children that outlive it: a fork bomb that holds the kernel's process limit, so that
the kernel recorder cannot start a thread, or a background writer that tampers with the working directory
after its cell has ended. After every cell the harness stops every process of the run other than
the harness's own (the sandbox's launcher and init, and the kernel): every descendant of the
launcher (inside bubblewrap's pid namespace an orphan is re-parented to the sandbox's init, so it
stays a descendant) and, when the kernel runs under a uid of its own, every process of that uid.

Processes are first suspended, round after round, each round waiting until every process found is
frozen (a stopped process cannot fork), until a scan finds nothing new; then they are killed, and a
last scan makes sure nothing appeared meanwhile. A fork bomb cannot outrun the sweep.
"""

from __future__ import annotations

import time

import psutil

MAX_ROUNDS = 100
SETTLE_SECONDS = 5.0
GONE = frozenset({psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD})
FROZEN = GONE | {psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP}  # cannot fork any more


def launcher_process(pid: int | None) -> psutil.Process | None:
    """The process that launched the kernel, remembered with its start time (a reused pid is not it)."""
    try:
        return psutil.Process(pid) if pid and pid > 0 else None
    except psutil.Error:
        return None


def process_tree(launcher: psutil.Process | None) -> frozenset[int]:
    """The launcher and all its descendants now (empty when it is gone)."""
    if launcher is None:
        return frozenset()
    try:
        return frozenset([launcher.pid, *(p.pid for p in launcher.children(recursive=True))])
    except psutil.Error:
        return frozenset()


def run_processes(launcher: psutil.Process | None, uid: int | None) -> list[psutil.Process]:
    """Every process of the run but the launcher: its descendants, and, given the kernel's own ``uid`` (a
    sandbox without a pid namespace), every process of that uid, wherever it was reparented."""
    found: dict[int, psutil.Process] = {}
    try:
        for process in launcher.children(recursive=True) if launcher is not None else ():
            found[process.pid] = process
    except psutil.Error:
        pass
    if uid is not None:
        for process in psutil.process_iter(["uids"]):
            uids = process.info.get("uids")
            if uids is not None and uid in (uids.real, uids.effective):
                found.setdefault(process.pid, process)
    return list(found.values())


def stop_leftover_processes(launcher: psutil.Process | None, keep: frozenset[int], uid: int | None = None) -> int:
    """Stop every process under ``launcher`` (and of ``uid``, a uid of the run's own) not in ``keep``;
    return how many were running. Killed children of the kernel stay zombies until it reaps them.

    Sweeps until a scan made once every process found is frozen finds nothing new: a process sent
    SIGSTOP may still run for a moment and fork, so a scan made before it has stopped proves nothing."""
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


def _suspend(process: psutil.Process) -> int:
    """SIGSTOP ``process``; 1 if it was running (not already a zombie), else 0."""
    try:
        if process.status() == psutil.STATUS_ZOMBIE:
            return 0
        process.suspend()
    except psutil.Error:
        return 0
    return 1


def _kill(processes) -> None:
    for process in processes:
        try:
            process.kill()
        except psutil.Error:
            pass


def _wait_until(processes, states: frozenset[str]) -> None:
    """Wait (briefly) until each process is in one of ``states`` or gone."""
    deadline = time.monotonic() + SETTLE_SECONDS
    pending = list(processes)
    while pending and time.monotonic() < deadline:
        still = []
        for process in pending:
            try:
                if process.status() not in states:
                    still.append(process)
            except psutil.Error:
                pass
        pending = still
        if pending:
            time.sleep(0.01)
