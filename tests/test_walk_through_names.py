"""docs/how-grading-works.md names only what is there: every module path, every dotted ``autograder.…``
name, every name it pairs with a module (``name`` (``path.py``), ``path.py``'s ``name``), and every name its
walk through one grade gives (the calls "## One grade" lists before its numbered steps), so that a newcomer
who follows a grade by those names finds each.

A name renamed or removed in the code without the document changing fails here, naming it.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "autograder"
DOC = ROOT / "docs" / "how-grading-works.md"
WALK = "## One grade"
# The one name the walk gives that no module defines: the kernel package's name inside a grading kernel,
# where run/kernels/harness_code.py copies autograder/kernel/ (KERNEL_PACKAGE).
KERNEL_ALIAS = {"_autograder_kernel": "kernel"}
PATH = re.compile(r"`([\w/.<>…-]+\.py)`")
FOLDER = re.compile(r"`([\w.<>-]+/(?:[\w.<>-]+/)*)`")
DOTTED = re.compile(r"\bautograder(?:\.\w+)+")
FROM_IMPORT = re.compile(r"from (autograder(?:\.\w+)*) import ([\w, ]+)")
IDENTIFIER = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
FILE_SUFFIXES = (".py", ".json", ".npy", ".toml", ".html", ".csv", ".md")
# ``name`` (``path``   ``path``'s ``name``   ``path`` (``name``
PAIRS = (
    re.compile(r"`(?P<name>[^`]+)` \(`(?P<path>[\w/<>]+\.py)`"),
    re.compile(r"`(?P<path>[\w/<>]+\.py)`'s `(?P<name>[^`]+)`"),
    re.compile(r"`(?P<path>[\w/<>]+\.py)` \(`(?P<name>[^`]+)`"),
)


def _files(path: str) -> list[Path]:
    """The files a path of the document stands for: from the repository's root or the package's (the
    document's usual ``run/execute.py``), a bare name anywhere in the package, ``<lab>`` any bundled lab."""
    pattern = path.replace("<lab>", "*").replace("<part>", "*")
    if "/" not in path:
        return sorted({*ROOT.glob(pattern), *PACKAGE.rglob(pattern)})
    return sorted({*ROOT.glob(pattern), *PACKAGE.glob(pattern)})


@cache
def _defined(file: Path) -> frozenset[str]:
    """The names a module defines or imports at its top (a door's lazily loaded names included), and each
    class's ``Class.attribute``: its methods, its fields and what its methods assign to ``self``."""
    names: set[str] = set()
    tree = ast.parse(file.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name):
                        names.add(leaf.id)
                    elif (
                        isinstance(leaf, ast.Attribute) and isinstance(leaf.value, ast.Name) and leaf.value.id == "self"
                    ):
                        names.add(leaf.attr)
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    for cls in (node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)):
        for node in ast.walk(cls):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(f"{cls.name}.{node.name}")
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(f"{cls.name}.{node.target.id}")
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
                names.add(f"{cls.name}.{node.attr}")
    return frozenset(names)


def _module_file(dotted: str) -> Path | None:
    path = ROOT.joinpath(*dotted.split("."))
    for file in (path.with_suffix(".py"), path / "__init__.py"):
        if file.is_file():
            return file
    return None


def _dotted_problem(dotted: str) -> str | None:
    """Why ``autograder.a.b`` names nothing: its longest module prefix must define the rest."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        file = _module_file(".".join(parts[:cut]))
        if file is not None:
            rest = ".".join(parts[cut:])
            return None if not rest or rest in _defined(file) else f"{dotted}: {file.relative_to(ROOT)} has no {rest}"
    return f"{dotted}: no such module"


def _bare(name: str) -> str | None:
    """The Python name a backticked text gives (``f(x)`` → ``f``), or None for what is no name (a command,
    a file, a flag)."""
    name = name.split("(", 1)[0].strip()
    if not IDENTIFIER.fullmatch(name) or name.endswith(FILE_SUFFIXES):
        return None
    return name


def problems(markdown: str) -> list[str]:
    """Every name of ``markdown`` that the code does not have, in words."""
    found = []
    for path in dict.fromkeys(PATH.findall(markdown) + FOLDER.findall(markdown)):
        if not _files(path.rstrip("/")):
            found.append(f"{path}: no such file")
    for dotted in dict.fromkeys(DOTTED.findall(markdown)):
        found += filter(None, [_dotted_problem(dotted)])
    for module, names in FROM_IMPORT.findall(markdown):
        found += filter(None, (_dotted_problem(f"{module}.{n.strip()}") for n in names.split(",") if n.strip()))
    for pair in PAIRS:
        for match in pair.finditer(markdown):
            name, files = _bare(match["name"]), _files(match["path"])
            if name is not None and files and not any(name in _defined(f) for f in files):
                found.append(f"{name}: not in {match['path']}")
    _, _, walk = markdown.partition(f"\n{WALK}\n")
    walk = re.split(r"^(?:#{1,3} |1\. )", walk, flags=re.M)[0]  # its calls, before the steps' detail
    everywhere = frozenset().union(*(_defined(f) for f in PACKAGE.rglob("*.py")))
    classes = {name.split(".")[0] for name in everywhere if "." in name}
    for text in dict.fromkeys(re.findall(r"`([^`\n]+)`", walk)):
        name = _bare(text)
        if name is None:
            continue
        first = name.split(".")[0]
        if first in KERNEL_ALIAS or first == "autograder" or _outside(first):
            continue
        # ``Class.method`` is looked up as such; ``submission.call``, an object's, by its last part
        if name not in everywhere and (first in classes or name.split(".")[-1] not in everywhere):
            found.append(f"{name}: defined nowhere in the package ({WALK})")
    return found


def _outside(name: str) -> bool:
    """A module of the standard library or an installed one (``pytest.main``)."""
    try:
        return name not in ("autograder",) and importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def test_the_document_names_only_what_is_there():
    found = problems(DOC.read_text(encoding="utf-8"))
    assert not found, f"{DOC.name} names what the code does not have: {found}"


@pytest.mark.parametrize(
    "text",
    [
        "the run (`run/make_believe.py`)",
        "the run (`run/make_believe/`)",
        "`autograder.grading.no_such_module`",
        "(`from autograder.run import Limits, execute_everything`)",
        "`execute_everything` (`run/execute.py`)",
        "`run/execute.py`'s `execute_everything`",
        f"\n{WALK}\n\n`KernelPool.execute_everything` runs it.\n",
        f"\n{WALK}\n\n`KernelPool.start` runs it.\n",  # a method of another class
    ],
)
def test_a_made_up_name_fails(text):
    assert problems(text), text


def test_the_names_it_gives_pass():
    text = (
        "`execute_plan` (`run/execute.py`), `grading/pipeline.py`'s `grade_notebook`, `kernel/recorder.py`"
        " (`record_task_facts`), `autograder.run.execute_plan`, `from autograder.run import Limits`"
        f"\n{WALK}\n\n`_Run.run_steps`, `KernelPool.execute`, `pytest.main`, `results.json`\n"
    )
    assert problems(text) == []
