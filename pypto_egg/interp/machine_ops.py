"""Semantics of the ops a real InCore function holds besides arithmetic on tiles: synchronisation, buffer
handles, block and rank queries, row and column reductions, index reductions, extracts and generated tiles.

The interpreter runs one function on one core, in program order. So a barrier, a fence or a pipe
initialisation orders nothing and is a no-op; the function runs as block 0 of 1 (sub-block 0) on rank 0 of 1;
a buffer handle is an opaque 0. `SINGLE_CORE` says so, and validation reports it. Ops whose result needs
another core (a cross-core pipe's pop, a remote rank's memory) or a target-defined encoding (packed predicate
masks) are not interpretable: `NotInterpretable` names the op and why.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from ..errors import UserError
from ..ir.expr import Call, Expr
from ..ir.types import DataType, TileType

SINGLE_CORE = (
    "one core in program order: block 0 of 1, sub-block 0, rank 0 of 1; barriers and fences are no-ops"
)


class InterpError(UserError):
    """A program that cannot be executed (an out-of-bounds window, a missing input, ...)."""


class BoundsError(InterpError):
    """A window that reaches outside its tensor or tile: a load, a store, or (run strictly) a slice or an
    assemble, whose boxes numpy would otherwise clip without a word."""


def inside(op: str, what: str, offsets: Sequence[int], box: Sequence[int], bounds: Sequence[int]) -> None:
    """A BoundsError unless the box at `offsets` lies inside `bounds` on every axis (of the same rank)."""
    if (
        len(offsets) != len(bounds)
        or len(box) != len(bounds)
        or any(o < 0 or o + n > b for o, n, b in zip(offsets, box, bounds))
    ):
        raise BoundsError(f"{op} {what} {list(offsets)}+{list(box)} reaches outside {list(bounds)}")


class NotInterpretable(UserError):
    """The interpreter has no meaning for this op on one core; validation reports the function as skipped."""

    def __init__(self, op: str, why: str) -> None:
        super().__init__(f"not interpretable: {op} ({why})")
        self.op = op


class Evaluator(Protocol):
    def value(self, e: Expr) -> Any: ...
    def ints(self, e: Any) -> tuple[int, ...]: ...


Semantics = Callable[[Evaluator, Call], Any]


def dtype_of(dt: DataType) -> np.dtype[Any]:
    return np.dtype(dt.numpy_name)


def result_tile(c: Call) -> TileType:
    ty = c.type
    assert isinstance(ty, TileType)
    return ty


def _no_op(m: Evaluator, c: Call) -> None:
    for a in c.args:  # operands are still evaluated: a use of an undefined value is an error
        m.value(a)
    return None


def _constant(v: Any) -> Semantics:
    return lambda m, c: v


def _reserve_buffer(m: Evaluator, c: Call) -> int:
    base = c.kwarg("base", 0)
    return int(base) if isinstance(base, int) and base >= 0 else 0


def _extract(m: Evaluator, c: Call) -> np.ndarray:
    src = m.value(c.args[0])
    r, k = int(m.value(c.args[1])), int(m.value(c.args[2]))
    shape = m.ints(c.args[3])
    out = np.zeros(shape, dtype=src.dtype)
    part = src[r : r + shape[0], k : k + shape[1]]
    out[: part.shape[0], : part.shape[1]] = part
    return out


def _reduce(fn: Callable[..., np.ndarray], axis: int) -> Semantics:
    """A row (axis -1) or column (axis -2) reduction, keeping the reduced axis unless told not to."""

    def run(m: Evaluator, c: Call) -> np.ndarray:
        x = m.value(c.args[0])
        return np.asarray(fn(x, axis=axis, keepdims=bool(c.kwarg("keepdim", True)))).astype(x.dtype)

    return run


def _arg_reduce(fn: Callable[..., np.ndarray], axis: int) -> Semantics:
    def run(m: Evaluator, c: Call) -> np.ndarray:
        x = m.value(c.args[0])
        idx = np.expand_dims(fn(x, axis=axis), axis)
        out = np.zeros(m.ints(result_tile(c).shape), dtype=dtype_of(result_tile(c).dtype))
        out[tuple(slice(0, n) for n in idx.shape)] = idx
        return out

    return run


def _ci(m: Evaluator, c: Call) -> np.ndarray:
    ty = result_tile(c)
    start = int(m.value(c.args[0]))
    out = np.zeros(m.ints(ty.shape), dtype=dtype_of(ty.dtype))
    cols = out.shape[-1]
    step = -1 if c.kwarg("descending", False) else 1
    out.reshape(-1, cols)[0] = start + step * np.arange(cols)
    return out


def _tri(m: Evaluator, c: Call) -> np.ndarray:
    ty = result_tile(c)
    shape = m.ints(c.args[1])
    diagonal = int(m.value(c.args[0]))
    ones = np.ones(shape, dtype=dtype_of(ty.dtype))
    out = np.triu(ones, diagonal) if c.kwarg("upper", False) else np.tril(ones, diagonal)
    if len(c.args) > 2:
        keep = np.zeros(shape, dtype=bool)
        keep[tuple(slice(0, v) for v in m.ints(c.args[2]))] = True
        out[~keep] = 0
    return out


def _matmul_bias(m: Evaluator, c: Call) -> np.ndarray:
    dt = dtype_of(result_tile(c).dtype)
    work = np.float64 if dt.kind == "f" else np.int64
    x, y, bias = (m.value(a).astype(work) for a in c.args[:3])
    return (np.matmul(x, y) + bias[..., :1, :]).astype(dt)


def _refuse(why: str) -> Semantics:
    def run(m: Evaluator, c: Call) -> Any:
        raise NotInterpretable(c.op, why)

    return run


_CROSS_CORE = "its data comes from a function running on another core"
_REMOTE = "it reads or writes another rank's memory"
_PACKED = "its packed predicate encoding is target-defined"

_SYNC = (
    "system.bar_v", "system.bar_m", "system.bar_all", "system.syncall", "system.cacheinvalid", "system.fence",
    "system.sync_set", "system.sync_wait", "system.set_ffts", "system.aic_initialize_pipe",
    "system.aiv_initialize_pipe", "system.tfree_to_aic", "system.tfree_to_aiv", "pld.system.wait",
    "pld.system.notify", "pld.system.defer_wait", "pld.system.barrier",
    # a push's only effect is on the consuming core
    "tile.tpush_to_aic", "tile.tpush_to_aiv",
)  # fmt: skip
_ON_ANOTHER_CORE = ("tile.tpop_from_aic", "tile.tpop_from_aiv", "tile.aic_gather")
_ON_ANOTHER_RANK = (
    "pld.tile.remote_load", "pld.tile.remote_store", "pld.tile.put", "pld.tile.get",
    "pld.tile._remote_load_with_physical_tail_padding",
)  # fmt: skip

SEMANTICS: dict[str, Semantics] = {
    # synchronisation and pipe set-up: one core in program order
    **dict.fromkeys(_SYNC, _no_op),
    # handles and queries
    "tile.alloc": _constant(0),  # a buffer handle: the tiles placed in it are interpreted by value
    "system.reserve_buffer": _reserve_buffer,
    "system.import_peer_buffer": _constant(0),
    "pld.system.get_comm_ctx": _constant(None),
    "pld.system.rank": _constant(0),
    "pld.system.nranks": _constant(1),
    "tile.get_block_idx": _constant(0),
    "tile.get_block_num": _constant(1),
    "tile.get_subblock_idx": _constant(0),
    "tensor.get_block_idx": _constant(0),
    # tiles
    "tile.extract": _extract,
    "tile.row_sum": _reduce(np.sum, -1),
    "tile.row_max": _reduce(np.max, -1),
    "tile.row_min": _reduce(np.min, -1),
    "tile.row_prod": _reduce(np.prod, -1),
    "tile.col_sum": _reduce(np.sum, -2),
    "tile.col_max": _reduce(np.max, -2),
    "tile.col_min": _reduce(np.min, -2),
    "tile.col_prod": _reduce(np.prod, -2),
    "tile.row_argmax": _arg_reduce(np.argmax, -1),
    "tile.row_argmin": _arg_reduce(np.argmin, -1),
    "tile.col_argmax": _arg_reduce(np.argmax, -2),
    "tile.col_argmin": _arg_reduce(np.argmin, -2),
    "tile.ci": _ci,
    "tile.tri": _tri,
    "tile.matmul_bias": _matmul_bias,
    # not on one core
    **dict.fromkeys(_ON_ANOTHER_CORE, _refuse(_CROSS_CORE)),
    **dict.fromkeys(_ON_ANOTHER_RANK, _refuse(_REMOTE)),
    "tile.cmps": _refuse(_PACKED),
    "tile.cmp": _refuse(_PACKED),
}
