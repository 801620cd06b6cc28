"""The kernel recorder's records, read back through the facts validator: round trips, and forged files
refused; and the recorder beside the kernel's housekeeping, both loaded as the kernel loads them; and a lab's
own probe, run by the recorder."""

import importlib.util
import json
import sys
import threading
import time
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from autograder.checks import MeshSpec
from autograder.facts.capture import Call, Input, TaskCapture, build_argument
from autograder.facts.fact_reader import load_task_facts
from autograder.facts.schema import FactsError
from autograder.kernel import housekeeping as kernel_housekeeping
from autograder.kernel import recorder
from autograder.run.kernels.harness_code import KERNEL_PACKAGE, copy_kernel_package


def _capture(tmp_path, namespace, capture, loaded_recorder=recorder):
    out = tmp_path / capture.task
    loaded_recorder.record_task_facts(capture.manifest(str(out), 7), namespace)
    return load_task_facts(out, capture.task)


def _in_kernel(tmp_path, monkeypatch):
    """The kernel package's housekeeping and recorder as the kernel loads them: the package copied into a
    modules folder and imported under its name there; its modules are taken out of ``sys.modules`` after
    the test."""
    modules = tmp_path / "modules"
    modules.mkdir()
    copy_kernel_package(modules)
    monkeypatch.syspath_prepend(str(modules))
    before = set(sys.modules)
    loaded = [importlib.import_module(f"{KERNEL_PACKAGE}.{name}") for name in ("housekeeping", "recorder")]
    for name in set(sys.modules) - before:
        monkeypatch.setitem(sys.modules, name, sys.modules.pop(name))  # absent before: removed after
    return loaded


def test_arrays_specs_trees_and_values_round_trip(tmp_path):
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    a = jax.device_put(jnp.arange(32.0).reshape(4, 8), NamedSharding(mesh, P("x", None)))
    namespace = {
        "a": a,
        "spec": P("x", ("y",)),
        "params": [(np.ones(3), 2.0)],
        "n": np.float64(1.5),
        "flag": True,
        "f": lambda v: v,
    }
    facts = _capture(tmp_path, namespace, TaskCapture("t1", names=("a", "spec", "params", "n", "flag", "f", "gone")))
    fact = facts.get("a")
    assert fact.kind == "array" and fact.shape == (4, 8) and fact.dtype == "float32"
    np.testing.assert_array_equal(fact.values, np.arange(32.0).reshape(4, 8))
    assert fact.sharding.mesh.axis_names == ("x", "y") and fact.sharding.mesh.axis_types == ("Explicit", "Explicit")
    assert fact.sharding.device_indices[0] == ((0, 2), (0, 8))
    assert fact.typeof.text == "float32[4@x,8]" and fact.typeof.sharded_axes == (("x",), None)
    assert facts.get("spec").spec == (("x",), ("y",))
    params = facts.get("params")
    assert params.kind == "tree" and params.paths == ("[0][0]", "[0][1]")
    assert params.leaves[1].value == 2.0
    assert facts.get("n").value == 1.5 and facts.get("flag").value is True
    assert facts.get("f").kind == "function"
    assert facts.get("gone").is_missing


def test_an_array_put_on_a_device_is_committed_one_left_there_by_default_is_not(tmp_path):
    namespace = {
        "put": jax.device_put(jnp.ones(3), jax.devices()[0]),
        "left": jnp.asarray(np.ones(3)),
        "host": np.ones(3),
    }
    facts = _capture(tmp_path, namespace, TaskCapture("t1", names=("put", "left", "host")))
    assert facts.get("put").committed is True
    assert facts.get("left").committed is False
    assert facts.get("host").committed is None


def test_a_patched_typeof_does_not_change_what_is_recorded(tmp_path, monkeypatch):
    monkeypatch.setattr(jax, "typeof", lambda x: "float32[128@x,2]")
    facts = _capture(tmp_path, {"a": jnp.ones((2, 2))}, TaskCapture("t1", names=("a",)))
    assert facts.get("a").typeof.text == "float32[2,2]"


def test_calls_run_on_the_graders_inputs_with_stdout_and_hlo(tmp_path):
    mesh = MeshSpec((8,), ("x",), "auto")

    def double(v):
        print("tracing", jax.typeof(v))
        return v * 2

    call = Call("double", "double", args=(Input((16, 4), key=3, mesh=mesh, spec=("x", None)),), hlo=True)
    capture = TaskCapture("t2", calls=(call,))
    facts = _capture(tmp_path, {"double": jax.jit(double)}, capture)
    result = facts.calls["double"]
    assert result.error is None and "tracing float32[16,4]" in result.stdout
    assert result.output.shape == (16, 4)
    assert "multiply" in result.hlo
    # the grader rebuilds the very input the kernel built, from the same seed
    np.testing.assert_allclose(result.output.values, 2 * np.asarray(call.args[0].build(7)))
    assert not np.allclose(np.asarray(call.args[0].build(8)), np.asarray(call.args[0].build(7)))


