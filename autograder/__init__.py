"""Grading harness for JAX parallelism lab notebooks.

Each folder of the package is a stage, and its ``__init__`` is the stage's door: under ``if
TYPE_CHECKING:`` it imports the names the stages above use, and ``lazy_exports`` makes each of those
names load on first use. So a door costs nothing to open until a name is used: the student's kernel
imports ``autograder.notebook`` without the grader's dependencies, and editors and type checkers read
the same imports as plain code.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

__version__ = "0.1.0"


def lazy_exports(package: str, init_file: str) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` for a package whose ``__init__`` (``init_file``)
    imports its exported names under ``if TYPE_CHECKING:``. A name's module is imported when the name is
    first used, and the name is read from it each time, so a test that patches it there is obeyed."""
    origins = door_names(Path(init_file))
    submodules = {p.stem for p in Path(init_file).parent.glob("*.py")} | {
        p.name for p in Path(init_file).parent.iterdir() if (p / "__init__.py").is_file()}
    if clashes := sorted(set(origins) & submodules):
        raise ImportError(f"{package} exports {clashes}, which are also its modules' names: rename one")

    def __getattr__(name: str) -> Any:
        if name not in origins:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = origins[name]
        return getattr(importlib.import_module(module), attribute)

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(origins))

    return __getattr__, __dir__, sorted(origins)


def door_names(init_file: Path) -> dict[str, tuple[str, str]]:
    """A door's names: each name ``init_file`` imports under ``if TYPE_CHECKING:``, with (its module, its
    name there)."""
    origins = {}
    for node in ast.parse(init_file.read_text(encoding="utf-8"), str(init_file)).body:
        if is_type_checking_block(node):
            for statement in node.body:
                if not isinstance(statement, ast.ImportFrom) or statement.level:
                    raise ImportError(f"{init_file}: under TYPE_CHECKING, only absolute `from ... import` names")
                for alias in statement.names:
                    origins[alias.asname or alias.name] = (statement.module, alias.name)
    return origins


def is_type_checking_block(node: ast.AST) -> bool:
    """Whether ``node`` is an ``if TYPE_CHECKING:`` block: imports only editors and type checkers run."""
    return isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


if TYPE_CHECKING:
    from autograder.authoring import assign_lab
    from autograder.course import BatchOptions, collect_submissions, run_batch
    from autograder.grading import GradeResult, grade_notebook
    from autograder.lab import Lab, lab_ids, load_lab

__getattr__, __dir__, _exported = lazy_exports(__name__, __file__)
__all__ = ["__version__", "door_names", "is_type_checking_block", "lazy_exports", *_exported]
