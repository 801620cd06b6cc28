"""The map of the repository in docs/how-grading-works.md names every folder and module of the package.

A module added, renamed or removed without its line in the map changing fails here, naming it, so the
one map a newcomer reads does not drift from the code. Each line of the map is ``path  description``,
the description wrapping onto lines indented under it; a folder's description ends with its modules,
after its last colon: ``summary: name (what it is), name, name and name (what they are)``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "autograder"
DOC = ROOT / "docs" / "how-grading-works.md"
HEADING = "## Layout of the repository"
LABS = "autograder/labs/"
NAME = re.compile(r"[A-Za-z_<>][\w<>]*(\.py|\.toml)?")


@dataclass(frozen=True)
class Entry:
    path: str
    description: str

    @property
    def names(self) -> list[str]:
        """The names listed after the description's last colon outside parentheses (none without one)."""
        colons = [i for i, depth in _depths(self.description) if self.description[i] == ":" and depth == 0]
        if not colons:
            return []
        items = _split_outside_parentheses(self.description[colons[-1] + 1 :])
        return [item.split("(", 1)[0].strip() for item in items]


def _depths(text: str) -> list[tuple[int, int]]:
    """Each character's index in ``text`` with the depth of parentheses it is at."""
    depth, out = 0, []
    for i, char in enumerate(text):
        depth -= char == ")"
        out.append((i, depth))
        depth += char == "("
    return out


def _split_outside_parentheses(text: str) -> list[str]:
    """``text`` cut at each comma, semicolon and ``and`` outside parentheses."""
    masked = "".join(char if depth == 0 else "#" for (_, depth), char in zip(_depths(text), text))
    cuts = [(m.start(), m.end()) for m in re.finditer(r"[,;]|\band\b", masked)]
    starts = [0] + [end for _, end in cuts]
    ends = [start for start, _ in cuts] + [len(text)]
    return [text[a:b].strip() for a, b in zip(starts, ends)]


def read_map(markdown: str) -> list[Entry]:
    """The entries of the first code block under the layout heading: a line that starts in its first
    column opens an entry (its path, then its description); an indented line continues the description."""
    _, found, section = markdown.partition(f"\n{HEADING}\n")
    assert found, f"{DOC.name} has no section {HEADING!r}"
    section = re.split(r"^#{1,2} ", section, flags=re.M)[0]
    block = re.search(r"^```[^\n]*\n(.*?)^```", section, flags=re.S | re.M)
    assert block, f"the section {HEADING!r} of {DOC.name} has no code block"
    entries: list[list[str]] = []
    for line in block.group(1).splitlines():
        if not line.strip():
            continue
        if line[0].isspace():
            assert entries, f"the map opens with an indented line: {line!r}"
            entries[-1][1] += " " + line.strip()
        else:
            path, _, description = line.partition(" ")
            entries.append([path, description.strip()])
    return [Entry(path, description) for path, description in entries]


MAP = read_map(DOC.read_text(encoding="utf-8"))
BY_PATH = {entry.path: entry for entry in MAP}


def _folder(path: Path) -> str:
    return path.relative_to(ROOT).as_posix() + "/"


# The package's folders (its stages and sub-packages) but not the bundled labs' own packages, which the
# labs' line describes for every lab at once; and each folder's modules, by their stems.
FOLDERS = sorted(
    _folder(init.parent) for init in PACKAGE.rglob("__init__.py") if not _folder(init.parent.parent).startswith(LABS)
)
MODULES = {folder: sorted(p.stem for p in (ROOT / folder).glob("*.py") if p.stem != "__init__") for folder in FOLDERS}
# A lab's graders beyond test_<lab>.py are test_<lab>_<part>.py, whatever each lab names its parts.
PART = re.compile(r"^test_<lab>_\w+\.py$")
LAB_FILES = sorted(
    {
        PART.sub("test_<lab>_<part>.py", p.name.replace(lab.name, "<lab>"))
        for lab in (PACKAGE / "labs").iterdir()
        if (lab / "__init__.py").is_file()
        for p in lab.iterdir()
        if p.is_file() and p.suffix in (".py", ".toml")
    }
)


def _module_entry(folder: str, stem: str) -> str:
    """The path of a module's own line in the map (a module of the package's top may have one)."""
    return f"{folder}{stem}.py"


def test_the_map_is_read_as_it_wraps():
    entries = read_map(
        f"x\n\n{HEADING}\n\n```\nautograder/run/  a run: plan (the cells, in\n"
        "                 tasks), sandbox and\n                 limits\nbench/  benchmarks\n```\n## Next\n"
    )
    assert [e.path for e in entries] == ["autograder/run/", "bench/"]
    assert entries[0].names == ["plan", "sandbox", "limits"]
    assert entries[1].names == []


