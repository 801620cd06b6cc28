"""A student's kernel keeps its own JAX when it is one the harness is tested on, and is told plainly when it
is not: by the setup cell, and above the results of ``ag.check`` (which still checks). The range is the one
the installed harness declares, written once in ``pyproject.toml``."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

import autograder.self_check as ag
from autograder.authoring.setup_cell import JAX_HIGH, JAX_LOW, SOURCE, UNTESTED_JAX_MESSAGE
from autograder.grading import versions
from autograder.self_check.cell_output import SelfCheckReport, self_check_html

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _declared(package: str) -> SpecifierSet:
    dependencies = tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]
    (found,) = [d for d in dependencies if d.split(">")[0].split("<")[0].split("=")[0].strip() == package]
    return SpecifierSet(found[len(package) :])


def test_the_tested_range_is_the_one_pyproject_declares():
    assert versions.tested_range("jax") == _declared("jax") and versions.tested_range("jaxlib") == _declared("jaxlib")
    assert versions.tested_range("no-such-package") is None
    assert SpecifierSet(f">={JAX_LOW},<{JAX_HIGH}") == _declared("jax")  # the setup cell's bounds


@pytest.mark.parametrize(
    "version, inside",
    [("0.10.2", True), ("0.12.0.1", True), ("0.12.9", True), ("0.10.1", False), ("0.13.0", False), ("0.9.0", False)],
)
def test_a_version_outside_the_range_is_named_with_the_install_command(version, inside):
    problem = versions.version_problem("jax", version, SpecifierSet(">=0.10.2,<0.13"))
    if inside:
        assert problem is None
    else:
        assert f"This kernel has jax {version}; the checks are tested on jax <0.13,>=0.10.2" in problem
        assert '%pip install "jax<0.13,>=0.10.2"' in problem and "restart the kernel" in problem
    assert versions.version_problem("jax", "0.1.0", None) is None  # nothing declared: nothing said


@pytest.mark.parametrize("version", ["0.9.0", "0.13.1"])
def test_the_setup_cell_says_when_the_kernel_s_jax_is_untested(version):
    code = f"import jax\njax.__version__ = {version!r}\n" + SOURCE
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert f"This kernel has JAX {version}; {UNTESTED_JAX_MESSAGE}" in shown.stderr
    assert f'%pip install "jax>={JAX_LOW},<{JAX_HIGH}" "jaxlib>={JAX_LOW},<{JAX_HIGH}"' in shown.stderr


def test_the_setup_cell_says_nothing_of_a_tested_jax():
    shown = subprocess.run([sys.executable, "-c", SOURCE], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and "This kernel has JAX" not in shown.stderr, shown.stderr


def test_ag_check_warns_above_its_results_and_still_checks(monkeypatch):
    assert ag.jax_version_warning() is None  # this very environment is tested
    real_version = metadata.version
    monkeypatch.setattr(metadata, "version", lambda name: "0.14.0" if name == "jax" else real_version(name))
    warning = ag.jax_version_warning()
    assert warning.startswith("This kernel has jax 0.14.0") and "may differ from your grade" in warning
    html = self_check_html(SelfCheckReport("lab2_three_ways", (), warning=warning))
    assert "data-verdict='warning'" in html and "This kernel has jax 0.14.0" in html
    assert "data-verdict='problem'" not in html  # a warning, not a problem: the tasks are still shown
