"""Starting a fresh kernel for one submission, with the harness's environment and devices, sandboxed,
and its lifecycle (``StartedKernel``): started with the startup code run, used once, closed."""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import nbformat
import psutil
import zmq
import zmq.asyncio
from jupyter_client import AsyncKernelManager
from jupyter_client.kernelspec import KernelSpec
from nbclient import NotebookClient

from autograder.run.container_memory import oom_first
from autograder.run.devices import DEVICE_COUNT, kernel_environment
from autograder.run.file_allowlist import kernel_allowlist
from autograder.run.kernel_housekeeping import LAB_PROBE_MODULE, TRUNCATION_MARK
from autograder.run.landlock import landlock_command
from autograder.run.leftovers import launcher_process, process_tree, stop_leftover_processes
from autograder.run.limits import Limits, ResourceLimits
from autograder.run.network_filter import filter_command, filter_problem
from autograder.run.sandbox import (
    BUBBLEWRAP,
    NO_SANDBOX,
    SandboxUnavailable,
    bwrap_command,
    lease_uid,
    make_private,
    sandbox_environment,
    sandbox_level,
    uid_command,
)
from autograder.run.sandbox_levels import LANDLOCK_LEVELS
from autograder.run.timed_turns import CellTurn

# What one message from the kernel may weigh, and how many may wait: a kernel that floods its output
# (or forges huge messages) is cut off by ZeroMQ instead of filling the grader's memory.
MAX_MESSAGE_BYTES = 16 * 2**20
MAX_QUEUED_MESSAGES = 32

# What is copied into the kernel, each as a standalone module under its name there: the kernel's
# housekeeping first (the probe finds it by its name), then the probe, then the lab's own probe
# (LAB_PROBE_MODULE, and the output's TRUNCATION_MARK, are the housekeeping's own).
HOUSEKEEPING_MODULE = "_autograder_housekeeping"  # as probe.HOUSEKEEPING_MODULE
HOUSEKEEPING_SOURCE = Path(__file__).resolve().parent / "kernel_housekeeping.py"
PROBE_MODULE = "_autograder_probe"
PROBE_SOURCE = Path(__file__).resolve().parents[1] / "facts" / "probe.py"
WARM_UP_ENDED = "warm-up-ended"  # the file the warm-up creates in the facts folder once it has ended
WARM_UP_WAIT = 60.0  # seconds a cell that measures time waits at most for the lab probe's warm-up
TIMEOUT_ENAME = "CellTimeoutError"


def startup_code(probe_dir: str, with_lab_probe: bool, output_limit: int, warm_up_ended: str | None = None) -> str:
    """Run before any student cell: load the housekeeping and the probes, cap the output, fix the device
    count for the kernel's life and start the lab probe's warm-up, which creates ``warm_up_ended`` once it
    has ended (see run/kernel_housekeeping.py).

    JAX's backend reads the device count once, when first used; using it here means that nothing a
    notebook later sets (``XLA_FLAGS``, ``jax_num_cpu_devices``) changes the devices.
    """
    modules = [HOUSEKEEPING_MODULE, PROBE_MODULE] + ([LAB_PROBE_MODULE] if with_lab_probe else [])
    return (
        "import sys as _ag_sys\n"
        f"_ag_sys.path.insert(0, {probe_dir!r})\n"
        + "".join(f"import {m}\n" for m in modules)
        + f"_ag_sys.path.remove({probe_dir!r})\n"
        f"{HOUSEKEEPING_MODULE}.cap_output({output_limit})\n"
        "import jax as _ag_jax\n"
        f"assert _ag_jax.device_count() == {DEVICE_COUNT}, _ag_jax.devices()\n"
        f"{HOUSEKEEPING_MODULE}.start_warm_up({warm_up_ended!r})\n"
        f"del _ag_sys, _ag_jax, {', '.join(modules)}\n"
    )


def wait_for_warm_up_code() -> str:
    return f"__import__({HOUSEKEEPING_MODULE!r}).wait_for_warm_up({WARM_UP_WAIT})\n"


def reap_children_code() -> str:
    return f"__import__({HOUSEKEEPING_MODULE!r}).reap_children()\n"