def test_a_call_can_pass_a_tuple_of_inputs_as_one_argument(tmp_path):
    """A model's ``params = (W, b)`` is one argument: the kernel builds the tuple, and the grader rebuilds
    the very same tuple from the same seed."""
    params = (Input((4, 3), key=1), Input((3,), key=2))
    call = Call("layer", "layer", args=(params, Input((5, 4), key=3)))

    def layer(params, x):
        weights, bias = params
        return x @ weights + bias

    facts = _capture(tmp_path, {"layer": layer}, TaskCapture("t3", calls=(call,)))
    result = facts.calls["layer"]
    assert result.error is None and result.output.shape == (5, 3)
    (weights, bias), x = (build_argument(a, 7) for a in call.args)
    np.testing.assert_allclose(result.output.values, x @ weights + bias, rtol=1e-5)


def test_a_call_of_a_missing_or_raising_function_is_recorded(tmp_path):
    def broken(v):
        raise ValueError("nope")

    capture = TaskCapture("t1", calls=(Call("gone", "gone", args=()), Call("broken", "broken", args=(Input((2,)),))))
    facts = _capture(tmp_path, {"broken": broken}, capture)
    assert "not defined" in facts.calls["gone"].error
    assert facts.calls["broken"].error == "ValueError: nope"


def test_a_call_can_name_a_function_held_in_a_dict_the_task_binds(tmp_path):
    """``fns['key']`` calls an entry of a plain dict; a missing key, or a mapping of the student's own
    (whose lookup would run their code), is recorded as not bound."""

    class Lookup(dict):
        def get(self, key, default=None):
            raise AssertionError("the student's lookup ran")

    calls = tuple(
        Call(id, spec, args=(Input((2,)),))
        for id, spec in (("double", "fns['double']"), ("gone", 'fns["gone"]'), ("own", "mine['double']"))
    )
    namespace = {"fns": {"double": lambda v: v * 2}, "mine": Lookup(double=lambda v: v)}
    facts = _capture(tmp_path, namespace, TaskCapture("t4", calls=calls))
    assert facts.calls["double"].error is None
    np.testing.assert_allclose(facts.calls["double"].output.values, 2 * np.asarray(calls[0].args[0].build(7)))
    assert facts.calls["gone"].error == 'KeyError: fns["gone"] is not bound: no dict `fns` with that key'
    assert "not bound" in facts.calls["own"].error


def _forge(tmp_path, facts, arrays=None):
    out = tmp_path / "t1"
    out.mkdir(exist_ok=True)
    for name, array in (arrays or {}).items():
        np.save(out / name, array, allow_pickle=True)
    (out / "facts.json").write_text(json.dumps(facts) if not isinstance(facts, str) else facts)
    return out


def _array_fact(values="v.npy", shape=(2,)):
    return {
        "task": "t1",
        "names": {
            "a": {
                "kind": "array",
                "type": "jax.Array",
                "shape": list(shape),
                "dtype": "float32",
                "values": values,
                "sharding": None,
                "typeof": None,
            }
        },
    }


@pytest.mark.parametrize(
    "facts, arrays, words",
    [
        ("{not json", None, "not valid JSON"),
        ({"task": "t2", "names": {}}, None, "not for t1"),
        (_array_fact("../../outside.npy"), None, "outside the facts directory"),
        (_array_fact(), {"v.npy": np.array([{"evil": 1}, 2], dtype=object)}, "cannot read"),
        (_array_fact(shape=(3,)), {"v.npy": np.ones(2, np.float32)}, "shape"),
        ({"task": "t1", "names": {"a": {"kind": "value", "value": {"nested": 1}}}}, None, "primitive"),
        ({"task": "t1", "names": {"a": {"kind": "pickle"}}}, None, "unknown fact kind"),
    ],
)
def test_forged_or_malformed_facts_are_refused(tmp_path, facts, arrays, words):
    with pytest.raises(FactsError, match=words):
        load_task_facts(_forge(tmp_path, facts, arrays), "t1")


def test_missing_facts_are_refused(tmp_path):
    with pytest.raises(FactsError, match="no facts"):
        load_task_facts(tmp_path, "t1")


