"""The kernel's process: ipykernel wrapped in the sandbox, with bounded ZeroMQ messages, shut down with
whatever the notebook left running."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

import psutil
import zmq
import zmq.asyncio
from jupyter_client import AsyncKernelManager
from jupyter_client.kernelspec import KernelSpec

from autograder.fairness import ThreadTimes, process_cpu_seconds, thread_times
from autograder.run.kernels.devices import kernel_environment
from autograder.run.sandbox import (
    BUBBLEWRAP,
    LANDLOCK_LEVELS,
    NO_SANDBOX,
    SHARED_MEMORY,
    ResourceLimits,
    SandboxUnavailable,
    bwrap_command,
    confined_command,
    filter_problem,
    kernel_allowlist,
    launcher_process,
    lease_uid,
    make_private,
    oom_first,
    process_tree,
    remove_owned,
    run_processes,
    sandbox_environment,
    sandbox_level,
    stop_leftover_processes,
    uid_command,
)

# What one message from the kernel may weigh, and how many may wait: a kernel that floods its output
# (or forges huge messages) is cut off by ZeroMQ instead of filling the grader's memory.
MAX_MESSAGE_BYTES = 16 * 2**20
MAX_QUEUED_MESSAGES = 32


class HarnessKernelManager(AsyncKernelManager):
    """Over ZeroMQ's ipc transport when sandboxed: the host cannot reach ports in the kernel's network
    namespace, and the filter leaves it Unix sockets."""

    def __init__(
        self,
        workdir: Path,
        log_path: Path,
        sandbox: ResourceLimits | None,
        readonly: Sequence[Path] = (),
        scratch: Path | None = None,
        **kwargs,
    ):
        """``scratch``: where bubblewrap's ``/tmp`` and ``/dev/shm`` are kept, in the bounded root."""
        super().__init__(kernel_name="python3", **kwargs)
        self.workdir, self.log_path, self.sandbox = workdir, log_path, sandbox
        self.level = sandbox_level() if sandbox is not None else NO_SANDBOX
        self.uid_lease = lease_uid() if sandbox is not None else None
        self.uid = self.uid_lease.uid if self.uid_lease else None
        # IPython's history lives in memory: its database thread is restarted at the first cell after
        # a fork, and a fork bomb's killed children (zombies until reaped) would keep it from starting,
        # so the cell that reaps them could not run.
        argv = [
            sys.executable,
            "-m",
            "ipykernel_launcher",
            "-f",
            "{connection_file}",
            "--HistoryManager.hist_file=:memory:",
        ]
        if sandbox is not None:
            # the uid level's files: an allow-list (bubblewrap.py); the filter under bubblewrap too, where it
            # closes nothing more: one code path
            allowlist = kernel_allowlist(workdir, readonly) if self.level in LANDLOCK_LEVELS else None
            if allowlist is not None or filter_problem() is None:
                argv = confined_command(argv, workdir, filter_problem() is None, allowlist)
            self.transport = "ipc"
            self.ip = str(workdir / ".kernel")
            self.connection_file = str(workdir / ".connection.json")
            if self.uid is not None:
                make_private(workdir, self.uid)
            if self.level == BUBBLEWRAP:
                shared = None if scratch is None else _scratch_folders(scratch, self.uid)
                env = sandbox_environment(kernel_environment())
                argv = bwrap_command(argv, workdir, list(readonly), env, sandbox, self.uid, shared)
            else:  # its working directory is its home
                if self.uid is None:  # sandbox_level() offers the uid level to root alone
                    raise SandboxUnavailable("the uid level needs a uid of its own for the kernel: run as root")
                env = sandbox_environment(kernel_environment(), home=str(workdir))
                argv = uid_command(argv, env, sandbox, self.uid)
        argv = oom_first(argv)  # a notebook outgrowing the container loses its kernel, not the grader
        self._kernel_spec = KernelSpec(
            argv=argv, display_name="autograder", language="python", interrupt_mode="message"
        )
        self._launcher: psutil.Process | None = None
        # Inside bubblewrap's pid namespace every process of the run descends from the launcher; a
        # sandbox without one must name the kernel's own uid here, so that orphans are found by it.
        self.leftovers_uid: int | None = self.uid if self.level not in (BUBBLEWRAP, NO_SANDBOX) else None
        self._harness_pids: frozenset[int] = frozenset()  # the launcher, the sandbox's init, the kernel

    def client(self, **kwargs):
        context = zmq.asyncio.Context()
        context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
        context.setsockopt(zmq.RCVHWM, MAX_QUEUED_MESSAGES)
        return super().client(context=context, **kwargs)

    def write_connection_file(self, **kwargs):
        super().write_connection_file(**kwargs)
        if self.uid is not None:  # the kernel's own user must read it
            os.chown(self.connection_file, self.uid, self.uid)

    async def start(self) -> None:
        env = kernel_environment() if self.sandbox is None else {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        with open(os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab") as log:
            await self.start_kernel(env=env, cwd=str(self.workdir), stdout=log, stderr=log)
        self._launcher = launcher_process(getattr(getattr(self.provisioner, "process", None), "pid", None))

    def note_harness_processes(self) -> None:
        self._harness_pids = process_tree(self._launcher)

    def _processes(self) -> list[psutil.Process]:
        """The launcher and the run's processes, reparented ones too: what the notebook sets loose is its load."""
        launcher = self._launcher
        return [] if launcher is None else [launcher, *run_processes(launcher, self.leftovers_uid)]

    def process_ids(self) -> list[int]:
        """The processes ``cpu_seconds`` reads, to be moved between cores (cell_turns.py)."""
        return sorted({process.pid for process in self._processes()})

    def cpu_seconds(self) -> float | None:
        return process_cpu_seconds(self._launcher, self._processes())

    def thread_times(self) -> ThreadTimes | None:
        return thread_times(self._processes())  # None where there are none

    def stop_all_processes(self) -> int:
        """The kernel too: it wrote past its bound (write_bound.py)."""
        return stop_leftover_processes(self._launcher, frozenset(), self.leftovers_uid)

    def stop_leftover_processes(self) -> int:
        if not self._harness_pids:
            return 0
        return stop_leftover_processes(self._launcher, self._harness_pids, self.leftovers_uid)

    # jupyter_client types these two by its synchronous manager's; the async manager's are coroutines.
    async def restart_kernel(self, now: bool = False, newports: bool = False, **kw) -> None:  # type: ignore[override]
        """Refused when sandboxed: it would run the filter's launcher again from where the kernel may have
        rewritten it."""
        if self.sandbox is not None:
            raise RuntimeError("a sandboxed kernel is not restarted: start a fresh one")
        await super().restart_kernel(now=now, newports=newports, **kw)

    async def shutdown_kernel(self, now: bool = False, restart: bool = False) -> None:  # type: ignore[override]
        try:
            await super().shutdown_kernel(now=now, restart=restart)
        finally:
            if not restart:
                self.stop_all_processes()
                if self.leftovers_uid is not None:  # what it left in the machine's /dev/shm, before the
                    remove_owned(SHARED_MEMORY, self.leftovers_uid)  # uid serves another kernel
                if self.uid_lease is not None:
                    self.uid_lease.release()

    def log_tail(self, limit: int = 20_000) -> str:
        try:
            return self.log_path.read_bytes()[-limit:].decode("utf-8", "replace")
        except OSError:
            return ""


def _scratch_folders(scratch: Path, uid: int | None) -> tuple[Path, Path]:
    folders = (scratch / "tmp", scratch / "shm")
    for folder in folders:
        folder.mkdir(parents=True)
        if uid is not None:
            make_private(folder, uid)
        else:
            folder.chmod(0o700)
    return folders
