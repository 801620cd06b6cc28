"""The lab notebooks as a student runs them: the students' wheel installed into a fresh venv, each
lab's notebook copied out of the checkout and run top to bottom by a kernel of that venv started the way
Jupyter starts one (no XLA_FLAGS, no JAX_PLATFORMS). Filled in, no cell raises and every check passes;
untouched, no self-check cell shows a traceback. Each notebook runs once per session, two at a time."""

from __future__ import annotations

import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from jupyter_client import AsyncKernelManager
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient
from student_install import filled_notebook, kernel_spec, plain_environment, untouched_notebook

from autograder.authoring.setup_cell import CELL_ID, RESTART_MESSAGE
from autograder.lab import lab_ids, load_lab
from autograder.run.plan import is_self_check_cell
from autograder.self_check.cell_output import NO_PUBLIC_CHECKS, NOT_ATTEMPTED

VERDICT = re.compile(r"data-task='(t\d+)' data-verdict='([^']+)'")


def _run(path: Path, kernels: Path, kernel_name: str) -> nbformat.NotebookNode:
    """Run the notebook file at ``path`` from its folder in a kernel of the spec ``kernel_name``, as Jupyter
    does."""
    nb = nbformat.read(path, as_version=4)
    manager = AsyncKernelManager(
        kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels)]), kernel_name=kernel_name
    )
    client = NotebookClient(
        nb, km=manager, timeout=300, allow_errors=True, resources={"metadata": {"path": str(path.parent)}}
    )
    # cleanup_kc: nbclient shuts down only a kernel whose manager it made, unless told to
    client.execute(cleanup_kc=True, env={**plain_environment(), "JPY_SESSION_NAME": str(path)})
    return nb


@pytest.fixture(scope="session")
def student_runs(students_wheel_python, tmp_path_factory, request):
    """(lab id, 'filled' | 'untouched') -> the notebook run from a folder outside the checkout, for the
    labs of ``--lab`` (default: every lab)."""
    directory = tmp_path_factory.mktemp("student-notebooks")
    kernels = directory / "kernels"
    notebooks = {}
    for lab in map(load_lab, request.config.getoption("lab") or lab_ids()):
        notebooks[lab.id, "filled"] = filled_notebook(lab, directory / "filled")
        notebooks[lab.id, "untouched"] = untouched_notebook(lab, directory / "untouched")
    # The kernel spec is written once, before the runs: a run reading it while another rewrote it found it empty.
    name = kernel_spec(kernels, students_wheel_python)
    with ThreadPoolExecutor(2) as pool:
        runs = {key: pool.submit(_run, path, kernels, name) for key, path in notebooks.items()}
        return {key: run.result() for key, run in runs.items()}


def _errors(nb) -> list[str]:
    return [
        f"cell {i} ({cell.get('id')}): {o.get('ename')}: {o.get('evalue')}"
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code"
        for o in cell.outputs
        if o.output_type == "error"
    ]


def _self_check_cells(nb) -> list[tuple[str, str, list]]:
    """(task, shown html, error and stream outputs) of each self-check cell."""
    return [
        (
            cell.metadata["autograder"]["task"],
            "".join(o.get("data", {}).get("text/html", "") for o in cell.outputs),
            [o for o in cell.outputs if o.output_type in ("error", "stream")],
        )
        for cell in nb.cells
        if cell.cell_type == "code" and is_self_check_cell(cell)
    ]


def test_the_venv_imports_the_installed_students_wheel_not_the_checkout(students_wheel_python):
    code = (
        "import autograder, importlib.metadata as m, importlib.util as u; print(autograder.__file__); "
        "print(m.version('jax-labs-autograder-student')); print(u.find_spec('autograder.course'))"
    )
    found = subprocess.run(
        [str(students_wheel_python), "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=plain_environment(),
        cwd="/",
    )
    assert found.returncode == 0, found.stderr
    path, version, course = found.stdout.split()
    assert Path(path).is_relative_to(students_wheel_python.parent.parent), found.stdout
    assert course == "None", "the students' package carries the course's tools"


@pytest.mark.slow
@pytest.mark.parametrize("lab_id", lab_ids())
def test_a_filled_notebook_runs_top_to_bottom_and_every_check_passes(student_runs, lab_id):
    nb = student_runs[lab_id, "filled"]
    assert _errors(nb) == []
    setup = [cell for cell in nb.cells if cell.get("id") == CELL_ID]
    assert setup, f"no cell with the setup cell's id {CELL_ID!r}: the lab's first code cell must be the setup cell"
    assert RESTART_MESSAGE not in str(setup[0].outputs)
    checks = _self_check_cells(nb)
    assert [task for task, _, _ in checks] == [t.id for t in load_lab(lab_id).tasks]
    for task, html, other in checks:  # a task checked only in grading (timing) has no public checks
        assert VERDICT.findall(html) in ([(task, "passed")], [(task, NO_PUBLIC_CHECKS)]), html
        assert other == []
    assert any(VERDICT.findall(html) == [(task, "passed")] for task, html, _ in checks)


@pytest.mark.slow
@pytest.mark.parametrize("lab_id", lab_ids())
def test_an_untouched_notebook_shows_no_traceback_in_its_self_check_cells(student_runs, lab_id):
    checks = _self_check_cells(student_runs[lab_id, "untouched"])
    assert [task for task, _, _ in checks] == [t.id for t in load_lab(lab_id).tasks]
    for task, html, other in checks:
        assert [t for t, _ in VERDICT.findall(html)] == [task], html
        assert VERDICT.findall(html)[0][1] in ("failed", NOT_ATTEMPTED), html
        assert other == [] and "Traceback" not in html