def test_a_labs_own_probe_records_what_it_returns(tmp_path, monkeypatch):
    from autograder.facts.capture import Probe

    module = types.ModuleType(recorder.LAB_PROBE_MODULE)

    def build(namespace, seed, params):
        print("building")
        return {"out": namespace["Cls"]()(params["n"]), "seed": seed}

    def broken(namespace, seed, params):
        raise RuntimeError("student class failed")

    module.build, module.broken = build, broken
    monkeypatch.setitem(sys.modules, recorder.LAB_PROBE_MODULE, module)
    capture = TaskCapture("t6", probes=(Probe("b", "build", (("n", 3),)), Probe("x", "broken")))
    facts = _capture(tmp_path, {"Cls": lambda: lambda n: np.arange(n)}, capture)
    assert facts.probes["b"].error is None and facts.probes["b"].stdout == "building\n"
    np.testing.assert_array_equal(facts.probes["b"].values["out"].values, np.arange(3))
    assert facts.probes["b"].values["seed"].value == 7
    assert facts.probes["x"].error == "RuntimeError: student class failed"


def test_the_kernels_own_output_cut_is_recorded_with_the_facts(tmp_path, monkeypatch):
    housekeeping, kernel_recorder = _in_kernel(tmp_path, monkeypatch)
    assert _capture(tmp_path, {}, TaskCapture("t1"), kernel_recorder).output_cut is False
    monkeypatch.setitem(housekeeping._output, "cut", True)
    assert _capture(tmp_path, {}, TaskCapture("t2"), kernel_recorder).output_cut is True
    assert _capture(tmp_path, {}, TaskCapture("t3")).output_cut is False  # the package's recorder: no cap here


def test_an_output_cut_that_is_not_a_bool_is_refused(tmp_path):
    (tmp_path / "t1").mkdir()
    (tmp_path / "t1" / "facts.json").write_text(json.dumps({"task": "t1", "names": {}, "output_cut": "yes"}))
    with pytest.raises(FactsError, match="output_cut"):
        load_task_facts(tmp_path / "t1", "t1")


def _program_of(tmp_path, function, spec=("x", None)):
    mesh = MeshSpec((8,), ("x",), "auto")
    capture = TaskCapture("t1", calls=(Call("fn", "fn", args=(Input((16, 8), mesh=mesh, spec=spec),)),))
    result = _capture(tmp_path, {"fn": function}, capture).calls["fn"]
    assert result.error is None, result.error
    return result.program


def test_the_program_says_whether_a_function_is_jitted(tmp_path):
    import functools

    def plain(v):
        return jax.lax.with_sharding_constraint(v + 1, NamedSharding(MeshSpec((8,), ("x",)).build(), P()))

    jitted = jax.jit(plain)
    assert not _program_of(tmp_path, plain).is_jitted
    assert _program_of(tmp_path, plain).primitives >= {"add", "sharding_constraint"}
    for spelled in (jitted, functools.partial(jax.jit(lambda v, k: v + k), k=1), lambda v: jitted(v)):
        program = _program_of(tmp_path, spelled)
        assert program.is_jitted and program.top == ("jit",)
    assert _program_of(tmp_path, jitted).jit_object
    assert not _program_of(tmp_path, lambda v: jitted(v) * 2).is_jitted  # work outside the compiled call


