"""What the harness puts into a grading kernel: the kernel package and the lab's probe, and nothing else
of the harness (the graders, references and hidden checks stay outside the kernel's view)."""

from __future__ import annotations

from pathlib import Path

import autograder
from autograder.kernel import LAB_PROBE_MODULE, SOURCE
from autograder.run.kernels.harness_code import KERNEL_PACKAGE, copy_kernel_package, startup_code


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def test_only_the_kernel_package_and_the_labs_probe_are_copied_into_the_kernel(tmp_path):
    probe = Path(autograder.__file__).parent / "labs" / "lab3_fsdp_tp" / "kernel_probe.py"
    copy_kernel_package(tmp_path, probe)
    package = {p.name for p in Path(SOURCE).glob("*.py")}
    assert _files(tmp_path) == {f"{KERNEL_PACKAGE}/{name}" for name in package} | {f"{LAB_PROBE_MODULE}.py"}
    assert {"recorder.py", "timing_record.py", "housekeeping.py"} <= package
    for name in package:  # copies, byte for byte, of the package's own files
        assert (tmp_path / KERNEL_PACKAGE / name).read_bytes() == (Path(SOURCE) / name).read_bytes()


def test_the_startup_code_imports_the_copied_package_and_leaves_no_name_behind():
    code = startup_code("/modules", with_lab_probe=True, output_limit=1000)
    imports = [line for line in code.splitlines() if line.startswith("import ")]
    assert imports == [
        "import sys as _ag_sys",
        f"import {KERNEL_PACKAGE}.housekeeping",
        f"import {KERNEL_PACKAGE}.timing_record",
        f"import {KERNEL_PACKAGE}.recorder",
        f"import {LAB_PROBE_MODULE}",
        "import jax as _ag_jax",
    ]
    assert "autograder" not in code.replace(KERNEL_PACKAGE, "").replace(LAB_PROBE_MODULE, "")
    assert code.splitlines()[-1] == f"del _ag_sys, _ag_jax, {KERNEL_PACKAGE}, {LAB_PROBE_MODULE}"
