"""The programs a run of a lab's solution compiled, read by the runs of the course's notebooks after it:
only that run writes them, and only when it ran to the end; a later course notebook's kernel loads its copy
and writes nothing; a student's kernel cannot see them; the folder is the harness user's alone. Plans of a
few cells, no lab notebook."""

from __future__ import annotations

import os
import shutil
import stat
import uuid
from pathlib import Path

import pytest
from uid_level import at_the_uid_level

from autograder.grading import pipeline
from autograder.grading.pipeline import compiled_programs
from autograder.lab import load_lab
from autograder.run.execute import RunRequest, execute_plan
from autograder.run.kernels import compiled_programs as programs
from autograder.run.kernels.compiled_programs import CompiledPrograms, compiled_programs_folder, copy_for_kernel, leave
from autograder.run.plan import Plan, RunCell
from autograder.run.sandbox.bubblewrap import sandbox_level
from autograder.run.sandbox.limits import Limits

LIMITS = Limits(cell_timeout=60, total_timeout=180)
COMPILE = (
    "import jax, jax.numpy as jnp\n"
    "hits = []\n"
    "jax.monitoring.register_event_listener(lambda name, **kw: hits.append(name))\n"
    "print(float(jax.jit(lambda x: x * 3 + 1)(jnp.arange(8.0)).sum()))\n"
)
HIT = "/jax/compilation_cache/cache_hits"


def _plan(*sources: str) -> Plan:
    return Plan(tuple(RunCell(source, "student", None, i + 1, f"cell {i + 1}") for i, source in enumerate(sources)), ())


def _outputs(execution) -> list[str]:
    return [c.error or "" for c in execution.cells]


@pytest.fixture
def folder():
    """A lab's folder of compiled programs, beside the labs' own, removed after."""
    path = compiled_programs_folder("test", Path(__file__)).with_name(f"test-{uuid.uuid4().hex}")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _listing(path: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in path.iterdir()}


@pytest.fixture(params=["default level", "uid level"])
def level(request, monkeypatch):
    """The sandbox's level here (bubblewrap where it works), or the uid level with Landlock."""
    if request.param == "default level":
        yield request.param
        return
    with at_the_uid_level(monkeypatch):
        yield request.param


def test_the_solutions_programs_are_kept_and_a_course_notebook_loads_them_but_a_student_cannot_see_them(level, folder):
    filled = execute_plan(RunRequest(_plan(COMPILE), {}, LIMITS, 1, compiled=CompiledPrograms(folder, fill=True)))
    assert filled.status == "completed" and _outputs(filled) == [""]
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and folder.stat().st_uid == os.geteuid()
    entries = list(folder.iterdir())
    assert entries and all(e.name.endswith("-cache") and stat.S_IMODE(e.stat().st_mode) == 0o600 for e in entries)
    before = _listing(folder)
    assert CompiledPrograms(folder).left()
    assert level == "default level" or "landlock" in sandbox_level()

    course = execute_plan(
        RunRequest(
            _plan(
                COMPILE + f"assert {HIT!r} in hits, hits\n",
                # a program of its own is compiled, not written, and nothing is said
                "import warnings\nwith warnings.catch_warnings(record=True) as seen:\n"
                "    warnings.simplefilter('always')\n"
                "    print(float(jax.jit(lambda x: x * 5 - 2)(jnp.arange(4.0)).sum()))\n"
                "assert not seen, [str(w.message) for w in seen]",
            ),
            {},
            LIMITS,
            2,
            compiled=CompiledPrograms(folder),
        )
    )
    assert course.status == "completed" and _outputs(course) == ["", ""], course.cells
    assert _listing(folder) == before

    student = execute_plan(
        RunRequest(
            _plan(
                COMPILE + f"assert {HIT!r} not in hits, hits\n",
                f"import os\nassert not os.path.exists({str(folder)!r}), os.listdir({str(folder)!r})",
            ),
            {},
            LIMITS,
            3,
        )
    )
    assert student.status == "completed" and _outputs(student) == ["", ""], student.cells


