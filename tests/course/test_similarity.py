"""The similarity report: disguised copies are flagged, independent answers and blank or lightly edited
notebooks are not, the lab's code and the code everyone writes are left out, and the page renders."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from headless_chromium import chromium, render
from similarity_cases import disguise, random_answer

from autograder.authoring.known_grades import SOLUTION, make_submission
from autograder.course.similarity import (
    JACCARD_THRESHOLD,
    compare_task,
    find_similar,
    normalise,
    shingles,
    similarity_html,
)
from autograder.lab import load_lab

LAB2, LAB3 = load_lab("lab2_three_ways"), load_lab("lab3_fsdp_tp")

TP_MLP = """def _tp_mlp_block(x_block, W1_block, W2_block):
    x_full = jax.lax.all_gather(x_block, "model", axis=1, tiled=True)    # (8, 4) -> (8, 16)
    h = x_full @ W1_block                                                # (8, 16): my hidden units
    y_partial = h @ W2_block                                             # (8, 16): one term of the sum
    return jax.lax.psum_scatter(y_partial, "model", scatter_dimension=1, tiled=True)  # (8, 4)


tp_mlp = jax.jit(jax.shard_map(
    _tp_mlp_block, mesh=mesh,
    in_specs=(P(None, "model"), P(None, "model"), P("model", None)),
    out_specs=P(None, "model")))
"""
# The same code, renamed and reformatted.
TP_MLP_COPY = """# my own work
def block(inp, a, b):
    full = jax.lax.all_gather(inp, 'model', axis=1, tiled=True)
    hidden = full @ a
    part = hidden @ b
    return jax.lax.psum_scatter(part, 'model',
                                scatter_dimension=1,
                                tiled=True,)
tp_mlp = jax.jit(jax.shard_map(block, mesh=mesh, in_specs=(P(None, 'model'), P(None, 'model'), P('model', None),),
                               out_specs=P(None, 'model')))
