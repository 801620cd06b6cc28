"""Reading a task's facts: the kernel recorder's ``facts.json`` and ``.npy`` files, and a timed task's timing
record (kernel/timing_record.py), validated field by field into the records of ``schema``: a file the kernel
wrote is untrusted, so a malformed or forged one raises ``FactsError`` and the task is graded as having no
facts; arrays are read without pickles."""

from __future__ import annotations

import json
import math
import threading
from pathlib import Path
from typing import Any

import numpy as np

from autograder.facts.schema import (
    CallFact,
    ClockRead,
    CollectiveUse,
    Compilation,
    Fact,
    FactsError,
    MeshFact,
    ProbeFact,
    ProgramFact,
    ShardingFact,
    ShardMapBody,
    TaskFacts,
    TimingRecord,
    TypeFact,
    Wait,
)

# CPython 3.11's ``ast`` is not safe to use from two threads at once, and both ``np.load`` (its header)
# and pytest (assertion rewriting, tracebacks) use it: threads that grade side by side take this lock.
PARSER_LOCK = threading.RLock()

MAX_FACTS_JSON_BYTES = 64 * 1024 * 1024
MAX_TEXT = 4 * 1024 * 1024
PRIMITIVE_TYPES = (type(None), bool, int, float, str)


def require(condition: object, message: str) -> None:
    if not condition:
        raise FactsError(message)


def text(value: Any, limit: int = MAX_TEXT) -> str | None:
    if value is None:
        return None
    require(isinstance(value, str), f"expected text, found {type(value).__name__}")
    return value[:limit]