def test_a_run_that_did_not_end_well_or_only_reads_leaves_nothing(folder):
    died = _plan(COMPILE, "import os\nos._exit(3)")
    ended = execute_plan(RunRequest(died, {}, LIMITS, 1, compiled=CompiledPrograms(folder, fill=True)))
    assert ended.status == "kernel died" and not folder.exists()
    reads = execute_plan(RunRequest(_plan(COMPILE), {}, LIMITS, 2, compiled=CompiledPrograms(folder)))
    assert reads.status == "completed" and not folder.exists()


def test_only_regular_entry_files_are_kept_once_and_a_folder_others_may_write_is_not_read(tmp_path, folder):
    (tmp_path / "kernel").mkdir()
    (tmp_path / "other").mkdir()
    made = tmp_path / programs.KERNEL_DIR
    made.mkdir()
    (made / "a-cache").write_bytes(b"program")
    (made / "notes.txt").write_text("not an entry")
    (made / "b-cache").symlink_to(made / "a-cache")
    assert leave(tmp_path, folder)
    assert sorted(p.name for p in folder.iterdir()) == ["a-cache"]
    (made / "c-cache").write_bytes(b"later")
    assert not leave(tmp_path, folder)  # made whole once, never added to
    assert sorted(p.name for p in folder.iterdir()) == ["a-cache"]
    assert CompiledPrograms(folder).left() and copy_for_kernel(folder, tmp_path / "kernel")
    assert sorted(p.name for p in (tmp_path / "kernel" / programs.KERNEL_DIR).iterdir()) == ["a-cache"]
    folder.chmod(0o777)  # a folder others may write is not read
    assert not CompiledPrograms(folder).left() and not copy_for_kernel(folder, tmp_path / "other")
    assert not CompiledPrograms(folder.with_name("missing")).left()


def test_the_labs_own_solution_fills_until_they_are_left_the_courses_notebooks_read_and_a_students_never(
    tmp_path, folder, monkeypatch
):
    lab = load_lab("lab4_collectives")
    assert compiled_programs_folder(lab.id, lab.solution_path).parent == folder.parent
    monkeypatch.setattr(pipeline, "compiled_programs_folder", lambda lab_id, solution: folder)
    copy = tmp_path / lab.solution_path.name
    shutil.copyfile(lab.solution_path, copy)
    assert compiled_programs(lab, lab.solution_path, False) == CompiledPrograms(folder, fill=True)
    assert compiled_programs(lab, copy, True) == CompiledPrograms(folder)  # a known-grade case
    assert compiled_programs(lab, copy, False) is None  # a student's, even the solution's very text
    (tmp_path / programs.KERNEL_DIR).mkdir()
    (tmp_path / programs.KERNEL_DIR / "a-cache").write_bytes(b"program")
    assert leave(tmp_path, folder)
    assert compiled_programs(lab, lab.solution_path, False) == CompiledPrograms(folder)  # left: it reads too


def test_the_folder_follows_the_solution(tmp_path):
    lab = load_lab("lab4_collectives")
    copy = tmp_path / lab.solution_path.name
    shutil.copyfile(lab.solution_path, copy)
    assert compiled_programs_folder(lab.id, copy) == compiled_programs_folder(lab.id, lab.solution_path)
    copy.write_bytes(copy.read_bytes() + b"\n")  # another solution
    assert compiled_programs_folder(lab.id, copy) != compiled_programs_folder(lab.id, lab.solution_path)


def test_the_switch_turns_them_off(monkeypatch):
    monkeypatch.setenv(programs.COMPILED_PROGRAMS_VARIABLE, "off")
    lab = load_lab("lab4_collectives")
    assert compiled_programs(lab, lab.solution_path, False) is None