def probe_code(manifest_json: str) -> str:
    return f"__import__({PROBE_MODULE!r}).capture({manifest_json!r}, globals())\n"


class HarnessKernelManager(AsyncKernelManager):
    """An ipykernel started from this Python with the harness's environment, not a kernelspec's.

    With ``sandbox`` limits it runs at the strongest level that works here (see sandbox.py; ``level``),
    as root under a uid of its own (``uid``), behind the network filter where it works (network_filter.py)
    and, at the uid level, Landlock's allow-list where it works (landlock.py), and talks over ZeroMQ's ipc
    transport through socket files in its working directory: the host cannot reach ports inside the
    kernel's network namespace, and the filter leaves the kernel Unix sockets alone.
    """

    def __init__(
        self, workdir: Path, log_path: Path, sandbox: ResourceLimits | None, readonly: Sequence[Path] = (), **kwargs
    ):
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
            if self.level in LANDLOCK_LEVELS:  # the uid level's files: an allow-list (file_allowlist.py)
                argv = landlock_command(argv, *kernel_allowlist(workdir, readonly), directory=workdir)
            if filter_problem() is None:  # one code path: under bubblewrap too, where it closes nothing more
                argv = filter_command(argv, workdir)
            self.transport = "ipc"
            self.ip = str(workdir / ".kernel")
            self.connection_file = str(workdir / ".connection.json")
            if self.uid is not None:
                make_private(workdir, self.uid)
            if self.level == BUBBLEWRAP:
                argv = bwrap_command(
                    argv, workdir, list(readonly), sandbox_environment(kernel_environment()), sandbox, self.uid
                )
            else:  # its working directory is its home
                if self.uid is None:  # sandbox_level() offers the uid level to root alone
                    raise SandboxUnavailable("the uid level needs a uid of its own for the kernel: run as root")
                env = sandbox_environment(kernel_environment(), home=str(workdir))
                argv = uid_command(argv, env, sandbox, self.uid)
        argv = oom_first(argv)  # a notebook outgrowing the container loses its kernel, not the grader
        self._kernel_spec = KernelSpec(
            argv=argv, display_name="autograder", language="python", interrupt_mode="message"
        )
        # the process started to run the kernel (prlimit/bwrap, or the kernel itself)
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

    def note_harness_processes(self) -> None:
        """Remember the processes that make up the kernel before any student code runs: every other
        process of the run, found later, was started by the notebook."""
        self._launcher = launcher_process(getattr(getattr(self.provisioner, "process", None), "pid", None))
        self._harness_pids = process_tree(self._launcher)

    def stop_leftover_processes(self) -> int:
        """Stop what the notebook started that is still running (see leftovers.py); how many."""
        if not self._harness_pids:
            return 0
        return stop_leftover_processes(self._launcher, self._harness_pids, self.leftovers_uid)

    # jupyter_client types these two by its synchronous manager's; the async manager's are coroutines.
    async def restart_kernel(self, now: bool = False, newports: bool = False, **kw) -> None:  # type: ignore[override]
        """Refused for a sandboxed kernel, which is used once: a restart would run the network filter's
        launcher again from the kernel's own directory, where the kernel may have rewritten it."""
        if self.sandbox is not None:
            raise RuntimeError("a sandboxed kernel is not restarted: start a fresh one")
        await super().restart_kernel(now=now, newports=newports, **kw)

    async def shutdown_kernel(self, now: bool = False, restart: bool = False) -> None:  # type: ignore[override]
        """Shut the kernel down, stop whatever of the run still runs, then give its uid back."""
        try:
            await super().shutdown_kernel(now=now, restart=restart)
        finally:
            if not restart:
                stop_leftover_processes(self._launcher, frozenset(), self.leftovers_uid)
                if self.uid_lease is not None:
                    self.uid_lease.release()

    def log_tail(self, limit: int = 20_000) -> str:
        try:
            return self.log_path.read_bytes()[-limit:].decode("utf-8", "replace")
        except OSError:
            return ""


def cell_error(cell) -> str | None:
    """The error a cell ended with, as ``Name: message``, or None."""
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return f"{out.get('ename')}: {out.get('evalue')}"[:2000]
    return None


