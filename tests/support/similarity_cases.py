"""Answers for the similarity tests and benchmark: random code written independently, and disguised copies
(every name the code binds renamed, literals' quotes changed, comments added, the spacing redone)."""

from __future__ import annotations

import ast
import io
import random
import tokenize

OPS = ["add", "subtract", "multiply", "maximum", "minimum", "dot", "matmul", "where", "concatenate", "stack"]
UNARY = ["tanh", "exp", "sin", "abs", "sqrt", "log1p", "square", "cumsum", "ravel", "transpose"]
WORDS = ["data", "weights", "grid", "total", "acc", "block", "part", "value", "chunk", "result", "tmp", "arr"]


def _expr(rng: random.Random, names: list[str], depth: int = 0) -> str:
    choice = rng.randrange(7 if depth < 3 else 2)
    if choice == 0:
        return rng.choice(names)
    if choice == 1:
        return str(rng.choice([rng.randrange(1, 100), round(rng.random() * 10, 2)]))
    if choice == 2:
        return f"jnp.{rng.choice(OPS)}({_expr(rng, names, depth + 1)}, {_expr(rng, names, depth + 1)})"
    if choice == 3:
        return f"jnp.{rng.choice(UNARY)}({_expr(rng, names, depth + 1)})"
    if choice == 4:
        return f"({_expr(rng, names, depth + 1)} {rng.choice('+-*/@')} {_expr(rng, names, depth + 1)})"
    if choice == 5:
        specs = ", ".join(rng.choice(["'x'", "'y'", "None"]) for _ in range(rng.randrange(1, 3)))
        return f"jax.device_put({_expr(rng, names, depth + 1)}, NamedSharding(mesh, P({specs})))"
    return f"{rng.choice(names)}[{rng.randrange(4)}:{rng.randrange(4, 9)}]"


def random_answer(rng: random.Random) -> str:
    """3–12 random statements of array code, with this student's own names."""
    names = [f"{rng.choice(WORDS)}{rng.randrange(10)}" for _ in range(4)]
    lines = [f"{names[0]} = jnp.ones(({rng.randrange(2, 9)}, {rng.randrange(2, 9)}))"]
    for _ in range(rng.randrange(3, 12)):
        kind = rng.randrange(5)
        target = rng.choice(names)
        if kind == 0:
            lines.append(f"print('{rng.choice(WORDS)}', {_expr(rng, names)})")
        elif kind == 1:
            lines.append(f"for i in range({rng.randrange(2, 6)}):\n    {target} = {_expr(rng, names + ['i'])}")
        elif kind == 2:
            lines.append(f"def {rng.choice(WORDS)}_fn({names[1]}, {names[2]}):\n    return {_expr(rng, names[1:3])}")
        else:
            lines.append(f"{target} = {_expr(rng, names)}")
    return "\n".join(lines)


def _bound(source: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def disguise(source: str, rng: random.Random) -> str:
    """The same code with every name it binds renamed, quotes swapped, comments added and spacing redone."""
    renamed = {name: f"{rng.choice(WORDS)}_{name[::-1]}_{rng.randrange(1000)}" for name in _bound(source)}
    tokens = []
    for token in tokenize.generate_tokens(io.StringIO(source + "\n").readline):
        kind, text = token.type, token.string
        if kind == tokenize.NAME and text in renamed:
            text = renamed[text]
        elif kind == tokenize.STRING and text.startswith("'"):
            text = '"' + text[1:-1] + '"'
        elif kind == tokenize.NEWLINE and rng.random() < 0.4:
            tokens.append((tokenize.COMMENT, f"  # {rng.choice(WORDS)}"))
        tokens.append((kind, text))
    return "# my own work\n" + tokenize.untokenize(tokens)
