"""``autograder new-lab LAB``: a lab that runs, to be edited into a real one.

It writes the solution notebook (the devices' setup cell, task and answer markers), the lab's package
(captures, reference, graders with one worked example of each kind of check: values on the grader's own
inputs, layout, ``jax.typeof``, the collective a ``shard_map`` body writes, a timed claim) and
``tests/labs/LAB_submissions.py``, which the suite finds by its name. Then ``autograder assign LAB`` gives
the solution full marks and the student notebook zero.

The lab is worth 100 points whatever its number of tasks: each task gets an equal share (the first ones
a point more when 100 does not divide), split among the task's checks in the proportions its example
gives them.
"""

from __future__ import annotations

import keyword
import re
import textwrap
from pathlib import Path

import nbformat

from autograder.authoring.setup_cell import CELL_ID as SETUP_CELL_ID
from autograder.authoring.setup_cell import new_setup_cell
from autograder.lab import LABS_PACKAGE, lab_ids, project_root


class NewLabError(ValueError):
    """The lab cannot be made: a bad or taken name, or a bad number of tasks."""


LAB_POINTS = 100
MAX_TASKS = 25  # so that every check of a task keeps at least a point


SETUP = '''\
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((8,), ("x",))  # Explicit axes, jax.make_mesh's default
data = np.arange(64, dtype=np.float32)'''

# One example task of each kind: (statement, solution cell, names, CAPTURES entry, graders).
EXAMPLES = [
    ("Place `data` on `mesh` with its entries split over `x`; bind it to `v`.",
     "# BEGIN SOLUTION\nv = jax.device_put(data, NamedSharding(mesh, P(\"x\")))\n# END SOLUTION",
     'TaskCapture("{t}", names=("v",))',
     '''
@task("{t}")
@points(4)
def test_{t}_values(submission):
    """`v` holds the values of `data`"""
    assert_allclose(submission.name("{t}", "v"), ref.lab_data(), "v")


@task("{t}")
@points(3)
def test_{t}_layout(submission):
    """`v` is split over the 8 devices of `mesh`"""
    assert_layout(submission.name("{t}", "v"), Layout.of_spec(ref.MESH, ("x",), (64,)), "v")


@task("{t}")
@points(3)
def test_{t}_type(submission):
    """`jax.typeof(v)` says its entries are split over `x`"""
    assert_type(submission.name("{t}", "v"), (64,), "float32", ("x",), "v")
'''),
    ("Write `total_of(v)`: a jitted `jax.shard_map` whose body sums its device's block and adds the blocks' "
     "sums with `jax.lax.psum`.",
     "# BEGIN SOLUTION\n@jax.jit\ndef total_of(v):\n    body = lambda block: jax.lax.psum(jnp.sum(block), \"x\")\n"
     "    return jax.shard_map(body, mesh=mesh, in_specs=P(\"x\"), out_specs=P())(v)\n# END SOLUTION\n\n"
     "total = total_of(v)\nprint(total)",
     # The input is placed as the shard_map's in_specs expect: on a mesh with Explicit axes an unsharded
     # input is refused.
     'TaskCapture("{t}", names=("total",), calls=(\n'
     '        Call("total_of", "total_of", args=(Input((ref.FRESH_N,), mesh=ref.MESH, spec=("x",)),)),\n'
     '    ))',
     '''
@task("{t}")
@points(5)
@hidden
def test_{t}_fresh_values(submission):
    """`total_of` sums the grader's own inputs"""
    (v,) = submission.inputs("{t}", "total_of")
    assert_allclose(submission.call("{t}", "total_of").output, np.sum(np.asarray(v)), "total_of(v)", rtol=1e-4)


@task("{t}")
@points(5)
def test_{t}_reduces_with_psum(submission):
    """`total_of` is a shard_map whose body reduces with jax.lax.psum over `x`"""
    assert_shard_map_collectives(submission.call("{t}", "total_of"), "total_of", uses=["psum"], axis="x")


@task("{t}")
@points(2)
def test_{t}_jitted(submission):
    """`total_of` is jitted, as the text asks: every "a jitted ..." of a text gets this check"""
    assert_jitted(submission.call("{t}", "total_of"), "total_of")
'''),
    ("Measure the seconds per call of `total_of(v)`, warm and blocked; bind it to `t_total`.",
     "# BEGIN SOLUTION\ntotal_of(v).block_until_ready()\nstart = time.perf_counter()\nfor _ in range(50):\n"
     "    total_of(v).block_until_ready()\nt_total = (time.perf_counter() - start) / 50\n# END SOLUTION",
     'TaskCapture("{t}", names=("t_total",), times_code=True)',
     '''
@task("{t}")
@points(10)
@hidden
def test_{t}_time(submission, per_grading):
    """`t_total` agrees with the grader's own warm, blocked measurement"""
    assert_time_consistent(submission.name("{t}", "t_total"), per_grading(ref.total_time), "t_total")
'''),
]
FILLER = (
    "Bind `answer_{t}` to the sum of `data`.",
    "# BEGIN SOLUTION\nanswer_{t} = float(data.sum())\n# END SOLUTION",
    'TaskCapture("{t}", names=("answer_{t}",))',
    '''
@task("{t}")
@points(10)
def test_{t}_answer(submission):
    """`answer_{t}` is the sum of `data`"""
    assert_allclose(submission.name("{t}", "answer_{t}"), float(ref.lab_data().sum()), "answer_{t}")
''')

