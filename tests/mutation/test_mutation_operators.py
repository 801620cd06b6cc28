"""The mutation operators on small sources, without running any: each makes the change it names, on answer
lines alone, keeping the rest of the source as it was; the mutants of a source are the same every time."""

from __future__ import annotations

import textwrap

import libcst
import nbformat
import pytest

from autograder.lab import load_lab
from autograder.mutation.mutants import lab_mutants, mutant_id, submission
from autograder.mutation.source_mutants import answer_lines, mutate


def _mutants(source: str, operator: str) -> list[str]:
    source = textwrap.dedent(source)
    return [m.source for m in mutate(source, set(range(1, source.count("\n") + 2)), (operator,))]


def _changed_lines(source: str, operator: str) -> list[str]:
    """Each mutant's lines that differ from the source, joined."""
    source = textwrap.dedent(source)
    return [
        " | ".join(line for line in m.splitlines() if line not in source.splitlines())
        for m in _mutants(source, operator)
    ]


def test_a_jit_call_or_decorator_is_dropped():
    assert _changed_lines("f = jax.jit(jax.shard_map(g, mesh=m))\n", "jit") == ["f = jax.shard_map(g, mesh=m)"]
    assert _mutants("@jax.jit\ndef f(x):\n    return x\n", "jit") == ["def f(x):\n    return x\n"]
    assert _mutants("@nnx.jit\ndef f(x):\n    return x\n", "jit") == ["def f(x):\n    return x\n"]


def test_a_partition_spec_entry_is_swapped_dropped_or_replaced():
    changed = _changed_lines("s = NamedSharding(mesh, P('a', None))\nt = P(None, 'b')\n", "spec")
    assert changed == [
        "s = NamedSharding(mesh, P(None, 'a'))",
        "s = NamedSharding(mesh, P(None))",
        "s = NamedSharding(mesh, P(None, None))",
        "s = NamedSharding(mesh, P('a', 'b'))",
        "t = P('b', None)",
        "t = P('a', 'b')",
        "t = P(None)",
        "t = P(None, None)",
    ]
    assert _changed_lines("in_specs=(P(('a', 'b'), None),)\n", "spec") == [
        "in_specs=(P(None, ('a', 'b')),)",
        "in_specs=(P(None),)",
        "in_specs=(P(('b', 'a'), None),)",
    ]


def test_check_vma_is_flipped():
    assert _changed_lines("f = jax.shard_map(g, mesh=m, check_vma=False)\n", "check_vma") == [
        "f = jax.shard_map(g, mesh=m, check_vma=True)"
    ]


def test_a_change_of_varying_axes_is_dropped():
    assert _changed_lines("y = jax.lax.pvary(x, ('x',)) + 1\n", "check_vma") == ["y = x + 1"]
    assert _changed_lines("y = jax.lax.pcast(b, 'x', to='varying')\n", "check_vma") == ["y = b"]
    assert _changed_lines("y = jax.lax.psum(x, 'x')\n", "check_vma") == []


def test_a_collective_becomes_a_cousin():
    assert _changed_lines("y = jax.lax.psum_scatter(x, 'x', scatter_dimension=1, tiled=True)\n", "collective") == [
        "y = jax.lax.psum(x, 'x')",
        "y = jax.lax.pmean(x, 'x')",
    ]
    assert _changed_lines("y = jax.lax.psum(x, 'x')\n", "collective") == [
        "y = jax.lax.psum_scatter(x, 'x')",
        "y = jax.lax.pmean(x, 'x')",
    ]
    assert _changed_lines(
        "y = jax.lax.all_gather(x, 'x', tiled=True)\nz = jax.lax.all_gather(x, 'x')\n", "collective"
    ) == ["y = jax.lax.all_gather(x, 'x', tiled=False)", "z = jax.lax.all_gather(x, 'x', tiled=True)"]
    assert _changed_lines("y = jax.lax.ppermute(x, 'x', RING)\n", "collective") == [
        "y = jax.lax.ppermute(x, 'x', [(j, i) for i, j in RING])",
        "y = jax.lax.ppermute(x, 'x', [(i, (j + 1) % len(RING)) for i, j in RING])",
    ]


def test_a_range_end_or_an_index_is_off_by_one():
    assert _changed_lines("for k in range(n + 1):\n    d = devices[0]\n", "off_by_one") == [
        "for k in range((n + 1) - 1):",
        "for k in range((n + 1) + 1):",
        "    d = devices[1]",
    ]
    assert _changed_lines("for k in range(1, 8):\n    pass\n", "off_by_one") == [
        "for k in range(1, 8 - 1):",
        "for k in range(1, 8 + 1):",
    ]