class _CappedClient(NotebookClient):
    """nbclient's client, keeping at most a fixed amount of output per cell and in total."""

    def __init__(self, nb, limits: Limits, **kwargs):
        super().__init__(nb, **kwargs)
        self.limits = limits
        self.total_bytes = 0
        self.cell_bytes = 0
        self.truncated = False

    def start_cell(self) -> None:
        self.cell_bytes, self.truncated = 0, False

    def _kernel_client(self):
        """The client of the started kernel; the output channel is watched only once there is one."""
        if self.kc is None:
            raise RuntimeError("the kernel's client is not started")
        return self.kc

    def watch_output_channel(self) -> None:
        """Watch the kernel's output channel for disconnections: ZeroMQ drops a message larger than
        the grader accepts (and the connection with it) without a word, so the output was cut there."""
        self._disconnections = self._kernel_client().iopub_channel.socket.get_monitor_socket(zmq.EVENT_DISCONNECTED)

    def stop_watching_output_channel(self) -> None:
        """Close the monitor socket: an open one keeps its ZeroMQ context from terminating, and the
        grader's process hangs at exit when the context is collected."""
        monitor = getattr(self, "_disconnections", None)
        if monitor is None:
            return
        self._disconnections = None
        try:
            self._kernel_client().iopub_channel.socket.disable_monitor()
        except Exception:
            pass
        monitor.close(linger=0)

    async def output_dropped(self) -> bool:
        """Did the output channel drop its connection since the last call (output lost on the way)?
        ZeroMQ does not connect again after such a drop, so the channel is connected anew here."""
        dropped = False
        monitor = getattr(self, "_disconnections", None)
        while monitor is not None and await monitor.poll(0):
            await monitor.recv_multipart()
            dropped = True
        if dropped:
            client = self._kernel_client()
            socket, url = client.iopub_channel.socket, client._make_url("iopub")
            socket.disconnect(url)
            socket.connect(url)
        return dropped

    def output(self, outs, msg, display_id, cell_index):
        size = len(str(msg.get("content", "")))
        if TRUNCATION_MARK in str(msg.get("content", {}).get("text", "")):
            self.truncated = True
        self.cell_bytes += size
        self.total_bytes += size
        if self.cell_bytes > self.limits.output_bytes_per_cell or self.total_bytes > self.limits.output_bytes_total:
            self.truncated = True
            return None
        return super().output(outs, msg, display_id, cell_index)


