"""The builtins and library functions the recorder's modules use, taken when the kernel package is
imported, before any student cell: a notebook that later patches ``builtins``, ``jax.typeof`` or
``numpy.save`` does not change what is recorded."""

import builtins
import json

import jax
import numpy as np

# Builtins bound as this module's globals: a notebook that patches ``builtins`` does not reach them.
isinstance, callable, getattr = builtins.isinstance, builtins.callable, builtins.getattr  # noqa: A001
len, repr, str, type, float = builtins.len, builtins.repr, builtins.str, builtins.type, builtins.float  # noqa: A001
list, dict = builtins.list, builtins.dict  # noqa: A001
open, sorted, zip, enumerate, range = builtins.open, builtins.sorted, builtins.zip, builtins.enumerate, builtins.range

_typeof = jax.typeof
_device_get = jax.device_get
_tree_flatten_with_path = jax.tree_util.tree_flatten_with_path
_keystr = jax.tree_util.keystr
_jit = jax.jit
_make_jaxpr = jax.make_jaxpr
_device_put = jax.device_put
_set_mesh = jax.set_mesh
_make_mesh = jax.make_mesh
_np_save = np.save
_np_asarray = np.asarray
_np_array_equal = np.array_equal
_json_dumps = json.dumps
_dict_get = dict.get
_Array = jax.Array
_PartitionSpec = jax.sharding.PartitionSpec
_NamedSharding = jax.sharding.NamedSharding
_AxisType = jax.sharding.AxisType
_ShapedArray = jax.core.ShapedArray  # what jax.typeof returns
