"""The grader's compilation cache: a second grader process loads what the first compiled (same values,
same collectives in its HLO); it lives under the machine's cache directory, privately, and never
reaches a student's kernel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from autograder.caches.machine_cache import CACHE_DIR_VARIABLE
from autograder.run.kernels.devices import kernel_environment

ROOT = Path(__file__).resolve().parents[2]

COMPILE = """
import json
from autograder.run.kernels.devices import configure_grader_process
configure_grader_process()
import jax, jax.numpy as jnp
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)  # any compilation is stored
hits = []
jax.monitoring.register_event_listener(lambda event, **kw: hits.append(event) if event.endswith("cache_hits") else None)
from jax.sharding import NamedSharding, PartitionSpec as P
from autograder.checks import collectives_in
x = jax.device_put(jnp.arange(64.0).reshape(8, 8), NamedSharding(jax.make_mesh((8,), ("x",)), P("x")))
compiled = jax.jit(lambda x: jnp.sin(x).sum(axis=0) * 3).lower(x).compile()
print(json.dumps({"hits": len(hits), "dir": jax.config.jax_compilation_cache_dir, "value": compiled(x).tolist(),
                  "collectives": collectives_in(compiled.as_text())}))
"""


def _compile(cache_dir: Path) -> dict:
    env = {
        **os.environ,
        CACHE_DIR_VARIABLE: str(cache_dir),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    env = {k: v for k, v in env.items() if not k.startswith("JAX_COMPILATION_CACHE")}
    done = subprocess.run([sys.executable, "-c", COMPILE], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_second_grader_process_loads_what_the_first_compiled(tmp_path):
    first = _compile(tmp_path)
    assert first["dir"] == str(tmp_path / "xla") and first["hits"] == 0
    assert any((tmp_path / "xla").iterdir())
    assert (tmp_path / "xla").stat().st_mode & 0o077 == 0
    second = _compile(tmp_path)
    assert second["hits"] >= 1 and second["value"] == first["value"]
    # what the graders read from a compiled program survives the cache
    assert second["collectives"] == first["collectives"] and first["collectives"]["all-reduce"] == 1


def test_a_kernel_never_gets_the_compilation_cache(tmp_path):
    env = kernel_environment(
        {
            "PATH": "/usr/bin",
            "JAX_COMPILATION_CACHE_DIR": str(tmp_path),
            "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
        }
    )
    assert not any(k.startswith("JAX_COMPILATION") or k.startswith("JAX_PERSISTENT") for k in env)
