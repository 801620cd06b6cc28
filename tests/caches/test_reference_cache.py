"""Reference results kept on disk: computed once per machine, read back by later processes, keyed by
code and library versions, never trusted when damaged; ``autograder warm`` and the batch fill it."""

from __future__ import annotations

import inspect
import json
import math
import os
import pickle
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import reference_subjects as subjects

from autograder.caches import reference_cache as rc
from autograder.caches import reference_entry
from autograder.caches.machine_cache import CACHE_DIR_VARIABLE

SUPPORT = Path(__file__).resolve().parents[1] / "support"  # where reference_subjects is
ROOT = SUPPORT.parents[1]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh cache directory and computation log for one test; returns (cache dir, log reader)."""
    folder, log = tmp_path / "cache", tmp_path / "computed.log"
    monkeypatch.setenv(CACHE_DIR_VARIABLE, str(folder))
    monkeypatch.setenv("SUBJECT_LOG", str(log))
    for function in (subjects.table, subjects.jax_result):
        function.cache_clear()
    yield folder, lambda: log.read_text().splitlines() if log.exists() else []
    for function in (subjects.table, subjects.jax_result):
        function.cache_clear()


def _same(a, b) -> bool:
    """Equal in type, structure and every bit (arrays: dtype, shape, bytes; floats: their hex)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float):
        return a.hex() == b.hex()
    if isinstance(a, (np.ndarray, np.generic)):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    return a == b


def _entry_path(*args) -> Path:
    return subjects.table.reference(*args).path


def _run(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SUPPORT), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)


