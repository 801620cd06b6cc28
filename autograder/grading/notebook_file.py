"""Reading a submitted file as a notebook, with a clear reason when it is not one."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat

MAX_NOTEBOOK_BYTES = 50 * 1024 * 1024


class NotANotebook(ValueError):
    """The file cannot be graded as a notebook; the message says why."""


def read_submission(path: Path) -> nbformat.NotebookNode:
    """The submission as an nbformat 4 notebook (older versions are upgraded)."""
    if not path.is_file():
        raise NotANotebook(f"{path} is not a file")
    if path.stat().st_size > MAX_NOTEBOOK_BYTES:
        raise NotANotebook(f"{path.name} is larger than {MAX_NOTEBOOK_BYTES // 2**20} MiB")
    try:
        raw = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NotANotebook(f"{path.name} is not a notebook: it is not valid JSON ({exc})") from None
    if not isinstance(raw, dict) or "nbformat" not in raw:
        raise NotANotebook(f"{path.name} is not a notebook: it has no 'nbformat' field")
    try:
        nb = nbformat.reads(json.dumps(raw), as_version=4)
    except Exception as exc:  # nbformat raises many kinds for a malformed notebook
        raise NotANotebook(f"{path.name} could not be read as a notebook: {exc}") from None
    if not isinstance(nb.get("cells"), list):
        raise NotANotebook(f"{path.name} has no cells")
    for cell in nb.cells:
        if not isinstance(cell, dict) or cell.get("cell_type") not in ("code", "markdown", "raw"):
            raise NotANotebook(f"{path.name} has a malformed cell")
        if not isinstance(cell.get("source", ""), str):
            raise NotANotebook(f"{path.name} has a cell whose source is not text")
        cell.setdefault("metadata", {})
    return nb
