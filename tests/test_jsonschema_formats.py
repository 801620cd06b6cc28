"""A process that imports the harness imports nbformat without jsonschema's IRI checker (about a second of
Earley parsers built at import), and loses nothing by it: nbformat validates as before, and rfc3987-syntax
can still be imported by whoever asks for it. Each case runs in a fresh interpreter: this one imported
both long ago."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("rfc3987_syntax", reason="jsonschema's IRI checker is not installed here: nothing to leave out")

REPORT = "import json, sys; print(json.dumps({'loaded': 'rfc3987_syntax' in sys.modules}))"


def _run(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_without_the_harness_nbformat_loads_the_iri_checker():
    """What the finder is for: jsonschema, imported by nbformat, loads rfc3987-syntax where it is installed."""
    assert _run("import nbformat\n" + REPORT) == {"loaded": True}


def test_the_harness_imports_nbformat_without_it():
    assert _run("import autograder, nbformat\n" + REPORT) == {"loaded": False}


def test_an_import_of_its_own_still_finds_it():
    code = "import autograder, nbformat, rfc3987_syntax\nassert rfc3987_syntax.is_valid_syntax('iri', 'http://é.fr')\n"
    assert _run(code + REPORT) == {"loaded": True}


def test_nbformat_still_tells_a_valid_notebook_from_an_invalid_one():
    code = (
        "import autograder, nbformat\n"
        "nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('1 + 1')])\n"
        "nbformat.validate(nb)\n"
        "nb.cells[0]['outputs'] = 'not a list'\n"
        "try:\n"
        "    nbformat.validate(nb)\n"
        "except nbformat.ValidationError:\n"
        "    print('{\"refused\": true}')\n"
        "else:\n"
        "    print('{\"refused\": false}')\n"
    )
    assert _run(code) == {"refused": True}