REFERENCE = '''\
"""Lab {lab}: reference computations, run in the grader's process only."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

from autograder.checks import MeshSpec, called_once, measure_interleaved
from autograder.caches import cached_reference

MESH = MeshSpec((8,), ("x",), "explicit")  # the notebook's jax.make_mesh((8,), ("x",))
FRESH_N = 128  # the grader's inputs have another size than the lab's data


@cached_reference
def lab_data() -> np.ndarray:
    """The lab's `data`, as its setup cell makes it."""
    return np.arange(64, dtype=np.float32)


@functools.cache
def total_calls():
    """The call the grader times for the timed task, set up (placed, compiled, called once) ahead."""
    mesh = MESH.build()
    v = jax.device_put(lab_data(), NamedSharding(mesh, P("x")))
    total_of = jax.jit(jax.shard_map(lambda block: jax.lax.psum(jnp.sum(block), "x"), mesh=mesh,
                                     in_specs=P("x"), out_specs=P()))
    return called_once({{"total": lambda: total_of(v)}})


def total_time() -> float:
    """The grader's own seconds per call of total_of(v), measured now (through per_grading: never cached)."""
    return measure_interleaved(total_calls())["total"].median


CACHED_CALLS = (lab_data,)  # what `autograder warm` computes ahead: at least one
SET_UP_AHEAD = {set_up_ahead}
'''

CAPTURES = '''\
"""Lab {lab}: what the harness reads from the kernel after each task."""

from autograder.facts import Call, Input, TaskCapture
from autograder.labs.{lab} import reference as ref

CAPTURES = (
{captures}
)
'''

GRADERS = '''\
"""Graders of lab {lab}: one test per gradable fact, worth its points (docs/writing-a-lab.md)."""

import numpy as np
import pytest

from autograder.checks import (
    Layout, assert_allclose, assert_jitted, assert_layout, assert_shard_map_collectives, assert_time_consistent,
    assert_type,
)
from autograder.labs.{lab} import reference as ref

task, points, hidden = pytest.mark.task, pytest.mark.points, pytest.mark.hidden
{graders}'''

SUBMISSIONS = '''\
"""Submissions of lab {lab} with known grades: correct ones written differently, and wrong ones.
The suite grades them as they are, found by this file's name (tests/support/lab_submissions.py)."""

from known_grade_case import Case, solved

CASES = [
    Case("all_solved", solved({tasks}), {scores}),
{extra}]
'''

WRONG_PSUM = '''\
    # A plain sum of the sharded input is right in value, but XLA, not the function, does the reduction.
    Case("t2_plain_sum", {{"t2": "total_of = jax.jit(jnp.sum)\\ntotal = total_of(v)"}}, {{"t2": {but_psum}}},
         messages={{"t2": "found no shard_map"}}),
    # Each requirement of a task's text broken alone loses exactly its check's points: here, not jitted.
    Case("t2_not_jitted", {{"t2": "def total_of(v):\\n    body = lambda block: jax.lax.psum(jnp.sum(block), 'x')\\n"
                                  "    return jax.shard_map(body, mesh=mesh, in_specs=P('x'), out_specs=P())(v)\\n"
                                  "total = total_of(v)"}}, {{"t2": {but_jitted}}},
         messages={{"t2": "expected a jitted function"}}),
'''


def _check_name(lab: str) -> None:
    if not lab.isidentifier() or keyword.iskeyword(lab):
        raise NewLabError(f"{lab!r} is not a Python identifier: a lab is a package, e.g. lab4_collectives")
    if lab in lab_ids() or (LABS_PACKAGE / lab).exists():
        raise NewLabError(f"lab {lab!r} exists already ({LABS_PACKAGE / lab})")