def test_names_arguments_and_a_ratios_operands_are_swapped():
    assert _changed_lines("t_a = f(x)\nt_b = g(y, z)\na, b = b, a\nspeedup = t_a / t_b\n", "swap") == [
        "t_b = f(x) | t_a = g(y, z)",
        "t_b = g(z, y)",
        "b, a = b, a",
        "speedup = t_b / t_a",
    ]


def test_a_timing_loses_its_warm_up_or_its_wait():
    source = """\
    f(x).block_until_ready()  # warm-up
    start = time.perf_counter()
    for _ in range(5):
        jax.block_until_ready(f(x))
        times.append(1)
    t = time.perf_counter() - start
    """
    mutants = _mutants(source, "timing")
    assert _changed_lines(source, "timing") == ["", "f(x)  # warm-up", "", "    f(x)"]
    assert mutants[0] == textwrap.dedent(source).replace("f(x).block_until_ready()  # warm-up\n", "")
    assert "jax.block_until_ready" not in mutants[2] and "times.append(1)" in mutants[2]
    assert _mutants("f(x).block_until_ready()\n", "timing") == []  # code that does not time is left alone


def test_a_boolean_is_negated_and_a_mesh_swapped():
    assert _changed_lines("faster = bool(s > 1.0)\nok = not done\nuse = True\n", "negate") == [
        "faster = bool(s <= 1.0)",
        "ok = done",
        "use = False",
    ]
    assert _changed_lines("mesh = jax.make_mesh((4, 2), ('batch', 'model'))\n", "mesh") == [
        "mesh = jax.make_mesh((2, 4), ('batch', 'model'))",
        "mesh = jax.make_mesh((4, 2), ('model', 'batch'))",
    ]


def test_a_type_the_text_names_is_lost():
    assert _changed_lines("t = float(np.median(ts))\nn = int(k)\nb = tuple(xs)\n", "type") == [
        "t = np.median(ts)",
        "n = k",
        "b = xs",
    ]
    assert _changed_lines("ok = bool(a > b)\nmsg = str(e)\n", "type") == ["ok = np.bool_(a > b)", "msg = repr(e)"]
    assert _changed_lines("shape = (16, 4)\n", "type") == ["shape = [16, 4]"]
    assert _mutants("a, b = (1, 2)\nxs = tuple(x for x in y)\n", "type") == []  # unpacked; a generator kept
    assert _mutants("print('same:', bool(jnp.allclose(a, b)))\n", "type") == []  # only printed: shows as True


def test_an_axis_type_becomes_the_other():
    source = "mesh = jax.make_mesh((8,), ('x',), axis_types=(AxisType.Explicit,))\n"
    assert _changed_lines(source, "axis_type") == ["mesh = jax.make_mesh((8,), ('x',), axis_types=(AxisType.Auto,))"]


def test_a_settings_restore_is_left_out_and_the_code_still_compiles():
    source = """\
        jax.config.update('jax_threefry_partitionable', False)
        try:
            stable = f()
        finally:
            jax.config.update('jax_threefry_partitionable', True)
        """
    (mutant,) = _mutants(source, "restore")
    assert "finally:\n    pass" in mutant and mutant.count("config.update") == 1
    compile(mutant, "<mutant>", "exec")
    assert _mutants("jax.config.update('a', 1)\njax.config.update('b', 2)\n", "restore") == []


def test_an_operand_of_a_shard_map_is_laid_out_whole_right_before_it():
    source = "f = jax.jit(jax.shard_map(g, mesh=mesh, in_specs=(P('x'), P()), out_specs=P('x')))\n"
    first, second = _mutants(source, "whole_operand")
    assert "jax.device_put(v, jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())) if k == 0" in first
    assert "if k == 1" in second
    namespace: dict = {}
    exec(compile(first.replace("jax.jit(", "(", 1), "<mutant>", "exec"), _fake_jax(namespace))
    assert namespace["f"]("a", "b") == ("placed a", "b")
    assert _mutants("f = jax.shard_map(g, in_specs=P('x'), out_specs=P())\n", "whole_operand") == []  # no mesh


