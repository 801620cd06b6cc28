"""The builtins and library functions the recorder's modules use, taken before any student cell: a notebook
that later patches ``builtins``, ``jax.typeof`` or ``numpy.save`` does not change what is recorded."""

import builtins
import json

import jax
import numpy as np

# Builtins bound as this module's globals: a notebook that patches ``builtins`` does not reach them.
isinstance, callable, getattr = builtins.isinstance, builtins.callable, builtins.getattr  # noqa: A001
len, repr, str, type, float = builtins.len, builtins.repr, builtins.str, builtins.type, builtins.float  # noqa: A001
list, dict = builtins.list, builtins.dict  # noqa: A001
open, sorted, zip, enumerate, range = builtins.open, builtins.sorted, builtins.zip, builtins.enumerate, builtins.range

_typeof, _device_get, _jit, _make_jaxpr = jax.typeof, jax.device_get, jax.jit, jax.make_jaxpr
_device_put, _set_mesh, _make_mesh, _Array = jax.device_put, jax.set_mesh, jax.make_mesh, jax.Array
_tree_flatten_with_path, _keystr = jax.tree_util.tree_flatten_with_path, jax.tree_util.keystr
_PartitionSpec, _NamedSharding = jax.sharding.PartitionSpec, jax.sharding.NamedSharding
_AxisType = jax.sharding.AxisType
_ShapedArray = jax.core.ShapedArray  # what jax.typeof returns
_np_save, _np_asarray, _np_array_equal = np.save, np.asarray, np.array_equal
_json_dumps, _dict_get = json.dumps, dict.get
