"""The package's folders are its stages, and imports run one way: from a stage to the stages below it.

Every import the code names counts, including those inside functions and under ``TYPE_CHECKING``: a
reader following the code sees them all. A new module fails here until its stage is declared.
"""

from __future__ import annotations

import ast
from pathlib import Path

from package_stages import IMPORTS, MODULES, PACKAGE, STAGES, imported, stage_of

from autograder.doors import door_names


def test_every_module_belongs_to_a_declared_stage():
    undeclared = sorted(m for m in MODULES if stage_of(m) is None)
    assert not undeclared, f"modules in no stage (add them to STAGES): {undeclared}"


def test_imports_run_from_higher_stages_to_lower_ones():
    rank = {stage: i for i, stage in enumerate(STAGES)}
    upward = sorted(
        f"{module} ({stage_of(module)}) imports {name} ({stage_of(name)})"
        for module, names in IMPORTS.items()
        for name in names
        if stage_of(name) is not None and stage_of(module) is not None and rank[stage_of(name)] > rank[stage_of(module)]
    )
    assert not upward, "imports from a lower stage to a higher one:\n" + "\n".join(upward)


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle in ``graph``, as the nodes along it, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def _stage_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, names in IMPORTS.items():
        for name in names:
            if stage_of(name) not in (None, stage_of(module)):
                graph.setdefault(stage_of(module), set()).add(stage_of(name))
    return graph


def test_the_declared_order_is_the_order_the_imports_draw():
    """Drawn from its imports, a stage stands one floor above the highest stage it imports: the declared
    order lists the floors bottom up, so a stage declared too low (or too high) fails here."""
    graph = _stage_graph()
    floor = dict.fromkeys(STAGES, 0)
    for _ in STAGES:  # a floor is final once the longest chain of imports below it has been walked
        floor = {stage: 1 + max((floor[lower] for lower in graph.get(stage, ())), default=-1) for stage in STAGES}
    drawn = sorted(STAGES, key=lambda stage: (floor[stage], STAGES.index(stage)))
    assert drawn == STAGES, (
        "declared (lowest first): "
        + ", ".join(STAGES)
        + "\ndrawn: "
        + ", ".join(f"{stage} (floor {floor[stage]})" for stage in drawn)
    )


def test_no_stage_imports_the_top_package():
    """The top ``__init__`` names a few things for users; a stage that took something from it would tie
    the top package to every floor both ways, so stages take the ground floor's leaves instead."""
    through_top = sorted(module for module, names in IMPORTS.items() if "autograder" in names)
    assert not through_top, (
        "modules importing the top package (use autograder.doors / autograder.paths):\n" + "\n".join(through_top)
    )


def test_no_circles_between_stages():
    graph = _stage_graph()
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_no_circles_between_modules():
    """A package's ``__init__`` that re-exports its modules is the one allowed back edge: a module
    importing a sibling through the package is the same as importing the sibling."""
    graph = {
        module: {name for name in names if name != module and not module.startswith(name + ".")}
        for module, names in IMPORTS.items()
    }
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def _absolute_imports(path: Path, module: str):
    """Each ``autograder`` module a statement of ``path`` imports from: (line, the module named)."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("autograder."):
            yield node.lineno, node.module
        elif isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names if a.name.startswith("autograder."))


def test_other_stages_enter_a_stage_by_its_door():
    """A stage's ``__init__`` exports what the stages above use; they import from it, not its inner files."""
    around = sorted(
        f"{path.relative_to(PACKAGE.parent)}:{line} imports {name}; import it from {stage_of(name)}"
        for module, path in MODULES.items()
        for line, name in _absolute_imports(path, module)
        if stage_of(name) not in (None, "autograder", stage_of(module)) and name != stage_of(name)
    )
    assert not around, "imports past a stage's door:\n" + "\n".join(around)


def _names_from_doors(path: Path):
    """Each ``from <a stage's package> import name`` of ``path``: (line, the package, the name)."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and not node.level and stage_of(node.module or "") == node.module:
            yield from ((node.lineno, node.module, alias.name) for alias in node.names)


def _is_submodule(package: str, name: str) -> bool:
    return f"{package}.{name}" in MODULES


def test_other_stages_take_the_names_a_door_exports_not_its_modules():
    """``from autograder.run import self_check_cells`` names the door, yet reaches past it to a module the door
    does not export: another stage takes the door's names (exported there for it) instead."""
    past = sorted(
        f"{path.relative_to(PACKAGE.parent)}:{line} imports the module {package}.{name} through the door; "
        f"import the names it uses from {package} (exported there)"
        for module, path in MODULES.items()
        for line, package, name in _names_from_doors(path)
        if stage_of(module) not in (None, "autograder", package)
        and _is_submodule(package, name)
        and name not in door_names(MODULES[package])
    )
    assert not past, "modules taken through another stage's door:\n" + "\n".join(past)


def test_the_code_copied_into_the_kernel_imports_nothing_of_the_harness():
    """The kernel package (its modules import each other and nothing else of the harness) and each lab's
    kernel probe run in the student's kernel; the launcher of the network filter and Landlock runs before it,
    from a copy of its own."""
    launchers = ["autograder.run.sandbox.confinement"]
    package = [m for m in MODULES if stage_of(m) == "autograder.kernel"]
    in_kernel = launchers + package + [m for m in MODULES if m.endswith(".kernel_probe")]
    assert len(package) >= 6
    outside = {m: sorted(n for n in imported(MODULES[m], m) if stage_of(n) != "autograder.kernel") for m in in_kernel}
    assert {m: names for m, names in outside.items() if names} == {}
    assert not any(imported(MODULES[m], m) for m in launchers + [m for m in in_kernel if m.endswith(".kernel_probe")])


def test_the_kernel_packages_door_loads_the_names_it_declares():
    """The kernel package cannot use the harness's doors (it imports nothing else of it): its own list of
    where each name lives is the one its ``TYPE_CHECKING`` block declares."""
    import autograder.kernel as kernel

    declared = door_names(MODULES["autograder.kernel"])
    assert {name: f"autograder.kernel.{home}" for name, home in kernel._HOMES.items()} == {
        name: module for name, (module, _) in declared.items()
    }
    assert all(getattr(kernel, name) is not None for name in declared)


def test_the_walk_finds_what_is_there():
    """The walk itself: it sees imports inside functions and under ``TYPE_CHECKING``."""
    assert "autograder.run" in IMPORTS["autograder.grading.pipeline"]
    assert "autograder.facts" in IMPORTS["autograder.checks.layout"]
    assert "autograder.run.execute" in IMPORTS["autograder.run"]  # a door's names, under TYPE_CHECKING
    assert stage_of("autograder.labs.lab2_three_ways.reference") == "autograder.labs"


MOST_LINES = 400


def test_no_module_is_longer_than_a_reader_holds_at_once():
    """A module past this many lines holds more than one idea: split it by idea rather than join into it."""
    long = sorted(
        f"{path.relative_to(PACKAGE.parent)}: {lines}"
        for path in PACKAGE.rglob("*.py")
        if "labs" not in path.relative_to(PACKAGE).parts and (lines := len(path.read_text().splitlines())) > MOST_LINES
    )
    assert not long, f"modules over {MOST_LINES} lines:\n" + "\n".join(long)