class StartedKernel:
    """A fresh sandboxed kernel in a root directory of its own, started and with the startup code run
    (housekeeping and probes loaded, JAX imported, the devices initialised): ready for one submission,
    and used once.

    It is made for one lab probe and one ``Limits``; ``fits`` says whether it may run a given plan."""

    def __init__(self, limits: Limits, lab_probe: Path | None):
        self.limits, self.with_lab_probe = limits, lab_probe is not None
        self.probe_digest = _digest(lab_probe)
        self.root = Path(tempfile.mkdtemp(prefix="autograder-"))
        try:
            os.chmod(self.root, 0o755)
            self.workdir = self.root / "work"  # the kernel's only writable directory
            self.probe_dir = self.root / "probe"
            self.facts_dir = self.workdir / ".facts"
            for d in (self.workdir, self.probe_dir, self.facts_dir):
                d.mkdir()
            shutil.copyfile(HOUSEKEEPING_SOURCE, self.probe_dir / f"{HOUSEKEEPING_MODULE}.py")
            shutil.copyfile(PROBE_SOURCE, self.probe_dir / f"{PROBE_MODULE}.py")
            if lab_probe is not None:
                shutil.copyfile(lab_probe, self.probe_dir / f"{LAB_PROBE_MODULE}.py")
            self.km = HarnessKernelManager(self.workdir, self.root / "kernel.log", limits.sandbox, [self.probe_dir])
        except BaseException:
            shutil.rmtree(self.root, ignore_errors=True)
            raise
        if self.km.uid is not None:
            os.chown(self.facts_dir, self.km.uid, self.km.uid)
        self.state = "new"  # then "starting", then "started" once the startup code has run
        self.failure: str | None = None  # why the startup code failed, if it did
        self.waited = 0.0  # how long the submission that claimed it waited for it, in seconds
        self.turn = CellTurn()  # its code waits while another grading's timed task holds the machine
        self.warm_up_hold: asyncio.Task | None = None  # the lab probe's warm-up, held like a cell until it ends
        self.start_ended = asyncio.Event()  # started, failed to, or closed
        self.nb = nbformat.v4.new_notebook()
        self.client = _CappedClient(
            self.nb,
            limits,
            km=self.km,
            timeout=int(limits.cell_timeout),
            allow_errors=True,
            interrupt_on_timeout=True,
            iopub_timeout=10,
            raise_on_iopub_timeout=False,
            startup_timeout=int(limits.startup_timeout),
            error_on_timeout={
                "ename": TIMEOUT_ENAME,
                "evalue": f"the cell ran longer than {limits.cell_timeout:g} s",
                "traceback": [],
            },
        )

    def fits(self, limits: Limits, lab_probe: Path | None) -> bool:
        """Was it made for these limits and this lab probe (compared by content)?"""
        return limits == self.limits and _digest(lab_probe) == self.probe_digest

    async def start(self) -> None:
        """Start the kernel and run the startup code; ``failure`` says why the device setup failed.
        Then remember the harness's processes: any other process found later was started by student code."""
        self.state = "starting"
        try:
            await asyncio.wait_for(self.km.start(), self.limits.startup_timeout)
            await self.client.async_start_new_kernel_client()
            self.client.watch_output_channel()
            ended = self.facts_dir / WARM_UP_ENDED if self.with_lab_probe else None
            startup = startup_code(
                str(self.probe_dir), self.with_lab_probe, self.limits.output_bytes_total, str(ended) if ended else None
            )
            cell = await self.run_code(startup, self.limits.startup_timeout, warm_up_ended=ended)
            self.failure = cell_error(cell)
            if self.failure is None:
                self.km.note_harness_processes()
            self.state = "started"
        finally:
            if self.failure is not None or self.state != "started":  # no warm-up runs
                self._let_warm_up_go()
            self.start_ended.set()

    async def ready(self, timeout: float = 15) -> bool:
        """Started without failing, still running, and answering: may it take a submission now?"""
        if self.state != "started" or self.failure is not None or self.client.kc is None:
            return False
        try:
            return await self.km.is_alive() and cell_error(await self.run_code("pass", timeout)) is None
        except Exception:  # it died, or does not answer
            return False

    async def run_code(self, source: str, timeout: float, warm_up_ended: Path | None = None) -> nbformat.NotebookNode:
        """Execute code as a cell; a kernel that does not answer within ``timeout`` is stopped. With
        ``warm_up_ended``, the warm-up the code starts is held like this cell until that file appears."""
        cell = nbformat.v4.new_code_cell(source)
        async with self.turn:  # the wait, if any, is before the timeout starts
            if warm_up_ended is not None:
                hold = self.turn.hold_beyond()  # taken inside the cell's hold: no timed task slips between
                if hold.held:
                    self.warm_up_hold = asyncio.get_running_loop().create_task(
                        hold.release_when(warm_up_ended.exists, WARM_UP_WAIT)
                    )
            self.nb.cells.append(cell)
            self.client.start_cell()
            await asyncio.wait_for(self.client.async_execute_cell(cell, len(self.nb.cells) - 1), timeout)
        return cell

    def _let_warm_up_go(self) -> None:
        if self.warm_up_hold is not None:
            self.warm_up_hold.cancel()  # release_when lets go of the hold as it ends

    async def close(self) -> None:
        """Shut the kernel down, stop whatever of it still runs, and remove its root directory."""
        self._let_warm_up_go()
        self.start_ended.set()
        try:
            await asyncio.wait_for(self.km.shutdown_kernel(now=True), 20)
        except Exception:
            pass
        if self.client.kc is not None:
            self.client.stop_watching_output_channel()
            self.client.kc.stop_channels()
        if os.environ.get("AUTOGRADER_KEEP_RUNS"):
            # to the process's own stderr: the graders, still checking in another thread, may hold
            # sys.stdout redirected into their log
            print(f"kept {self.root}", file=sys.__stderr__, flush=True)
        else:
            shutil.rmtree(self.root, ignore_errors=True)


def _digest(path: Path | None) -> str | None:
    return None if path is None else hashlib.sha256(path.read_bytes()).hexdigest()