"""
# Correct too, written independently.
TP_MLP_OTHER = '''from functools import partial

@jax.jit
@partial(jax.shard_map, mesh=mesh,
         in_specs=(P(None, "model"), P(None, "model"), P("model", None)), out_specs=P(None, "model"))
def tp_mlp(x, w1, w2):
    """column-parallel then row-parallel"""
    gathered = jax.lax.all_gather(x, "model", axis=1, tiled=True)
    partial_sums = jnp.dot(jnp.dot(gathered, w1), w2)
    result = jax.lax.psum_scatter(partial_sums, "model", scatter_dimension=1, tiled=True)
    return result
'''


def _pairs(report, task):
    return {(p.first, p.second) for t in report.tasks if t.task == task for p in t.pairs}


def _class(tmp_path: Path, lab, answers: dict[str, dict]) -> dict[str, Path]:
    return {student: make_submission(lab, a, tmp_path / f"{student}.ipynb") for student, a in answers.items()}


def test_normalising_forgets_names_literals_comments_and_layout_but_not_the_api():
    def tokens(source):
        return [t for t, _ in normalise(source, frozenset({"jax"}))]

    first = "def f(x, w):  # layer\n    y = jnp.dot(x, w) + 1.5\n    return jax.nn.relu(y)\n"
    second = "def layer(inp,\n          weights,):\n    out = jnp.dot(inp, weights) + 2; return jax.nn.relu(out)"
    assert tokens(first) == tokens(second)
    assert tokens("a = jax.nn.relu(b)") != tokens("a = jax.nn.gelu(b)")  # attributes stay
    assert tokens("f(x, axis=1, tiled=True)") != tokens("f(x, axis=1, to=True)")  # keyword arguments stay
    assert tokens("self.w1 = 1\nz = self.w1(x)") == tokens("self.kernel = 1\nz = self.kernel(x)")
    assert tokens("print(f'{a} and {b}', 'x' 'y')") == tokens("print('text', \"z\")")
    assert tokens("%timeit f(x)\ny = f(x)") == tokens("y = f(x)")
    assert tokens("from m import NamedSharding\nNamedSharding(a)") != tokens("from m import Other\nOther(a)")
    assert normalise("def broken(:\n    x = (1,\n") != []  # broken code still yields tokens


def test_a_renamed_reformatted_copy_is_flagged_and_an_independent_answer_is_not(tmp_path):
    paths = _class(tmp_path, LAB3, {"ada": {"t2": TP_MLP}, "bo": {"t2": TP_MLP_COPY}, "cy": {"t2": TP_MLP_OTHER}})
    report = find_similar(LAB3.template, paths)
    assert _pairs(report, "t2") == {("ada", "bo")}
    (pair,) = report.tasks[1].pairs
    assert pair.jaccard == pytest.approx(1.0) and pair.containment == pytest.approx(1.0)
    assert report.flagged == 1


def test_blank_and_lightly_edited_notebooks_do_not_match_each_other(tmp_path):
    setup_cell = next(c.source for c in LAB2.template.cells if c.cell_type == "code" and "make_mesh" in c.source)
    starter = "# Your predictions, written before running the next cell.\n### Your code here"
    answers = {f"blank{i}": {} for i in range(4)}
    answers |= {
        f"touched{i}": {"t1": f"### Your code here\nprint(A)  # try {i}", "t3": [f"# {i}", starter]} for i in range(4)
    }
    answers |= {f"pasted{i}": {"t2": setup_cell, "t8": f"{setup_cell}\nprint(mesh)"} for i in range(3)}
    report = find_similar(LAB2.template, _class(tmp_path, LAB2, answers))
    assert report.flagged == 0
    assert all(t.compared == 0 for t in report.tasks)
    lab3 = find_similar(LAB3.template, _class(tmp_path / "lab3", LAB3, {f"blank{i}": {} for i in range(3)}))
    assert lab3.flagged == 0 and lab3.tasks[5].answered == 0  # t6's class skeleton is the lab's code


def test_a_copy_with_code_added_is_flagged_by_containment():
    rng = random.Random(3)
    original = random_answer(rng)
    padded = disguise(original, rng) + "\n" + "\n".join(random_answer(rng) for _ in range(3))
    task = compare_task("t1", {"ada": [original], "bo": [padded], "cy": [random_answer(rng)]}, set())
    (pair,) = task.pairs
    assert (pair.first, pair.second) == ("ada", "bo")
    assert pair.jaccard < JACCARD_THRESHOLD and pair.containment == pytest.approx(1.0)


def test_in_a_class_of_independent_answers_only_the_planted_copies_are_flagged():
    rng = random.Random(7)
    answers = {f"s{i:02d}": random_answer(rng) for i in range(40)}
    planted = {("s03", "s40"), ("s17", "s41"), ("s17", "s42")}
    for original, copy in planted:
        answers[copy] = disguise(answers[original], rng)
    task = compare_task("t1", {s: [a] for s, a in answers.items()}, set())
    assert {(p.first, p.second) for p in task.pairs} == planted | {("s41", "s42")}


def test_code_most_of_a_large_class_writes_is_not_evidence():
    rng = random.Random(11)
    dictated = (
        "x_dp = jax.device_put(x, NamedSharding(mesh_1d, P('x')))\n"
        "W_dp = jax.device_put(W, NamedSharding(mesh_1d, P()))\n"
        "b_dp = jax.device_put(b, NamedSharding(mesh_1d, P()))\nout_dp = layer(x_dp, W_dp, b_dp)\n"
    )
    few = compare_task("t4", {f"s{i}": [disguise(dictated, rng)] for i in range(3)}, set())
    assert len(few.pairs) == 3  # in a small class the same code is flagged: a reason to look
    many = compare_task("t4", {f"s{i}": [disguise(dictated, rng)] for i in range(30)}, set())
    assert many.answered == 30 and many.pairs == () and many.compared == 0


def test_shingles_point_at_their_lines():
    found = shingles(["a = f(x)\n", "b = g(a, 1)\nc = h(b)"])
    assert min(first for first, _ in found.values()) == 1 and max(last for _, last in found.values()) == 4


@pytest.mark.skipif(chromium() is None, reason="chromium is not installed")
def test_the_similarity_page_renders_in_a_headless_browser(tmp_path):
    paths = _class(
        tmp_path,
        LAB3,
        {"ada": {"t2": TP_MLP, "t1": SOLUTION}, "bo <b>": {"t2": TP_MLP_COPY}, "cy": {"t2": TP_MLP_OTHER}},
    )
    page = tmp_path / "similarity.html"
    page.write_text(similarity_html(find_similar(LAB3.template, paths), LAB3.id))
    shot = tmp_path / "similarity.png"
    dom = render(page, shot, "1200,900")
    assert '<span id="flagged">1</span>' in dom
    assert 'class="students">ada &amp; bo &lt;b&gt;</span>' in dom  # names are escaped
    assert "Jaccard 1.00" in dom and dom.count("<pre>") == 2
    assert "def block(inp, a, b):" in dom and '<span class="shared">' in dom
    assert shot.stat().st_size > 10_000


def test_the_similarity_command_writes_the_page_without_grading(tmp_path, capsys):
    from autograder.cli import main

    _class(tmp_path / "class", LAB3, {"ada": {"t2": TP_MLP}, "bo": {"t2": TP_MLP_COPY}, "cy": {}})
    (tmp_path / "class" / "dan.pdf").write_text("my answers")
    assert main(["similarity", str(tmp_path / "class"), "--lab", LAB3.id, "--out", str(tmp_path / "out")]) == 0
    assert "1 pairs flagged among 4 submissions" in capsys.readouterr().out
    page = (tmp_path / "out" / "similarity.html").read_text()
    assert "ada</b>" in page and "Not notebooks, not compared: dan" in page
    assert main(["similarity", str(tmp_path / "nowhere"), "--lab", LAB3.id, "--out", str(tmp_path / "out")]) == 2


def test_a_huge_answer_cell_is_cut_before_it_is_compared(tmp_path):
    from autograder.course.similarity import MAX_CELL_CHARS

    huge = "x = [" + ", ".join(["1"] * MAX_CELL_CHARS) + "]\n" + TP_MLP
    paths = _class(tmp_path, LAB3, {"ada": {"t2": huge}, "bo": {"t2": TP_MLP}})
    report = find_similar(LAB3.template, paths)
    assert report.tasks[1].answered == 2 and report.flagged == 0  # ada's copy of TP_MLP was past the cut