def test_every_folder_of_the_package_has_a_line():
    missing = [folder for folder in FOLDERS if folder not in BY_PATH]
    assert not missing, f"folders of the package with no line in the map ({DOC.name}): {missing}"


def test_every_module_is_named_in_its_folders_line():
    missing = []
    for folder, stems in MODULES.items():
        listed = {name.removesuffix(".py") for name in BY_PATH[folder].names} if folder in BY_PATH else set()
        missing += [
            f"{folder}{stem}.py" for stem in stems if stem not in listed and _module_entry(folder, stem) not in BY_PATH
        ]
    assert not missing, (
        f"modules not named in their folder's line of the map ({DOC.name}; by their stem, with a few words on"
        f" what each is): {missing}"
    )


def test_the_map_names_nothing_that_is_gone():
    gone = [f"line {entry.path}" for entry in MAP if not (ROOT / entry.path).exists()]
    for folder, stems in MODULES.items():
        if folder in BY_PATH and folder != LABS:
            named = {name.removesuffix(".py") for name in BY_PATH[folder].names if NAME.fullmatch(name)}
            gone += [f"{folder}{stem}.py" for stem in sorted(named - set(stems) - {"__init__"})]
    assert not gone, f"the map ({DOC.name}) names what is no longer there: {gone}"


def test_each_folders_line_lists_plain_names():
    """A folder's line ends with its names, each followed by what it is in parentheses or by nothing: a
    phrase in the list would hide a module's name from the checks above."""
    unbalanced = [
        entry.path
        for entry in MAP
        if min(depth for _, depth in _depths(entry.description + "()")) < 0
        or entry.description.count("(") != entry.description.count(")")
    ]
    assert not unbalanced, f"lines of the map ({DOC.name}) whose parentheses do not pair up: {unbalanced}"
    unreadable = [
        f"{entry.path}: {name!r}"
        for entry in MAP
        if entry.path in FOLDERS
        for name in entry.names
        if not NAME.fullmatch(name)
    ]
    assert not unreadable, f"not a name, in the map's list of a folder ({DOC.name}): {unreadable}"
    twice = [
        f"{folder}{stem}.py"
        for folder, stems in MODULES.items()
        for stem in stems
        if folder in BY_PATH
        and stem in {n.removesuffix(".py") for n in BY_PATH[folder].names}
        and _module_entry(folder, stem) in BY_PATH
    ]
    assert not twice, f"modules with a line of their own and named in their folder's line too: {twice}"


def test_the_labs_line_names_each_file_a_lab_has():
    """The bundled labs are described once for every lab: ``test_<lab>.py`` stands for each lab's graders."""
    named = set(BY_PATH[LABS].names)
    missing = sorted(set(LAB_FILES) - named - {"__init__.py"})
    gone = sorted(named - set(LAB_FILES))
    assert not missing, f"files of the bundled labs the map's line {LABS} does not name: {missing}"
    assert not gone, f"files the map's line {LABS} names that no bundled lab has: {gone}"


def test_the_map_is_the_only_one():
    """Other documents point to the map rather than copy it."""
    entry_line = re.compile(r"^autograder/\S*\s{2,}\S", flags=re.M)
    copies = [
        doc.relative_to(ROOT).as_posix()
        for doc in sorted([*ROOT.glob("*.md"), *(ROOT / "docs").glob("*.md"), *(ROOT / "bench").glob("*.md")])
        if doc != DOC and entry_line.search(doc.read_text(encoding="utf-8"))
    ]
    assert not copies, f"copies of the map ({DOC.name}#layout-of-the-repository) in: {copies}"


def _doors() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("__init__.py") if p.parent != PACKAGE and LABS not in f"{p.parent}/")


def test_a_doors_docstring_names_all_its_modules_or_leaves_them_to_the_map():
    """A door's docstring is the second place a reader meets a stage's modules: it either names every one
    of them, or names none and points to the map, so it cannot drift into a partial list."""
    partial = {}
    for door in _doors():
        doc = (ast.get_docstring(ast.parse(door.read_text())) or "").replace("\n", " ")
        modules = sorted(p.stem for p in door.parent.glob("*.py") if p.name != "__init__.py")
        named = [m for m in modules if re.search(rf"``{m}``|\b{m}\.py\b", doc)]
        if named != modules and (named or "how-grading-works.md" not in doc):
            partial[str(door.relative_to(ROOT))] = sorted(set(modules) - set(named))
    assert not partial, f"doors naming some of their modules, not all, nor pointing to the map: {partial}"
