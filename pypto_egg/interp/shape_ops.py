"""Semantics of the ops that make, copy or re-view a tile or tensor without computing on its elements:
allocation, moves, reshapes, reinterpretation, transposes, element reads and writes of tiles and tensors,
tensor extents and views."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir.expr import Call, type_of
from ..ir.types import TensorType, TileType
from .machine_ops import Evaluator, Semantics, dtype_of, result_tile


def _allocate(m: Evaluator, c: Call) -> np.ndarray:
    ty = result_tile(c)
    fill = m.value(c.args[1]) if c.op == "tile.full" else 0
    return np.full(m.ints(ty.shape), fill, dtype=dtype_of(ty.dtype))


def _copy(m: Evaluator, c: Call) -> np.ndarray:
    return np.array(m.value(c.args[0]), copy=True)


def _reshape(m: Evaluator, c: Call) -> np.ndarray:
    return np.asarray(m.value(c.args[0])).reshape(m.ints(result_tile(c).shape))


def _reinterpret(m: Evaluator, c: Call) -> np.ndarray:
    if len(c.args) > 1 and c.kwarg("dtype") is None:  # a new shape over the same elements
        return _reshape(m, c)
    ty = result_tile(c)
    x = np.ascontiguousarray(m.value(c.args[0]))
    return x.view(dtype_of(ty.dtype)).reshape(m.ints(ty.shape))


def _transpose(m: Evaluator, c: Call) -> np.ndarray:
    src = type_of(c.args[0])
    assert isinstance(src, TileType)
    r = src.rank
    axes = int(m.value(c.args[1])) % r, int(m.value(c.args[2])) % r
    return np.ascontiguousarray(np.swapaxes(m.value(c.args[0]), *axes))


def _transpose_view(m: Evaluator, c: Call) -> np.ndarray:
    return np.ascontiguousarray(np.swapaxes(m.value(c.args[0]), -1, -2))


def _read(m: Evaluator, c: Call) -> Any:
    return m.value(c.args[0])[m.ints(c.args[1])].item()


def _tensor_write(m: Evaluator, c: Call) -> Any:
    dst = m.value(c.args[0])
    dst[m.ints(c.args[1])] = m.value(c.args[2])  # a tensor is a buffer: written in place
    return dst


def _tensor_dim(m: Evaluator, c: Call) -> int:
    return int(np.shape(m.value(c.args[0]))[int(m.value(c.args[1]))])


def _write(m: Evaluator, c: Call) -> np.ndarray:
    out = np.array(m.value(c.args[0]), copy=True)
    out[m.ints(c.args[1])] = m.value(c.args[2])
    return out


def _expands(m: Evaluator, c: Call) -> np.ndarray:
    x = m.value(c.args[0])
    return np.full(x.shape, m.value(c.args[1]), dtype=x.dtype)


def _tensor_view(m: Evaluator, c: Call) -> np.ndarray:
    return np.asarray(m.value(c.args[0])).reshape(m.ints(c.args[1]))


def _tensor_create(m: Evaluator, c: Call) -> np.ndarray:
    ty = c.type
    assert isinstance(ty, TensorType)
    return np.zeros(m.ints(ty.shape), dtype=dtype_of(ty.dtype))


SHAPE_SEMANTICS: dict[str, Semantics] = {
    "tile.create": _allocate,
    "tile.full": _allocate,
    "tile.move": _copy,
    "tile.set_validshape": _copy,
    "tile.reshape": _reshape,
    "tile.reinterpret_view": _reinterpret,
    "tile.transpose": _transpose,
    "tile.transpose_view": _transpose_view,
    "tile.read": _read,
    "tile.write": _write,
    "tile.expands": _expands,
    "tensor.read": _read,  # an element of a tile or a tensor, read the same way
    "tensor.write": _tensor_write,
    "tensor.dim": _tensor_dim,
    "tensor.view": _tensor_view,
    "tensor.create": _tensor_create,
}
