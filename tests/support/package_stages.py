"""The package's stages, lowest first, and the imports each module names: declared here once, read by
the architecture test (imports run one way) and the doors' test (each door exports what loads)."""

from __future__ import annotations

import ast
from pathlib import Path

import autograder

PACKAGE = Path(autograder.__file__).resolve().parent

# Lowest first: a stage may import only the stages before it (and itself).
STAGES = [
    "autograder.doors",  # the ground floor: how a stage's door names and loads its exports
    "autograder.paths",  # the ground floor: the package's folder and the project's root
    "autograder.jsonschema_formats",  # the ground floor: nbformat's import without jsonschema's IRI checker
    "autograder.kernel",  # all that runs inside the student's kernel: it imports nothing else of the harness
    "autograder.facts",  # what is taken from the kernel, as validated records
    "autograder.fairness",  # the machine's fairness: timed turns, the quiet machine, others' load
    "autograder.run.sandbox",  # the bounds a student's kernel runs within: bubblewrap, uid, seccomp, Landlock, limits
    "autograder.lab",  # the lab model: tasks, captures, the lab's package
    "autograder.caches",  # what the grader keeps on the machine
    "autograder.run.kernels",  # the kernels a run starts in the sandbox, talks to and stops
    "autograder.run",  # a submission's cells in a sandboxed kernel, task by task
    "autograder.checks",  # the semantic checks the labs' graders call
    "autograder.labs",  # each lab's graders and references
    "autograder.grading",  # one notebook's grade from its facts
    "autograder.authoring",  # a TA's tools: solution notebook -> student notebook (verified), a new lab's scaffold
    "autograder.self_check",  # what the student's notebook imports, and the self-check it runs in a process of its own
    "autograder.notebook",  # the name notebooks assigned before the rename import: self_check itself
    "autograder.course",  # a class's term: batches, gradebook, Gradescope
    "autograder.mutation",  # a TA's measure of a lab's graders: mutants of its solution, graded as a batch
    "autograder",  # the front door for Python users: its version, and a few stages' names, loaded when used
    "autograder.cli",  # the command line
    "autograder.__main__",
]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def stage_of(module: str) -> str | None:
    matches = [s for s in STAGES if s != "autograder" and (module == s or module.startswith(s + "."))]
    return max(matches, key=len) if matches else ("autograder" if module == "autograder" else None)


def _module_or_package(package: str, name: str) -> str:
    """``from package import name``: the module ``package.name`` if there is one, else ``package``."""
    candidate = PACKAGE.parent / f"{package}.{name}".replace(".", "/")
    return f"{package}.{name}" if candidate.is_dir() or candidate.with_suffix(".py").is_file() else package


def imported(path: Path, module: str) -> set[str]:
    """The ``autograder`` modules (or packages) ``path`` imports, anywhere in its code."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            found.update(_module_or_package(base, alias.name) for alias in node.names)
    return {name for name in found if name == "autograder" or name.startswith("autograder.")}


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}
IMPORTS = {module: imported(path, module) for module, path in MODULES.items()}
