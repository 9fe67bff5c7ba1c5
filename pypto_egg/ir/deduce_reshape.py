"""The valid region of a reshaped or reinterpreted tile, as the reference's deduction maps it
(ComputeReshapeValidShape, reinterpret_view's plan): a reshape keeps exactly the cells that hold real data, or is
rejected with the reason no box of the new shape can say which they are.

The cases, in the reference's order: a whole source stays whole; an empty one stays empty; a change of rank over
unit axes keeps any box; otherwise the real data must be a row-major flat prefix of the source, and the result is
the box of the new shape that covers that prefix."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import TypeDeductionError
from .deduce_common import _implicit_column_layout, _tile, fmt_shape, static_count, tuple_elems
from .expr import BinOp, ConstInt, Expr, exprs_equal, static_int
from .registry import Kwargs
from .tiles import BOXED_SPACES, effective_view, implicit_layouts, make_tile_type
from .types import DataType, TileLayout, TileType, TileView, Type


def same_extent(a: Expr, b: Expr) -> bool:
    """`a == b`, proved from what the expressions show."""
    x, y = static_int(a), static_int(b)
    return x == y if x is not None and y is not None else exprs_equal(a, b)


def _unit_axes(valid: Sequence[Expr], shape: Sequence[Expr], new: Sequence[Expr]) -> list[Expr] | None:
    """Case 3: the new shape only inserts or erases unit axes, so rows stay rows and columns stay columns. Equal
    axes are matched first, so that a partial unit axis keeps its extent; a unit axis is erased only where its
    one coordinate is valid, and inserted whole. Failed states are remembered, so each is visited once."""
    failed: set[tuple[int, int]] = set()

    def walk(i: int, j: int) -> list[Expr] | None:
        if (i, j) in failed:
            return None
        if i == len(shape) and j == len(new):
            return []
        if i < len(shape) and j < len(new) and same_extent(shape[i], new[j]):
            tail = walk(i + 1, j + 1)
            if tail is not None:
                return [valid[i], *tail]
        if i < len(shape) and static_int(shape[i]) == 1 and same_extent(valid[i], shape[i]):
            tail = walk(i + 1, j)
            if tail is not None:
                return tail
        if j < len(new) and static_int(new[j]) == 1:
            tail = walk(i, j + 1)
            if tail is not None:
                return [new[j], *tail]
        failed.add((i, j))
        return None

    return walk(0, 0)


def reshape_valid(
    op: str, valid: Sequence[Expr], shape: Sequence[Expr], new: Sequence[Expr], row_major: bool
) -> tuple[Expr, ...]:
    """The valid shape of `shape` (valid over `valid`) reshaped to `new`."""
    if all(same_extent(v, n) for v, n in zip(valid, shape)):
        return tuple(new)
    if any(static_int(v) == 0 for v in valid):
        return tuple(ConstInt(0) for _ in new)
    mapped = _unit_axes(valid, shape, new)
    if mapped is not None:
        return tuple(mapped)
    what = (
        f"{op}: cannot reshape {fmt_shape(shape)} to {fmt_shape(new)} because only part of it holds real data"
    )
    fix = "Reshape the full extent and narrow afterwards, or copy the real data out first (pl.slice / pl.store)."
    if not row_major:
        raise TypeDeductionError(
            f"{what} (valid_shape {fmt_shape(valid)}) and its elements are not stored row-major, so the real data "
            f"does not occupy a contiguous run that the new shape can describe. {fix}"
        )
    free = 0  # leading axes pinned to one valid coordinate add nothing; the first other one is the free axis
    while free + 1 < len(valid) and static_int(valid[free]) == 1:
        free += 1
    for i in range(free + 1, len(valid)):
        if not same_extent(valid[i], shape[i]):
            raise TypeDeductionError(
                f"{what} (valid_shape {fmt_shape(valid)}). Dimension {i} is valid for only part of its extent, so "
                f"the real data is scattered across the buffer rather than filling it from the start. {fix}"
            )
    trailing = 1
    for i in range(free + 1, len(valid)):
        extent = static_int(shape[i])
        if extent is None:
            raise TypeDeductionError(
                f"{op}: cannot reshape a partially-valid {fmt_shape(shape)} because dimension {i} has a runtime "
                f"extent; use a static shape, or reshape before narrowing."
            )
        trailing *= extent
    target = [static_int(d) for d in new]
    if any(t is None for t in target):
        raise TypeDeductionError(
            f"{op}: cannot reshape a partially-valid {fmt_shape(shape)} into {fmt_shape(new)} because a target "
            f"dimension has a runtime extent; use a static shape, or reshape before narrowing."
        )
    dims = [t for t in target if t is not None]
    suffix = [1] * len(dims)  # the row-major step of each target axis
    for i in range(len(dims) - 2, -1, -1):
        suffix[i] = suffix[i + 1] * dims[i + 1]

    def box(at: int, extent: Expr) -> tuple[Expr, ...]:
        return tuple(ConstInt(1) if i < at else extent if i == at else new[i] for i in range(len(new)))

    prefix = static_int(valid[free])
    if prefix is not None:
        elements = prefix * trailing
        for i, step in enumerate(suffix):
            if step and elements % step == 0 and elements // step <= dims[i]:
                return box(i, ConstInt(elements // step))
        raise TypeDeductionError(
            f"{what}: {elements} elements (valid_shape {fmt_shape(valid)}), and no region of {fmt_shape(new)} "
            f"covers exactly those elements. Pick a target shape whose trailing dimensions divide it, or copy "
            f"the real data out first (pl.slice / pl.store)."
        )
    physical = static_int(shape[free])
    if physical is not None:
        for i, step in enumerate(suffix):
            if step == trailing and physical <= dims[i]:
                return box(i, valid[free])
    raise TypeDeductionError(
        f"{what}: a runtime number of rows (valid_shape {fmt_shape(valid)}), and no dimension of {fmt_shape(new)} "
        f"has the matching row size of {trailing} elements. Keep that dimension intact in the target shape, or "
        f"copy the real data out first (pl.slice / pl.store)."
    )


def reinterpret_valid(
    op: str, valid: Sequence[Expr], shape: Sequence[Expr], new: Sequence[Expr], axis: int, src_bytes: int,
    dst_bytes: int, explicit: bool,
) -> tuple[Expr, ...]:  # fmt: skip
    """The valid shape of a byte-preserving reinterpretation: whole stays whole; a partial region keeps its
    extents but on the contiguous axis, which scales with the element width, and only through the automatic
    shape (an explicit other shape could scatter it)."""
    if all(same_extent(v, n) for v, n in zip(valid, shape)):
        return tuple(new)
    scaled = list(valid)
    auto = list(shape)
    for dims in (scaled, auto):
        dims[axis] = _scale(op, dims[axis], src_bytes, dst_bytes, axis)
    if explicit and (len(auto) != len(new) or not all(same_extent(a, b) for a, b in zip(auto, new))):
        raise TypeDeductionError(
            f"{op} cannot preserve a partial valid_shape through an arbitrary explicit reshape; omit shape or use "
            f"the layout-aware auto-detected shape {fmt_shape(auto)}"
        )
    return tuple(scaled)


def _scale(op: str, extent: Expr, src_bytes: int, dst_bytes: int, axis: int) -> Expr:
    if src_bytes == dst_bytes:
        return extent
    value = static_int(extent)
    if src_bytes > dst_bytes:
        factor = src_bytes // dst_bytes
        if value is not None:
            return ConstInt(value * factor)
        return BinOp("mul", extent, ConstInt(factor))
    divisor = dst_bytes // src_bytes
    if value is None or value % divisor:
        raise TypeDeductionError(
            f"{op}: valid_shape dimension {axis} ({extent}) is not provably divisible by {divisor} for the wider "
            f"target dtype; provide a static divisible extent"
        )
    return ConstInt(value // divisor)


# ---------------------------------------------------------------- the deductions


def _reshape(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    t = _tile(op, args, 0, "tile")
    shape = tuple_elems(op, args[1], "shape")
    n_in, n_out = static_count(t.shape), static_count(shape)
    if n_in is not None and n_out is not None and n_in != n_out:
        raise TypeDeductionError(
            f"{op}: cannot reshape {fmt_shape(t.shape)} ({n_in} elements) to {fmt_shape(shape)} ({n_out} elements)"
        )
    src = effective_view(t)
    # a source with no valid shape of its own is whole, and so is the result (its view then states none)
    valid = (
        None
        if src.valid_shape is None
        else reshape_valid(op, src.valid_shape, t.shape, shape, src.blayout is TileLayout.row_major)
    )
    if t.memory in BOXED_SPACES:
        # a space with a layout of its own (Acc and Mat NZ, Left, Right, the scales): the reshaped bytes keep it, so
        # a view the valid shape or the compact mode makes explicit names that layout, never Vec's defaults
        b, sl, f = implicit_layouts(tuple(shape), t.memory)
        view = TileView(valid_shape=valid, blayout=b, slayout=sl, fractal=f, pad=src.pad, compact=src.compact)
        return make_tile_type(shape, t.dtype, t.memory, view)
    view = TileView(valid_shape=valid,
                    blayout=_implicit_column_layout(shape), pad=src.pad, compact=src.compact)  # fmt: skip
    return make_tile_type(shape, t.dtype, None, view)


def _reinterpret(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    t = _tile(op, args, 0, "tile")
    dtype = kw.get("dtype", t.dtype)
    if len(args) > 1:
        shape = tuple_elems(op, args[1], "shape")
        n_in, n_out = static_count(t.shape), static_count(shape)
        if n_in is not None and n_out is not None and n_in * t.dtype.nbytes != n_out * dtype.nbytes:
            raise TypeDeductionError(
                f"{op}: {fmt_shape(t.shape)} {t.dtype.label} and {fmt_shape(shape)} {dtype.label} differ in bytes"
            )
        return make_tile_type(shape, dtype, t.memory, _reinterpreted(op, t, shape, dtype, True))
    last = static_int(t.shape[-1])
    if last is None or (last * t.dtype.nbytes) % dtype.nbytes:
        raise TypeDeductionError(
            f"{op}: the last dim of {fmt_shape(t.shape)} {t.dtype.label} cannot be reinterpreted as {dtype.label}"
        )
    shape = (*t.shape[:-1], ConstInt(last * t.dtype.nbytes // dtype.nbytes))
    return make_tile_type(shape, dtype, t.memory, _reinterpreted(op, t, shape, dtype, False))


def _reinterpreted(op: str, t: TileType, shape: Sequence[Expr], dtype: DataType, explicit: bool) -> TileView:
    """The source's layouts over the same bytes, its valid region scaled on the contiguous axis; a pad mode does
    not survive a change of element type."""
    src = effective_view(t)
    valid = None
    if src.valid_shape is not None:
        axis = (
            len(t.shape) - 2
            if src.blayout is TileLayout.col_major and len(t.shape) >= 2
            else len(t.shape) - 1
        )
        valid = reinterpret_valid(
            op, src.valid_shape, t.shape, shape, axis, t.dtype.nbytes, dtype.nbytes, explicit
        )
    return TileView(valid_shape=valid, blayout=src.blayout, slayout=src.slayout, fractal=src.fractal,
                    compact=src.compact)  # fmt: skip
