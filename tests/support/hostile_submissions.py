"""Hostile submissions of lab 2: each tries to earn points it did not, or to harm the grader.

Each must score exactly what its honest parts earn, end with a clear status, and leave the grader
and the next submission unharmed. ``network_case(port)`` needs a port the test listens on.
"""

from autograder.authoring.known_grades import Case, solved

WRONG_T1 = "A_sharded = jnp.zeros((4, 16))"

PATCH_CHECKS = (
    """
import numpy, jax
numpy.allclose = lambda *a, **k: True
numpy.array_equal = lambda *a, **k: True
numpy.testing.assert_allclose = lambda *a, **k: None
jax.numpy.allclose = lambda *a, **k: True
jax.typeof = lambda x: 'float32[4@x,16@y]'
jax.Array.__eq__ = lambda self, other: True
"""
    + WRONG_T1
)

BLANK_LATER_CELLS = "get_ipython().input_transformers_cleanup.append(lambda lines: ['pass\\n'])"

SEARCH_SOLUTIONS = """
import glob, json, os
found = []
for root in ['/work', '/root', '/home', '/srv', '/opt', '/tmp', os.path.expanduser('~'), '/usr/local']:
    found += glob.glob(os.path.join(root, '**', 'lab2_three_ways*.ipynb'), recursive=True)
    found += glob.glob(os.path.join(root, '**', 'test_lab2_three_ways.py'), recursive=True)
for path in found:
    if path.endswith('.ipynb') and os.path.basename(os.path.dirname(path)) == 'lab2_three_ways':
        for cell in json.load(open(path))['cells']:
            if cell['cell_type'] == 'code' and 'BEGIN SOLUTION' in ''.join(cell['source']):
                exec(''.join(cell['source']))
"""

FAKE_RESULTS = (
    """
import json, os
fake = {"score": 100, "tests": [], "task": "t1", "names": {"A_sharded": {"kind": "value", "value": 1}}}
written = 0
for root in ['.', '/tmp', os.path.expanduser('~'), '..', '/work', '/root']:
    for dirpath, dirs, files in os.walk(root):
        for name in ['results.json', 'facts.json', 'grades.csv', 'feedback.html']:
            try:
                open(os.path.join(dirpath, name), 'w').write(json.dumps(fake)); written += 1
            except OSError:
                pass
for task in ['t1', 't2', 't3']:
    os.makedirs(f'.facts/{task}', exist_ok=True)
    open(f'.facts/{task}/facts.json', 'w').write(json.dumps(dict(fake, task=task)))
"""
    + WRONG_T1
)

C_SLEEP = """
import ctypes, signal
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])  # the interrupt never arrives
ctypes.CDLL(None).sleep(1000)
"""

FORK_BOMB = """
import os, time
children = 0
for _ in range(2000):  # bounded: the sandbox's process limit stops it far earlier
    try:
        if os.fork() == 0:
            time.sleep(3600)  # far longer than any capture: the harness must stop them
            os._exit(0)
        children += 1
    except OSError:
        break
print('forked', children)
A_sharded = jax.device_put(A, sharding)
"""

MEMORY_BOMB = """
import numpy as np
try:
    hog = np.ones(2**32)  # 32 GiB
except MemoryError:
    pass
try:
    hog = jnp.ones((2**32,), dtype=jnp.float32)  # 16 GiB through XLA
    hog.block_until_ready()
except Exception as exc:
    print(type(exc).__name__)
A_sharded = jax.device_put(A, sharding)
"""

OUTPUT_FLOOD = """
import sys
line = 'x' * (1 << 20)
for _ in range(1024):  # 1 GiB
    sys.stdout.write(line)
A_sharded = jax.device_put(A, sharding)
"""

DEVICE_OVERRIDE = """
import os
os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=2'
os.environ['PJRT_NPROC'] = '1'
try:
    jax.config.update('jax_num_cpu_devices', 2)
except Exception:
    pass
A_sharded = jax.device_put(A, sharding)
"""


def network_case(port: int) -> Case:
    code = (
        "import socket\n"
        f"socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
        "A_sharded = jax.device_put(A, sharding)  # only reached with a network\n"
    )
    return Case("network", {"t1": code, **solved("t2")}, {"t2": 8})


CASES = [
    Case("patch_checks", {"t1": PATCH_CHECKS, **solved("t2")}, {"t2": 8}),
    Case(
        "blank_later_cells",
        {**solved("t1"), "t2": BLANK_LATER_CELLS, **solved("t3")},
        {"t1": 8},
        messages={"t3": "nothing could be read"},
    ),
    Case("search_solutions", {"t1": SEARCH_SOLUTIONS, **solved("t2")}, {"t2": 8}),
    Case("fake_results", {"t1": FAKE_RESULTS, **solved("t2")}, {"t2": 8}),
    Case("sleep_in_c", {**solved("t1"), "t2": C_SLEEP, **solved("t3")}, {"t1": 8}, status="timeout", cell_timeout=10.0),
    Case("fork_bomb", {"t1": FORK_BOMB, **solved("t2")}, {"t1": 8, "t2": 8}),
    Case("memory_bomb", {"t1": MEMORY_BOMB, **solved("t2")}, {"t1": 8, "t2": 8}),
    Case("output_flood", {"t1": OUTPUT_FLOOD, **solved("t2")}, {"t1": 8, "t2": 8}),
    Case("device_override", {"t1": DEVICE_OVERRIDE, **solved("t2")}, {"t1": 8, "t2": 8}),
]