def is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def is_texts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def is_int_pair(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(type(item) is int for item in value)


def is_finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def load_task_facts(directory: Path, task: str) -> TaskFacts:
    """Read and validate ``directory/facts.json`` written by the kernel recorder for ``task``."""
    path = directory / "facts.json"
    if directory.resolve() != directory.absolute() or path.is_symlink():
        raise FactsError(f"the facts of {task} are behind a symbolic link")
    if not path.is_file():
        raise FactsError(f"no facts were written for {task}")
    if path.stat().st_size > MAX_FACTS_JSON_BYTES:
        raise FactsError(f"the facts of {task} are larger than {MAX_FACTS_JSON_BYTES} bytes")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FactsError(f"the facts of {task} are not valid JSON: {exc}") from None
    reader = _Reader(directory)
    require(isinstance(raw, dict) and raw.get("task") == task, f"the facts file is not for {task}")
    names = reader.mapping(raw.get("names", {}), reader.fact)
    calls = reader.mapping(raw.get("calls", {}), reader.call)
    probes = reader.mapping(raw.get("probes", {}), reader.probe)
    error = raw.get("error")
    require(error is None or isinstance(error, str), "bad recorder error")
    output_cut = raw.get("output_cut", False)
    require(isinstance(output_cut, bool), "output_cut must be true or false")
    timing = read_timing_record(raw["timing"]) if raw.get("timing") is not None else None
    return TaskFacts(
        task=task, names=names, calls=calls, error=text(error), probes=probes, output_cut=output_cut, timing=timing
    )


def read_timing_record(raw: Any) -> TimingRecord:
    """A timed task's record (kernel/timing_record.py): its events and spans, validated one by one."""
    require(isinstance(raw, dict), "the timing record must be an object")
    events, spans, dropped = raw.get("events"), raw.get("spans"), raw.get("dropped", 0)
    require(isinstance(events, list) and isinstance(spans, list), "the timing record needs events and spans")
    require(is_count(dropped), "bad dropped count")
    found: list[ClockRead | Compilation | Wait] = []
    for event in events:
        require(isinstance(event, list) and len(event) in (3, 4) and isinstance(event[0], str), "bad event")
        kind = event[0]
        require(len(event) == (4 if kind == "clock" else 3), f"bad {kind} event")
        if kind == "clock":
            _, read, clock, seconds = event
            require(is_count(read) and isinstance(clock, str) and is_finite_number(seconds), "bad clock read")
            found.append(ClockRead(read, clock[:40], float(seconds)))
        elif kind == "compile":
            _, stage, function = event
            require(isinstance(stage, str) and isinstance(function, str), "bad compilation")
            found.append(Compilation(stage[:20], function[:200]))
        elif kind == "wait":
            _, how, arrays = event
            require(isinstance(how, str) and isinstance(arrays, list), "bad wait")
            described = []
            for array in arrays:
                require(isinstance(array, list) and len(array) == 3, "bad array of a wait")
                shape, dtype, devices = array
                require(isinstance(shape, list) and all(is_count(d) for d in shape), "bad shape of a wait")
                require(isinstance(dtype, str) and is_count(devices), "bad array of a wait")
                described.append((tuple(shape), dtype[:40], devices))
            found.append(Wait(how[:40], tuple(described)))
        else:
            raise FactsError(f"unknown timing event {kind!r}")
    for span in spans:
        require(isinstance(span, list) and len(span) == 2 and all(is_count(r) for r in span), "bad span")
    return TimingRecord(tuple(found), tuple((start, end) for start, end in spans), dropped)


class _Reader:
    """Validating conversion of the recorder's JSON into dataclasses; arrays read without pickles."""

    def __init__(self, directory: Path):
        self.directory = directory.resolve()

    def mapping(self, raw: Any, convert) -> dict:
        require(isinstance(raw, dict), "expected a mapping")
        return {str(key): convert(value) for key, value in raw.items()}

    def listing(self, raw: Any, most: int, what: str, convert) -> tuple:
        require(isinstance(raw, list) and len(raw) <= most, f"{what} must be a list")
        return tuple(convert(entry) for entry in raw)

    def fact(self, raw: Any) -> Fact:
        require(isinstance(raw, dict), "a fact must be a mapping")
        kind = raw.get("kind")
        type_name = text(raw.get("type", "")) or ""
        if kind == "missing":
            return Fact(kind="missing", error=text(raw.get("error", "")))
        if kind == "value":
            value = raw.get("value")
            require(isinstance(value, PRIMITIVE_TYPES), "a value fact must be a primitive")
            return Fact(kind="value", type=type_name, value=value)
        if kind == "spec":
            return Fact(kind="spec", type=type_name, spec=self.spec(raw.get("spec")))
        if kind == "array":
            return self.array(raw, type_name)
        if kind == "tree":
            leaves, paths = raw.get("leaves"), raw.get("paths", [])
            tree = isinstance(leaves, list) and is_texts(paths) and len(paths) == len(leaves)
            require(tree, "a tree needs leaves and their paths")
            return Fact(
                kind="tree",
                type=type_name,
                leaves=tuple(self.fact(leaf) for leaf in leaves),
                paths=tuple(paths),
                treedef=text(raw.get("treedef", "")) or "",
            )
        if kind == "type":
            return Fact(kind="type", type=type_name, typeof=self.type_fact(raw.get("typeof")))
        if kind in ("function", "other"):
            return Fact(kind=kind, type=type_name, repr=text(raw.get("repr", ""), 2000) or "")
        raise FactsError(f"unknown fact kind {kind!r}")

    def array(self, raw: dict, type_name: str) -> Fact:
        shape = self.shape(raw.get("shape"))
        dtype = text(raw.get("dtype"))
        values = self.npy(raw.get("values"))
        require(values.shape == shape, f"array values have shape {values.shape}, expected {shape}")
        sharding, typeof = raw.get("sharding"), raw.get("typeof")
        committed = raw.get("committed")
        require(committed is None or isinstance(committed, bool), "an array's committed must be true, false or null")
        sharding = None if sharding is None else self.sharding(sharding, shape)
        return Fact(
            kind="array",
            type=type_name,
            shape=shape,
            dtype=dtype,
            values=values,
            sharding=sharding,
            typeof=None if typeof is None else self.type_fact(typeof),
            blocks=self.blocks(raw.get("blocks", {}), sharding),
            committed=committed,
        )

    def blocks(self, raw: Any, sharding: ShardingFact | None) -> dict[int, np.ndarray]:
        """The blocks of the devices that hold other values than the array's, each of its block's shape."""
        require(isinstance(raw, dict), "an array's blocks must be a mapping")
        if not raw:
            return {}
        if sharding is None:
            raise FactsError("an array with blocks needs a sharding")
        found = {}
        for device, relative in raw.items():
            known = str(device).isdigit() and int(device) in sharding.device_indices
            require(known, f"blocks name device {device!r}, which holds no block of the array")
            block = self.npy(relative)
            expected = tuple(stop - start for start, stop in sharding.device_indices[int(device)])
            require(block.shape == expected, f"device {device}'s block has shape {block.shape}, expected {expected}")
            found[int(device)] = block
        return found

    def npy(self, relative: Any) -> np.ndarray:
        require(isinstance(relative, str), "array values must name a .npy file")
        path = (self.directory / relative).resolve()
        require(
            path.is_relative_to(self.directory)
            and path.suffix == ".npy"
            and not (self.directory / relative).is_symlink(),
            f"array file {relative!r} is outside the facts directory",
        )
        try:
            with PARSER_LOCK:
                return np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise FactsError(f"cannot read {relative}: {exc}") from None

    def shape(self, raw: Any) -> tuple[int, ...]:
        dims = isinstance(raw, list) and all(isinstance(d, int) and d >= 0 for d in raw)
        require(dims, "a shape must be a list of non-negative ints")
        return tuple(raw)

    def spec(self, raw: Any) -> tuple[tuple[str, ...] | None, ...]:
        require(isinstance(raw, list), "a PartitionSpec must be a list")
        entries = all(entry is None or is_texts(entry) for entry in raw)
        require(entries, "a PartitionSpec entry must be null or a list of axis names")
        return tuple(None if entry is None else tuple(entry) for entry in raw)

    def sharding(self, raw: Any, shape: tuple[int, ...]) -> ShardingFact:
        require(isinstance(raw, dict), "a sharding must be a mapping")
        indices = raw.get("device_indices")
        require(isinstance(indices, dict) and indices, "a sharding needs device_indices")
        device_indices = {}
        for device, block in indices.items():
            require(str(device).isdigit(), "device ids must be integers")
            require(isinstance(block, list) and len(block) == len(shape), "a block needs one range a dimension")
            for bounds, size in zip(block, shape):
                require(is_int_pair(bounds) and 0 <= bounds[0] <= bounds[1] <= size, "bad block range")
            device_indices[int(device)] = tuple((start, stop) for start, stop in block)
        mesh, spec = raw.get("mesh"), raw.get("spec")
        return ShardingFact(
            kind=text(raw.get("kind", "")) or "",
            repr=text(raw.get("repr", ""), 2000) or "",
            device_indices=device_indices,
            mesh=None if mesh is None else self.mesh(mesh),
            spec=None if spec is None else self.spec(spec),
        )

    def mesh(self, raw: Any) -> MeshFact:
        require(isinstance(raw, dict), "a mesh must be a mapping")
        names = raw.get("axis_names")
        require(is_texts(names), "bad mesh axis names")
        shape = self.shape(raw.get("shape"))
        types = raw.get("axis_types", [])
        require(is_texts(types), "bad axis types")
        device_ids = np.asarray(raw.get("device_ids"), dtype=np.int64)
        require(device_ids.shape == shape and len(names) == len(shape), "mesh shape mismatch")
        return MeshFact(tuple(names), shape, tuple(types), device_ids)

    def type_fact(self, raw: Any) -> TypeFact:
        require(isinstance(raw, dict), "a type must be a mapping")
        axes, mesh = raw.get("sharded_axes"), raw.get("mesh")
        names = types = None
        if mesh is not None:
            require(isinstance(mesh, dict), "a type's mesh must be a mapping")
            names, types = mesh.get("axis_names"), mesh.get("axis_types")
            require(
                is_texts(names) and is_texts(types) and len(names) == len(types),
                "a type's mesh needs its axis names and types",
            )
        return TypeFact(
            text=text(raw.get("str", ""), 1000) or "",
            shape=self.shape(raw.get("shape")),
            dtype=text(raw.get("dtype", "")) or "",
            sharded_axes=None if axes is None else self.spec(axes),
            mesh_axis_names=None if names is None else tuple(n[:200] for n in names),
            axis_types=None if types is None else tuple(t[:50] for t in types),
        )

    def probe(self, raw: Any) -> ProbeFact:
        require(isinstance(raw, dict), "a probe record must be a mapping")
        return ProbeFact(
            values=self.mapping(raw.get("values", {}), self.fact),
            stdout=text(raw.get("stdout", ""), 200_000) or "",
            error=text(raw.get("error")),
        )

    def call(self, raw: Any) -> CallFact:
        require(isinstance(raw, dict), "a call must be a mapping")
        program = raw.get("program")
        return CallFact(
            output=self.fact(raw.get("output", {"kind": "missing", "error": "no output"})),
            stdout=text(raw.get("stdout", ""), 200_000) or "",
            error=text(raw.get("error")),
            hlo=text(raw.get("hlo")),
            hlo_error=text(raw.get("hlo_error")),
            program=None if program is None else self.program(program),
        )

    def program(self, raw: Any) -> ProgramFact:
        require(isinstance(raw, dict), "a program record must be a mapping")
        jit_object = raw.get("jit_object")
        require(isinstance(jit_object, bool), "jit_object must be a bool")
        top_jit_library = raw.get("top_jit_library", False)
        require(isinstance(top_jit_library, bool), "top_jit_library must be a bool")
        names = {}
        for key in ("top", "primitives"):
            value = raw.get(key, [])
            require(is_texts(value), f"{key} must be a list of primitive names")
            names[key] = tuple(n[:200] for n in value)
        return ProgramFact(
            jit_object=jit_object,
            top=names["top"],
            primitives=frozenset(names["primitives"]),
            in_shardings=self.given_shardings(raw.get("in_shardings")),
            out_shardings=self.given_shardings(raw.get("out_shardings")),
            error=text(raw.get("error"), 2000),
            collectives=self.listing(raw.get("collectives", []), 1000, "collectives", self.collective),
            bodies=self.listing(raw.get("bodies", []), 100, "bodies", self.body),
            top_jit_library=top_jit_library,
        )

    def body(self, entry: Any) -> ShardMapBody:
        require(isinstance(entry, dict), "a shard_map body must be a mapping")
        operands, blocks, values = entry.get("operands", []), entry.get("blocks", []), entry.get("values", [])
        lists = all(isinstance(entries, list) for entries in (operands, blocks, values)) and len(values) <= 1000
        require(lists, "a shard_map body needs lists of operands, blocks and values")
        whole_before = entry.get("whole_before", [])
        bools = isinstance(whole_before, list) and all(isinstance(w, bool) for w in whole_before)
        require(bools, "whole_before must be a list of bools")
        found_values = []
        for value in values:
            require(isinstance(value, dict) and isinstance(value.get("dtype"), str), "a body value needs a dtype")
            found_values.append((self.shape(value.get("shape")), value["dtype"][:100]))
        operand_shapes = tuple(self.shape(s) for s in operands)
        block_shapes = tuple(self.shape(s) for s in blocks)
        return ShardMapBody(operand_shapes, block_shapes, tuple(found_values), tuple(whole_before))

    def collective(self, entry: Any) -> CollectiveUse:
        require(isinstance(entry, dict), "a collective must be a mapping")
        primitive, axes = entry.get("primitive"), entry.get("axes")
        require(isinstance(primitive, str), "a collective's primitive must be a string")
        require(is_texts(axes), "a collective's axes must be a list of strings")
        repeats, perm, written = entry.get("repeats", 1), entry.get("perm"), entry.get("written")
        require(written is None or isinstance(written, str), "a collective's written name must be a string")
        require(repeats is None or is_count(repeats), "a collective's repeats must be a count or null")
        pairs = perm is None or (isinstance(perm, list) and all(is_int_pair(pair) for pair in perm))
        require(pairs, "a ppermute's perm must be a list of [source, target] pairs")
        return CollectiveUse(
            primitive[:200],
            tuple(a[:200] for a in axes),
            repeats,
            None if perm is None else tuple((a, b) for a, b in perm),
            None if written is None else written[:50],
        )

    def given_shardings(self, raw: Any) -> tuple[ShardingFact | None, ...] | None:
        if raw is None:
            return None
        require(isinstance(raw, list), "shardings given to jit must be a list")
        require(all(e is None or isinstance(e, dict) for e in raw), "a given sharding must be a mapping")
        return tuple(None if e is None else self.sharding(e, self.shape(e.get("shape"))) for e in raw)