def test_a_second_process_reads_what_the_first_computed(cache):
    _, computed = cache
    first = subjects.table(2)
    assert computed() == ["table(2)"]
    assert subjects.table(2) is first and computed() == ["table(2)"]  # the in-process memo
    done = _run(
        "import json, reference_subjects as s\n"
        "v = s.table(2)\nprint(json.dumps([v['values'].tolist(), v['ratio'], v['label']]))"
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == [first["values"].tolist(), first["ratio"], first["label"]]
    assert computed() == ["table(2)"], f"the second process computed again: {done.stderr[-2000:]}"
    subjects.table.cache_clear()
    assert _same(subjects.table(2), first) and computed() == ["table(2)"]
    subjects.table(3)
    assert computed() == ["table(2)", "table(3)"]  # other arguments, another entry


def test_processes_that_miss_an_entry_at_once_compute_it_once(cache):
    """Three processes ask for a missing entry together: one computes it, the others wait and read it
    (reference_cache.computing_alone); the lock's file is gone afterwards."""
    _, computed = cache
    code = "import reference_subjects as s\nprint(s.slow_table(5).tolist())"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SUPPORT), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    started = [
        subprocess.Popen(
            [sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    outputs = [process.communicate(timeout=120) for process in started]
    assert [process.returncode for process in started] == [0, 0, 0], [err[-2000:] for _, err in outputs]
    assert {out for out, _ in outputs} == {f"{(np.arange(5) / 3).tolist()}\n"}
    assert computed() == ["slow_table(5)"]
    path = subjects.slow_table.reference(5).path
    assert [p.name for p in path.parent.iterdir()] == [path.name]


def test_where_no_lock_can_be_made_the_entry_is_computed_all_the_same(cache, monkeypatch):
    _, computed = cache

    def refused(*args, **kwargs):
        raise PermissionError("read-only file system")

    monkeypatch.setattr(rc, "make_private_dirs", refused)
    assert _same(subjects.table(3), subjects.table.function(3)) and computed() == ["table(3)", "table(3)"]
    assert _entry_path(3).is_file()


def test_entries_live_in_the_configured_directory_privately_and_leave_no_temporary_files(cache):
    folder, _ = cache
    subjects.table(2)
    path = _entry_path(2)
    assert path.is_file() and folder in path.parents
    assert all((d.stat().st_mode & 0o077) == 0 for d in (folder, path.parent))
    assert [p.name for p in path.parent.iterdir()] == [path.name]


def test_a_value_round_trips_exactly(tmp_path):
    value = {
        "f32": np.arange(12, dtype=np.float32).reshape(3, 4) / 3,
        "i16": np.array([-1, 2], np.int16),
        "c64": np.array([1 + 2j], np.complex64),
        "bools": np.array([[True], [False]]),
        "empty": np.zeros((0, 5)),
        "zero_d": np.array(7.5),
        "scalar": np.float32(0.1),
        "np_bool": np.bool_(True),
        "floats": (0.1, -0.0, math.inf, -math.inf, 1e-310),
        "ints": [0, -3, 2**70],
        "text": 'héllo\n"x"',
        "flags": (True, False),
        "none": None,
        "nested": ([(), []], {"inner": ({},)}),
    }
    path, key = tmp_path / "entry.npz", {"test": 1}
    reference_entry.write_entry(path, key, value)
    back = reference_entry.read_entry(path, key)
    assert _same(back, value)
    assert not back["f32"].flags.writeable
    reference_entry.write_entry(path, key, [math.nan])
    assert math.isnan(reference_entry.read_entry(path, key)[0])


def test_results_are_numpy_and_read_only_whether_computed_or_read(cache):
    computed_now = subjects.jax_result()
    subjects.jax_result.cache_clear()
    read_back = subjects.jax_result()
    for value in (computed_now, read_back):
        assert type(value) is np.ndarray and value.dtype == np.float32 and not value.flags.writeable
    assert _same(computed_now, read_back)
    with pytest.raises(ValueError):
        read_back[0] = 1.0


def test_what_cannot_be_stored_or_keyed_is_refused_clearly(cache):
    with pytest.raises(TypeError, match="a set cannot be cached"):
        subjects.unstorable()
    with pytest.raises(TypeError, match="found a list"):
        subjects.table([2])
    with pytest.raises(TypeError, match="string keys"):
        reference_entry.encode({1: 2})


@pytest.mark.parametrize("library", ["jax", "jaxlib", "numpy"])
def test_another_library_version_is_a_miss(cache, monkeypatch, library):
    _, computed = cache
    first = subjects.table(2)
    subjects.table.cache_clear()
    with monkeypatch.context() as patch:
        patch.setattr(__import__(library), "__version__", "0.0.1")
        assert _same(subjects.table(2), first)
        assert computed() == ["table(2)", "table(2)"]
    subjects.table.cache_clear()
    subjects.table(2)  # the original version's entry is still there
    assert computed() == ["table(2)", "table(2)"]


def test_changed_reference_code_is_a_miss(cache, tmp_path, monkeypatch):
    _, computed = cache
    module = tmp_path / "edited_reference.py"
    module.write_text(
        "import reference_subjects\nfrom autograder.caches.reference_cache import cached_reference\n\n"
        "@cached_reference\ndef value():\n    reference_subjects._log('value()')\n    return 1.5\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "edited_reference", raising=False)
    import edited_reference

    assert edited_reference.value() == 1.5
    edited_reference.value.cache_clear()
    assert edited_reference.value() == 1.5 and computed() == ["value()"]
    module.write_text(module.read_text() + "# edited\n")
    rc.source_hash.cache_clear()
    edited_reference.value.cache_clear()
    assert edited_reference.value() == 1.5 and computed() == ["value()", "value()"]
    monkeypatch.delitem(sys.modules, "edited_reference")


def test_the_code_hash_covers_the_checks_a_reference_imports():
    from autograder.labs.lab1_distributed_arrays import reference

    files = rc.source_files(reference.__name__)
    imported = {"autograder.checks", "autograder.checks.program", "autograder.facts.schema"}
    assert {reference.__name__, *imported} <= set(files)
    assert "autograder.grading.pytest_plugin" not in files  # only what the reference imports
    key = reference.rng_communicates.reference(True).key
    assert key["code"] == rc.source_hash(reference.__name__) and key["arguments"] == [True]
    assert set(key["environment"]) >= {"jax", "jaxlib", "numpy", "platform", "devices", "settings"}


class _Planted:
    """A pickle that creates a file when it is unpickled."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def _rewrite_npz(path: Path, change) -> None:
    with np.load(path, allow_pickle=False) as stored:
        members = {name: stored[name] for name in stored.files}
    change(members)
    with open(path, "wb") as handle:
        np.savez(handle, **members)


def _edit_description(members):
    document = json.loads(members[reference_entry.STRUCTURE_MEMBER].tobytes())
    document["value"]["dict"][1][1] = "edited"  # the label, without recomputing the checksum
    members[reference_entry.STRUCTURE_MEMBER] = np.frombuffer(json.dumps(document).encode(), np.uint8)


def _edit_description_and_checksum(members):
    document = json.loads(members[reference_entry.STRUCTURE_MEMBER].tobytes())
    document["arrays"][0]["shape"] = [3, 2]
    document.pop("sha256")
    document["sha256"] = reference_entry._document_digest(document)
    members[reference_entry.STRUCTURE_MEMBER] = np.frombuffer(json.dumps(document).encode(), np.uint8)


def _corrupt(kind: str, path: Path, marker: Path) -> None:
    if kind == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "edited description":
        _rewrite_npz(path, _edit_description)
    elif kind == "description edited with its checksum":
        _rewrite_npz(path, _edit_description_and_checksum)
    elif kind == "array changed":
        _rewrite_npz(path, lambda m: m.update(a0=m["a0"] * 2))
    elif kind == "array missing":
        _rewrite_npz(path, lambda m: m.pop("a0"))
    elif kind == "pickled array inside":
        _rewrite_npz(path, lambda m: m.update(a0=np.array([_Planted(marker)], dtype=object)))
    elif kind == "pickle planted":
        path.write_bytes(pickle.dumps(_Planted(marker)))
    elif kind == "npy planted":
        with open(path, "wb") as handle:
            np.save(handle, np.arange(6, dtype=np.float32).reshape(2, 3))
    elif kind == "entry of another key":
        path.write_bytes(_entry_path(3).read_bytes())
    elif kind == "zip without a description":
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("a0.npy", b"not an array")
    else:
        raise AssertionError(kind)


@pytest.mark.parametrize(
    "kind",
    [
        "truncated",
        "empty",
        "edited description",
        "description edited with its checksum",
        "array changed",
        "array missing",
        "pickled array inside",
        "pickle planted",
        "npy planted",
        "entry of another key",
        "zip without a description",
    ],
)
def test_a_damaged_entry_is_recomputed_and_rewritten_never_trusted(cache, tmp_path, kind):
    _, computed = cache
    expected = subjects.table(2)
    subjects.table(3)
    marker = tmp_path / "unpickled"
    _corrupt(kind, _entry_path(2), marker)
    subjects.table.cache_clear()
    assert _same(subjects.table(2), expected)
    assert computed() == ["table(2)", "table(3)", "table(2)"]
    assert not marker.exists(), "the cache unpickled something"
    subjects.table.cache_clear()
    assert _same(subjects.table(2), expected) and len(computed()) == 3  # rewritten, valid again
    assert subjects.table.stored(2)


def test_an_unwritable_cache_only_costs_the_computation(cache, tmp_path, monkeypatch):
    _, computed = cache
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv(CACHE_DIR_VARIABLE, str(blocker))
    assert subjects.table(2)["label"] == "t" and computed() == ["table(2)"]
    assert not subjects.table.stored(2)


def test_the_default_directory_is_the_user_cache_dir(monkeypatch, tmp_path):
    monkeypatch.delenv(CACHE_DIR_VARIABLE)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert rc.references_dir() == tmp_path / "autograder" / "references"


def test_the_suite_uses_a_temporary_cache():
    assert Path(os.environ[CACHE_DIR_VARIABLE]).resolve() != (Path.home() / ".cache" / "autograder").resolve()


def _warm(cache_dir: Path, *labs: str) -> subprocess.CompletedProcess:
    env = {**os.environ, CACHE_DIR_VARIABLE: str(cache_dir)}
    return subprocess.run(
        [sys.executable, "-m", "autograder", "warm", *labs], env=env, capture_output=True, text=True, timeout=900
    )


def test_warm_fills_the_cache_and_a_second_run_finds_everything_cached(tmp_path):
    first = _warm(tmp_path, "lab2_three_ways")
    assert first.returncode == 0, first.stderr[-2000:]
    assert re.search(
        r"lab2_three_ways: 4 computed, 0 already cached \([\d.]+ s\): array_a\(\), layer_data\(\), "
        r"regression_setup\(\), trained_params\(\)",
        first.stdout,
    ), first.stdout
    entries = list((tmp_path / "references" / "autograder.labs.lab2_three_ways.reference").glob("*.npz"))
    assert len(entries) == 4
    second = _warm(tmp_path, "lab2_three_ways")
    assert second.returncode == 0, second.stderr[-2000:]
    assert re.search(r"lab2_three_ways: 0 computed, 4 already cached", second.stdout), second.stdout
    unknown = _warm(tmp_path, "lab9")
    assert unknown.returncode == 2 and "unknown lab 'lab9'" in unknown.stderr


def test_every_labs_cached_calls_are_cached_references():
    from autograder.caches.reference_cache import CachedReference
    from autograder.caches.warm import cached_calls, describe
    from autograder.lab import lab_ids, load_lab

    for lab_id in lab_ids():
        calls = cached_calls(lab_id)
        assert calls, lab_id
        names = [describe(call) for call in calls]
        assert not any("times" in name for name in names), "timings are measured per grade, never cached"
        # a reference left out is stored by the first grading that needs it: an image's cache (Gradescope's)
        # is then not warm, and a read-only one recomputes it in every grading
        module = load_lab(lab_id).reference
        without_arguments = [
            name
            for name, value in vars(module).items()
            if isinstance(value, CachedReference)
            and value.function.__module__ == module.__name__
            and not inspect.signature(value.function).parameters
        ]
        assert [name for name in without_arguments if f"{name}()" not in names] == [], f"{lab_id}: not in CACHED_CALLS"
    assert "rng_communicates(False)" in [describe(c) for c in cached_calls("lab1_distributed_arrays")]


def test_batch_warms_the_lab_on_a_worker_before_grading(tmp_path):
    submissions = tmp_path / "class"
    submissions.mkdir()
    (submissions / "ada.ipynb").write_text("{ not a notebook")
    env = {**os.environ, CACHE_DIR_VARIABLE: str(tmp_path / "cache")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "batch",
            str(submissions),
            "--lab",
            "lab3_fsdp_tp",
            "--out",
            str(tmp_path / "out"),
            "--workers",
            "1",
            "--no-sandbox",
            "--no-similarity",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "references: lab3_fsdp_tp: 3 computed, 0 already cached" in done.stdout, done.stdout
    entries = list((tmp_path / "cache" / "references" / "autograder.labs.lab3_fsdp_tp.reference").glob("*.npz"))
    assert len(entries) == 3
    assert "not a notebook" in (tmp_path / "out" / "grades.csv").read_text()