def test_the_program_records_shard_map_and_the_shardings_given_to_jit(tmp_path):
    mesh = MeshSpec((8,), ("x",)).build()
    mapped = jax.shard_map(lambda b: b * 2, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    program = _program_of(tmp_path, mapped)
    assert "shard_map" in program.primitives and not program.is_jitted and program.in_shardings is None
    program = _program_of(tmp_path, jax.jit(mapped))
    assert program.is_jitted and "shard_map" in program.primitives
    assert program.in_shardings == (None,) and program.out_shardings == (None,)
    given = jax.jit(mapped, in_shardings=NamedSharding(mesh, P("x")), out_shardings=NamedSharding(mesh, P(None)))
    program = _program_of(tmp_path, given)
    (into,), (out,) = program.in_shardings, program.out_shardings
    assert into.device_indices[1] == ((2, 4), (0, 8)) and out.device_indices[1] == ((0, 16), (0, 8))


def test_a_forged_program_record_is_refused(tmp_path):
    call = {"output": {"kind": "value", "type": "int", "value": 1}, "program": {"jit_object": "yes"}}
    with pytest.raises(FactsError, match="jit_object"):
        load_task_facts(_forge(tmp_path, {"task": "t1", "calls": {"f": call}}), "t1")


def _lab_probe_with(monkeypatch, **functions):
    module = types.ModuleType(recorder.LAB_PROBE_MODULE)
    for name, function in functions.items():
        setattr(module, name, function)
    monkeypatch.setitem(sys.modules, recorder.LAB_PROBE_MODULE, module)
    monkeypatch.setitem(kernel_housekeeping._warm_up, "thread", None)


def test_a_lab_probe_waits_for_the_warm_up_that_started_with_the_kernel(tmp_path, monkeypatch):
    import threading

    from autograder.facts.capture import Probe

    release, events = threading.Event(), []

    def warm_up():
        release.wait(10)
        events.append("warmed")

    def build(namespace, seed, params):
        events.append("probed")
        return {}

    _lab_probe_with(monkeypatch, warm_up=warm_up, build=build)
    housekeeping, kernel_recorder = _in_kernel(tmp_path, monkeypatch)
    housekeeping.start_warm_up()  # returns at once: the warm-up runs on its own thread
    assert housekeeping._warm_up["thread"].is_alive() and events == []
    threading.Timer(0.3, release.set).start()
    _capture(tmp_path, {}, TaskCapture("t6", probes=(Probe("b", "build"),)), kernel_recorder)
    assert events == ["warmed", "probed"]


def test_a_failing_warm_up_is_ignored_and_no_warm_up_is_no_wait(monkeypatch):
    def warm_up():
        raise RuntimeError("the student broke jax.random")

    _lab_probe_with(monkeypatch, warm_up=warm_up)
    kernel_housekeeping.start_warm_up()
    kernel_housekeeping.wait_for_warm_up(10)
    assert not kernel_housekeeping._warm_up["thread"].is_alive()

    _lab_probe_with(monkeypatch)  # a lab probe without warm_up
    kernel_housekeeping.start_warm_up()
    assert kernel_housekeeping._warm_up["thread"] is None
    kernel_housekeeping.wait_for_warm_up(0)


def test_the_warm_up_marks_its_end_for_the_harness_and_no_warm_up_marks_it_at_once(tmp_path, monkeypatch):
    """The harness holds other gradings' timed tasks off until the file appears (run/kernels/lifecycle.py)."""
    release = threading.Event()
    _lab_probe_with(monkeypatch, warm_up=lambda: release.wait(10))
    ended = tmp_path / "warm-up-ended"
    kernel_housekeeping.start_warm_up(str(ended))
    time.sleep(0.2)
    assert not ended.exists()
    release.set()
    kernel_housekeeping.wait_for_warm_up(10)
    assert ended.exists()

    _lab_probe_with(monkeypatch, warm_up=lambda: 1 / 0)  # a failing warm-up has ended too
    failed = tmp_path / "failed-ended"
    kernel_housekeeping.start_warm_up(str(failed))
    kernel_housekeeping.wait_for_warm_up(10)
    assert failed.exists()

    _lab_probe_with(monkeypatch)  # a lab probe without warm_up
    none = tmp_path / "none-ended"
    kernel_housekeeping.start_warm_up(str(none))
    assert none.exists()


def test_equal_values_are_written_once_per_task_and_read_back_for_each_name(tmp_path):
    """A task that lays one array out several ways writes its values once; different values (even ones
    that begin alike), dtypes or shapes get files of their own."""
    mesh = MeshSpec((2, 4), ("x", "y")).build()
    x = np.arange(64.0, dtype=np.float32).reshape(8, 8)
    namespace = {
        "rows": jax.device_put(x, NamedSharding(mesh, P("x"))),
        "cols": jax.device_put(x, NamedSharding(mesh, P(None, "y"))),
        "plain": x.copy(),
        "other": x + 1,
        "as_int": x.astype(np.int32),
        "flat": x.reshape(64),
        "last_differs": np.where(np.arange(64).reshape(8, 8) == 63, -1, x).astype(np.float32),
    }
    names = tuple(namespace)
    facts = _capture(tmp_path, namespace, TaskCapture("t1", names=names))
    assert sorted(p.name for p in (tmp_path / "t1").glob("*.npy")) == [f"array{i}.npy" for i in range(1, 6)]
    for name in ("rows", "cols", "plain"):
        np.testing.assert_array_equal(facts.get(name).values, x)
    np.testing.assert_array_equal(facts.get("other").values, x + 1)
    assert facts.get("last_differs").values[7, 7] == -1 and facts.get("last_differs").values[0, 0] == x[0, 0]
    assert facts.get("as_int").values.dtype == np.int32 and facts.get("flat").values.shape == (64,)
    assert facts.get("rows").sharding.spec != facts.get("cols").sharding.spec
