"""A stage's door: its ``__init__`` imports the names the stages above use under ``if TYPE_CHECKING:``,
and ``lazy_exports`` loads each on first use, so the student's kernel opens ``autograder.self_check``
without the grader's dependencies. Not scientific-python's ``lazy_loader``, which wants each name written
twice (``__init__`` and a ``.pyi`` stub): here editors, type checkers and this module read one list."""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeGuard


def lazy_exports(package: str, init_file: str) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` for the door ``init_file``. A name is read from its module
    each time, so a test that patches it there is obeyed."""
    origins = door_names(Path(init_file))
    submodules = {p.stem for p in Path(init_file).parent.glob("*.py")} | {
        p.name for p in Path(init_file).parent.iterdir() if (p / "__init__.py").is_file()
    }
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
    """Each name ``init_file`` imports under ``if TYPE_CHECKING:``, with (its module, its name there)."""
    origins = {}
    for node in ast.parse(init_file.read_text(encoding="utf-8"), str(init_file)).body:
        if is_type_checking_block(node):
            for statement in node.body:
                if not isinstance(statement, ast.ImportFrom) or statement.level or statement.module is None:
                    raise ImportError(f"{init_file}: under TYPE_CHECKING, only absolute `from ... import` names")
                for alias in statement.names:
                    origins[alias.asname or alias.name] = (statement.module, alias.name)
    return origins


def is_type_checking_block(node: ast.AST) -> TypeGuard[ast.If]:
    return isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def door_origin(package: str, name: str) -> str:
    """The module ``from package import name`` reaches: the door's origin of ``name``, else ``package.name``."""
    exported = door_names_of(package)
    return exported[name][0] if name in exported else f"{package}.{name}"


@functools.cache
def door_names_of(package: str) -> dict[str, tuple[str, str]]:
    if not (package == "autograder" or package.startswith("autograder.")):
        return {}
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return {}
    if spec is None or spec.submodule_search_locations is None or not spec.origin:
        return {}
    return door_names(Path(spec.origin))
