"""Starting a fresh kernel for one submission, with the harness's environment and devices."""

from __future__ import annotations

import sys
from pathlib import Path

from jupyter_client import AsyncKernelManager
from jupyter_client.kernelspec import KernelSpec

from autograder.devices import DEVICE_COUNT, kernel_environment

PROBE_MODULE = "_autograder_probe"
LAB_PROBE_MODULE = "_autograder_lab_probe"


def startup_code(probe_dir: str, with_lab_probe: bool) -> str:
    """Run before any student cell: load the probes and fix the device count for the kernel's life.

    JAX's backend reads the device count once, when first used; using it here means that nothing a
    notebook later sets (``XLA_FLAGS``, ``jax_num_cpu_devices``) changes the devices.
    """
    modules = [PROBE_MODULE] + ([LAB_PROBE_MODULE] if with_lab_probe else [])
    return (
        "import sys as _ag_sys\n"
        f"_ag_sys.path.insert(0, {probe_dir!r})\n"
        + "".join(f"import {m}\n" for m in modules)
        + f"_ag_sys.path.remove({probe_dir!r})\n"
        "import jax as _ag_jax\n"
        f"assert _ag_jax.device_count() == {DEVICE_COUNT}, _ag_jax.devices()\n"
        f"del _ag_sys, _ag_jax, {', '.join(modules)}\n"
    )


def probe_code(manifest_json: str) -> str:
    return f"__import__({PROBE_MODULE!r}).capture({manifest_json!r}, globals())\n"


class HarnessKernelManager(AsyncKernelManager):
    """An ipykernel started from this Python with the harness's environment, not a kernelspec's."""

    def __init__(self, workdir: Path, log_path: Path, **kwargs):
        super().__init__(kernel_name="python3", **kwargs)
        self.workdir = workdir
        self.log_path = log_path
        self._kernel_spec = KernelSpec(
            argv=self.kernel_argv(), display_name="autograder", language="python",
            interrupt_mode="message",
        )

    def kernel_argv(self) -> list[str]:
        return [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]

    async def start(self) -> None:
        with open(self.log_path, "ab") as log:
            await self.start_kernel(env=kernel_environment(), cwd=str(self.workdir), stdout=log, stderr=log)

    def log_tail(self, limit: int = 20_000) -> str:
        try:
            return self.log_path.read_bytes()[-limit:].decode("utf-8", "replace")
        except OSError:
            return ""