def _tasks(n_tasks: int) -> list[tuple[str, tuple[str, str, str, str]]]:
    if not 1 <= n_tasks <= MAX_TASKS:
        raise NewLabError(f"a lab has 1 to {MAX_TASKS} tasks, not {n_tasks}")
    kinds = EXAMPLES[:n_tasks] + [FILLER] * (n_tasks - len(EXAMPLES))
    return [(f"t{i}", kind) for i, kind in enumerate(kinds, start=1)]


def split_points(total: int, weights: list[int]) -> list[int]:
    """``total`` split in proportion to ``weights``, in whole points that add up to ``total`` (the largest
    remainders get the points left over)."""
    exact = [total * w / sum(weights) for w in weights]
    points = [int(e) for e in exact]
    by_remainder = sorted(range(len(weights)), key=lambda i: (points[i] - exact[i], i))
    for i in by_remainder[: total - sum(points)]:
        points[i] += 1
    return points


POINTS_LINE = re.compile(r"^@points\((\d+)\)$", re.MULTILINE)


def _graders_worth(graders: str, total: int) -> str:
    """The task's graders with their ``@points`` rescaled to add up to ``total``."""
    points = iter(split_points(total, _points(graders)))
    return POINTS_LINE.sub(lambda _: f"@points({next(points)})", graders)


def _points(graders: str) -> list[int]:
    return [int(p) for p in POINTS_LINE.findall(graders)]


def _wrong_cases(points: list[int]) -> str:
    """The known-grade wrong cases of the shard_map example, from its checks' points (values, psum, jitted)."""
    values, psum, jitted = points
    return WRONG_PSUM.format(but_psum=values + jitted, but_jitted=values + psum)


def solution_notebook(lab: str, tasks) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["autograder"] = {"lab": lab}  # so `autograder grade` knows the lab without --lab
    cells = [nbformat.v4.new_markdown_cell(f"# {lab}\n\nWhat this lab teaches, in two sentences."),
             new_setup_cell(), nbformat.v4.new_code_cell(SETUP)]
    for t, (statement, solution, _, graders) in tasks:
        cells += [nbformat.v4.new_raw_cell(f"# BEGIN QUESTION\nname: {t}\npoints: {sum(_points(graders))}"),
                  nbformat.v4.new_markdown_cell(f"**{t}.** {statement.format(t=t)}"),
                  nbformat.v4.new_code_cell(solution.format(t=t)),
                  nbformat.v4.new_raw_cell("# END QUESTION")]
    for index, cell in enumerate(cells):
        if cell.get("id") != SETUP_CELL_ID:  # the setup cell keeps the id every lab's tests find it by
            cell["id"] = f"{lab[:20]}-{index:03d}".replace("_", "-")
    nb.cells = cells
    return nb


def scaffold_lab(lab: str, n_tasks: int = 3) -> list[Path]:
    """Write the lab's files; the paths written. Refuses a taken or non-identifier name."""
    _check_name(lab)
    examples = _tasks(n_tasks)
    tasks = [(t, (statement, solution, capture, _graders_worth(graders.format(t=t), share)))
             for (t, (statement, solution, capture, graders)), share
             in zip(examples, split_points(LAB_POINTS, [1] * n_tasks))]
    root = project_root()
    timed = [t for t, kind in tasks if "times_code=True" in kind[2]]
    files = {
        root / "solutions" / lab / f"{lab}.ipynb": nbformat.writes(solution_notebook(lab, tasks)) + "\n",
        LABS_PACKAGE / lab / "__init__.py": CAPTURES.format(
            lab=lab, captures="\n".join(f"    {kind[2].format(t=t)}," for t, kind in tasks)),
        LABS_PACKAGE / lab / "reference.py": REFERENCE.format(
            lab=lab, set_up_ahead="{" + ", ".join(f'"{t}": (total_calls,)' for t in timed) + "}"),
        LABS_PACKAGE / lab / f"test_{lab}.py": GRADERS.format(
            lab=lab, graders="".join(f"\n\n# {t}\n" + kind[3] for t, kind in tasks)),
        root / "tests" / "labs" / f"{lab}_submissions.py": SUBMISSIONS.format(
            lab=lab, tasks=", ".join(repr(t) for t, _ in tasks),
            scores="{" + ", ".join(f"{t!r}: {sum(_points(kind[3]))}" for t, kind in tasks) + "}",
            extra=_wrong_cases(_points(tasks[1][1][3])) if n_tasks >= 2 else ""),
    }
    taken = [path for path in files if path.exists()]
    if taken:
        raise NewLabError(f"would overwrite {', '.join(map(str, taken))}")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text) if path.suffix == ".py" else text, encoding="utf-8")
    return list(files)