def _fake_jax(namespace: dict) -> dict:
    """A namespace where ``jax.shard_map`` returns its function and ``jax.device_put`` marks what it placed."""
    import types

    sharding = types.SimpleNamespace(NamedSharding=lambda mesh, spec: "whole", PartitionSpec=lambda *a: None)
    jax = types.SimpleNamespace(
        shard_map=lambda f, **kw: f, device_put=lambda v, s: f"placed {v}", sharding=sharding, jit=lambda f: f
    )
    namespace.update(jax=jax, g=lambda a, b: (a, b), mesh="m", P=lambda *a: a)
    return namespace


def test_only_answer_lines_change_and_formatting_is_kept():
    source = "# BEGIN SOLUTION\ny = jax.jit(f)   # spaced\n# END SOLUTION\nz = jax.jit(g)\n"
    assert answer_lines(source) == {2}
    assert [m.source for m in mutate(source, answer_lines(source))] == [
        "# BEGIN SOLUTION\ny = f   # spaced\n# END SOLUTION\nz = jax.jit(g)\n"
    ]
    assert answer_lines("x = 1  # SOLUTION\ny = 2\n") == {1}


def test_mutants_are_deterministic_and_a_source_that_does_not_parse_is_refused():
    source = "a, b = jax.lax.psum(x, 'i'), P('x', None)\nfor _ in range(3):\n    pass\n"
    first, second = mutate(source, {1, 2, 3}), mutate(source, {1, 2, 3})
    assert first == second and len({m.source for m in first}) == len(first) > 5
    assert mutant_id("t1", "swap", "c", "x") == mutant_id("t1", "swap", "c", "x") != mutant_id("t1", "swap", "c", "y")
    with pytest.raises(libcst.ParserSyntaxError):
        mutate("%timeit f(x)\n", {1})


def test_removing_a_blocks_only_statement_leaves_code_that_compiles():
    removed = mutate("def f():\n    g(x)\nt = time.perf_counter()\n", {1, 2, 3}, ("timing",))
    assert [m.source for m in removed] == ["def f():\n    pass\nt = time.perf_counter()\n"]
    compile(removed[0].source, "<mutant>", "exec")


def test_a_lab_mutant_is_answered_up_to_its_task_alone():
    lab = load_lab("lab2_three_ways")
    found = lab_mutants(lab, ("t2",))
    assert found.mutants and {m.task for m in found.mutants} == {"t2"} and all(m.parses for m in found.mutants)
    assert [m.id for m in found.mutants] == [m.id for m in lab_mutants(lab, ("t2",)).mutants]
    mutant = found.mutants[0]
    assert mutant.diff.startswith("--- solution\n+++ mutant\n")
    nb = submission(lab, "t2", {mutant.cell_id: mutant.source})
    answers = {c.metadata["autograder"]["task"]: c.source for c in nb.cells if c.metadata["autograder"]["answer"]}
    assert answers["t2"] == mutant.source and "BEGIN SOLUTION" in answers["t1"]
    assert all(answers[t] == "### Your code here" for t in ("t3", "t4", "t8"))
    nbformat.validate(nb)


def test_the_literals_a_text_names_are_changed_where_the_answer_uses_them():
    from autograder.mutation.text_mutants import text_mutants

    source = (
        "mesh = jax.make_mesh((8,), ('batch',))  # SOLUTION\n"
        "y = jax.device_put(x, NamedSharding(mesh, P('batch')))  # SOLUTION\n"
        "t = per_call(f, big_lhs, calls=200)  # SOLUTION\n"
        "z = x.astype(jnp.float32)  # SOLUTION\n"
        "w = g(small_lhs, 8)\n"
    )
    literals = ["'batch'", "(8,)", "big_lhs", "small_lhs", "at least 200 calls", "float32", "per_call(f, big_lhs)"]
    found = {m.description: m.source for m in text_mutants(source, {1, 2, 3, 4}, literals)}
    renamed = found["the text's 'batch' renamed 'batch_' throughout"]
    assert renamed.count("'batch_'") == 2 and "'batch'" not in renamed  # consistently: the program still runs
    assert "(9,)" in found["the text's 8 → 9"] and "(80,)" in found["the text's 8 → 80"]
    assert "g(small_lhs, 8)" in found["the text's 8 → 9"]  # a line outside the answer is never changed
    assert "calls=201" in found["the text's 200 → 201"]
    assert "jnp.float16" in found["the text's float32 → float16"]
    assert not any("small_lhs" in d for d in found)  # small_lhs is on no answer line: nothing to swap with
    assert text_mutants(source, {1, 2, 3, 4}, []) == []
