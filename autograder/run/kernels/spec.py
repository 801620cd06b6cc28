"""What a kernel is made for, as one named object: a pool's spare kernel serves a run whose spec it fits,
and a kernel decides, where the limits leave it open, whether it saves memory on the machine that runs it
(``malloc.memory_decided``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograder.run.kernels.compiled_programs import CompiledPrograms
from autograder.run.kernels.malloc import memory_decided
from autograder.run.sandbox import Limits


@dataclass(frozen=True)
class KernelSpec:
    """What a kernel is made for: the ``limits`` it runs within, the lab's probe copied into it
    (``lab_probe``, compared by content), and its use of the lab's ``compiled`` programs. A pool's spare
    kernel serves a request whose spec it fits (lifecycle.py)."""

    limits: Limits
    lab_probe: Path | None = None
    compiled: CompiledPrograms | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "limits", memory_decided(self.limits))
