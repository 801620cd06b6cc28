"""Each stage's door (its package's ``__init__``) exports names that load only when used."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap

import pytest
from package_stages import MODULES, STAGES

DOORS = sorted(
    s for s in STAGES if s in MODULES and MODULES[s].name == "__init__.py" and "lazy_exports" in MODULES[s].read_text()
)


def test_the_stages_have_doors():
    assert {"autograder", "autograder.run", "autograder.facts", "autograder.grading", "autograder.course"} <= set(DOORS)


@pytest.mark.parametrize("door", DOORS)
def test_every_name_a_door_exports_is_there(door):
    package = importlib.import_module(door)
    assert package.__all__, f"{door} exports nothing"
    for name in package.__all__:
        assert getattr(package, name) is not None
        assert name in dir(package)
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        _ = package.no_such_name


def _modules_after(statement: str) -> set[str]:
    code = f"import sys\n{statement}\nprint('\\n'.join(sorted(sys.modules)))"
    return set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split())


def test_opening_the_package_loads_nothing_else_of_it():
    """But for the one module whose work is done at once (``jsonschema_formats``: it must come before nbformat)."""
    loaded = {m for m in _modules_after("import autograder") if m.startswith("autograder")}
    assert loaded == {"autograder", "autograder.jsonschema_formats"}


def test_the_students_door_loads_none_of_the_graders_machinery():
    """``import autograder.self_check`` runs in the student's own kernel, where the harness may be installed
    without its dependencies: it must not need the kernel's client, pytest, Dask or rich."""
    loaded = {m.split(".")[0] for m in _modules_after("import autograder.self_check")}
    assert "autograder" in loaded
    assert not loaded & {"nbclient", "jupyter_client", "zmq", "pytest", "dask", "distributed", "rich"}


def test_notebooks_assigned_before_the_rename_get_the_same_door():
    """Their self-check cells say ``import autograder.notebook as ag``: the very module, loading no more."""
    statement = (
        "import autograder.notebook as ag, autograder.self_check as new; assert ag is new and callable(ag.check)"
    )
    loaded = {m.split(".")[0] for m in _modules_after(statement)}
    assert not loaded & {"nbclient", "jupyter_client", "zmq", "pytest", "dask", "distributed", "rich"}


def test_a_door_refuses_a_name_that_is_also_one_of_its_modules(tmp_path):
    package = tmp_path / "door_with_a_clash"
    package.mkdir()
    (package / "collect.py").write_text("def collect():\n    return 1\n")
    (package / "__init__.py").write_text(
        textwrap.dedent("""\
        from typing import TYPE_CHECKING
        from autograder.doors import lazy_exports
        if TYPE_CHECKING:
            from door_with_a_clash.collect import collect
        __getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
    """)
    )
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(ImportError, match=r"exports \['collect'\], which are also its modules' names"):
            importlib.import_module("door_with_a_clash")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("door_with_a_clash", None)


def test_a_name_patched_in_its_module_is_what_the_door_gives(monkeypatch):
    import autograder.run.sandbox.bubblewrap

    monkeypatch.setattr(autograder.run.sandbox.bubblewrap, "sandbox_problem", lambda: "patched")
    from autograder.run import sandbox_problem

    assert sandbox_problem() == "patched"
