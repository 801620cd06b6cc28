"""The self-check cells ``assign`` adds to a student notebook: after each task, a code cell
``ag.check("tN", lab=...)``, and near the top a markdown cell that explains it. Both are tagged
``{"autograder": {"check": true, ...}}`` in their metadata, by which the run's plan
(``run/plan.py``) knows them and leaves them out: grading never runs them.
"""

from __future__ import annotations

import nbformat

from autograder.run import SELF_CHECK_MODULE


def intro_markdown(lab_id: str) -> str:
    return f"""### Checking your work as you go

After each task there is a cell like

```python
import autograder.self_check as ag
ag.check("t1", lab="{lab_id}")
```

Run it once you have done the task: within seconds it shows the task's points from its public checks,
what each check found and, for a layout, the expected and the found blocks side by side. The checks are
the ones grading runs, on fresh inputs, in a separate process; grading runs them again and may run
further checks. Before a task is done it says "not attempted". `ag.check()` checks every task at once.
These cells are not run when your notebook is graded, so nothing you write in them counts.

They need two things in this notebook's kernel, both named in the notebook's first code cell:

* the grading harness, the `autograder` package: if the cell fails with
  `ModuleNotFoundError: No module named 'autograder'`, install it into this kernel's environment with
  the `%pip install` command of the first code cell (the wheel or address your course gives), then
  restart the kernel;
* 8 CPU devices: the first code cell sets them before JAX starts; run it first, in a fresh kernel."""


def self_check_source(task: str, lab_id: str) -> str:
    return (
        f"# Check task {task} (public checks; this cell is not run when grading)\n"
        f"import {SELF_CHECK_MODULE} as ag\n"
        f'ag.check("{task}", lab="{lab_id}")'
    )


def new_intro_cell(lab_id: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_markdown_cell(intro_markdown(lab_id))
    cell.id = "how-to-check"
    cell.metadata["autograder"] = {"task": None, "answer": False, "check": True}
    return cell


def new_self_check_cell(task: str, lab_id: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(self_check_source(task, lab_id))
    cell.id = f"check-{task}"
    cell.metadata["autograder"] = {"task": task, "answer": False, "check": True}
    return cell
