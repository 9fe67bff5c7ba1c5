"""Type deduction of the matmul family: the accumulator's dtype, the inner dimension, batch broadcast, and
the Acc view of a product (compact when its rows are narrowed)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import TypeDeductionError
from .deduce_common import _tile, fmt_shape
from .expr import ConstInt, Expr, exprs_equal, static_int
from .tiles import effective_view, implicit_layouts, make_tile_type
from .types import CompactMode, DataType, MemorySpace, TileType, TileView, Type

Kwargs = dict[str, Any]


def _accumulator_dtype(a: TileType, b: TileType) -> DataType:
    return DataType.FP32 if a.dtype.is_float and b.dtype.is_float else DataType.INT32


def _matmul_dtype(op: str, a: TileType, b: TileType) -> DataType:
    """A product accumulates in FP32 when both operands are floats, else in INT32 (INT4 and INT8 alike)."""
    if a.dtype.is_float != b.dtype.is_float:
        raise TypeDeductionError(
            f"{op}: operand dtypes {a.dtype.label} and {b.dtype.label} cannot be multiplied (one float, one integer)"
        )
    return _accumulator_dtype(a, b)


def _check_k(op: str, a: TileType, b: TileType) -> None:
    ka, kb = static_int(a.shape[-1]), static_int(b.shape[-2])
    if ka is not None and kb is not None and ka != kb:
        raise TypeDeductionError(
            f"{op}: inner dimensions differ: lhs {fmt_shape(a.shape)} has K={ka}, rhs {fmt_shape(b.shape)} has K={kb}"
        )


def broadcast_batch(op: str, a: Sequence[Expr], b: Sequence[Expr]) -> tuple[Expr, ...]:
    """NumPy broadcast of two batch shapes (right-aligned, a 1 stretches)."""
    n = max(len(a), len(b))
    pa = [ConstInt(1)] * (n - len(a)) + list(a)
    pb = [ConstInt(1)] * (n - len(b)) + list(b)
    out: list[Expr] = []
    for x, y in zip(pa, pb):
        sx, sy = static_int(x), static_int(y)
        if sx == 1:
            out.append(y)
        elif sy == 1 or (sx is not None and sx == sy) or exprs_equal(x, y):
            out.append(x)
        else:
            raise TypeDeductionError(
                f"{op}: batch dimensions {fmt_shape(a)} and {fmt_shape(b)} do not broadcast"
            )
    return tuple(out)


def _matmul(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    a = _tile(op, args, 0, "lhs")
    b = _tile(op, args, 1, "rhs")
    if a.rank != 2 or b.rank != 2:
        raise TypeDeductionError(
            f"{op}: needs 2-D operands, got {fmt_shape(a.shape)} and {fmt_shape(b.shape)}; use tile.batch_matmul"
        )
    _check_k(op, a, b)
    shape = (a.shape[0], b.shape[1])
    valid = (a.valid_shape[0], b.valid_shape[1])
    return make_tile_type(shape, _matmul_dtype(op, a, b), MemorySpace.Acc, _acc_view(shape, valid))


def _acc_view(shape: Sequence[Expr], valid: Sequence[Expr], compact: CompactMode | None = None) -> TileView:
    """An accumulator's view: the Acc box layout over `valid`; fewer valid rows than physical ones make it
    compact (mad writes at the valid rows' pitch), unless `compact` is inherited."""
    b, sl, f = implicit_layouts(tuple(shape), MemorySpace.Acc)
    if compact is None and not exprs_equal(valid[0], shape[0]):
        compact = CompactMode.normal
    return TileView(valid_shape=tuple(valid), blayout=b, slayout=sl, fractal=f, compact=compact)


def _matmul_acc(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    acc = _tile(op, args, 0, "acc")
    a = _tile(op, args, 1, "lhs")
    b = _tile(op, args, 2, "rhs")
    _check_k(op, a, b)
    view = _acc_view(acc.shape, acc.valid_shape, effective_view(acc).compact or CompactMode.null)
    return make_tile_type(acc.shape, _matmul_dtype(op, a, b), MemorySpace.Acc, view, acc.memref)


def _batch_matmul(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    a = _tile(op, args, 0, "lhs")
    b = _tile(op, args, 1, "rhs")
    if a.rank < 2 or b.rank < 2:
        raise TypeDeductionError(f"{op}: operands must be at least 2-D")
    _check_k(op, a, b)
    batch = broadcast_batch(op, a.shape[:-2], b.shape[:-2])
    return make_tile_type((*batch, a.shape[-2], b.shape[-1]), _matmul_dtype(op, a, b), MemorySpace.Acc)


def _batch_matmul_acc(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    """The accumulator is written in place: its shape is the broadcast result's, checked where static."""
    acc = _tile(op, args, 0, "acc")
    a = _tile(op, args, 1, "lhs")
    b = _tile(op, args, 2, "rhs")
    if acc.rank < 2 or a.rank < 2 or b.rank < 2:
        raise TypeDeductionError(f"{op}: acc, lhs and rhs must be at least 2-D")
    _check_k(op, a, b)
    batch = broadcast_batch(op, a.shape[:-2], b.shape[:-2])
    expected = (*batch, a.shape[-2], b.shape[-1])
    if acc.rank != len(expected):
        raise TypeDeductionError(
            f"{op}: acc {fmt_shape(acc.shape)} must have the rank of the broadcast result {fmt_shape(expected)}"
        )
    for i, (x, y) in enumerate(zip(acc.shape, expected)):
        sx, sy = static_int(x), static_int(y)
        if sx is not None and sy is not None and sx != sy:
            raise TypeDeductionError(
                f"{op}: acc {fmt_shape(acc.shape)} differs from the broadcast result {fmt_shape(expected)} "
                f"at axis {i} ({sx} != {sy}); the accumulator is written in place"
            )
    return make_tile_type(acc.shape, acc.dtype, acc.memory or MemorySpace.Acc, acc.view, acc.memref)
