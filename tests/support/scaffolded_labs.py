"""A labs folder and project root of a test's own, where `autograder new-lab` writes and labs are found."""

from __future__ import annotations

import sys
from pathlib import Path

import autograder.authoring.new_lab
import autograder.lab
import autograder.labs


def use_tmp_labs(monkeypatch, tmp_path: Path) -> Path:
    """Labs are found in ``tmp_path/labs`` (imported as ``autograder.labs.<lab>``), and ``solutions/``,
    ``assignments/`` and ``tests/`` are under ``tmp_path``; the project's own labs are out of view."""
    labs = tmp_path / "labs"
    labs.mkdir()
    monkeypatch.setenv("AUTOGRADER_ROOT", str(tmp_path))
    monkeypatch.setattr(autograder.lab, "LABS_PACKAGE", labs)
    monkeypatch.setattr(autograder.authoring.new_lab, "LABS_PACKAGE", labs)
    monkeypatch.setattr(autograder.labs, "__path__", [str(labs)])
    for name in [m for m in sys.modules if m.startswith("autograder.labs.")]:
        monkeypatch.delitem(sys.modules, name)
    return tmp_path
