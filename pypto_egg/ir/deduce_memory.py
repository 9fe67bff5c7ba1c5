"""Type deduction of a load and a store: the tile a window of a tensor reads (its layouts, its valid region, and
the bounds PyPTO refuses a read for) and the offsets a store may give."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import RefusedType, TypeDeductionError
from .deduce_common import _tensor, _tile, _type_name, fmt_shape, tuple_elems
from .expr import ConstInt, Expr, static_int, type_of
from .extents import window_valid
from .registry import Kwargs
from .tiles import DEFAULT_LAYOUTS, make_tile_type
from .types import MemorySpace, TensorLayout, TensorType, TileLayout, TileType, TileView, Type

MX_SCALE_FRACTAL = 32  # bytes of an MX scale tile's fractal


def _load(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    src = _tensor(op, args, 0, "tensor")
    offsets = tuple_elems(op, args[1], "offsets")
    shapes = tuple_elems(op, args[2], "shapes")
    valid = tuple_elems(op, args[3], "valid_shape") if len(args) > 3 else shapes
    if not (len(offsets) == len(shapes) == len(valid) == src.rank):
        raise TypeDeductionError(
            f"{op}: offsets {fmt_shape(offsets)}, shapes {fmt_shape(shapes)} and valid_shape {fmt_shape(valid)} "
            f"must each have one entry per axis of the rank-{src.rank} tensor {fmt_shape(src.shape)}"
        )
    memory = kw.get("target_memory")
    blayout, slayout = DEFAULT_LAYOUTS[0], DEFAULT_LAYOUTS[1]
    fractal = None
    if src.layout in (TensorLayout.MX_A_ZZ, TensorLayout.MX_B_NN):  # an MX scale: row-major ZZ / col-major NN
        blayout = slayout = (
            TileLayout.col_major if src.layout is TensorLayout.MX_B_NN else TileLayout.row_major
        )
        fractal = MX_SCALE_FRACTAL
    elif memory is MemorySpace.Mat:
        blayout, slayout = TileLayout.col_major, TileLayout.row_major
        dn = src.layout is TensorLayout.DN
        if dn:
            blayout, slayout = slayout, blayout
        if len(shapes) == 2 and static_int(shapes[1 if dn else 0]) == 1:  # a 2-D row vector is ND
            blayout, slayout = TileLayout.row_major, TileLayout.none_box
    elif memory is not None and static_int(shapes[-1]) == 1:
        blayout = TileLayout.col_major
    valid = _read_bounds(op, src, offsets, shapes, valid, bool(kw.get("clamp")))
    if src.view is not None and src.view.valid_shape:  # only what the source holds is read
        valid = window_valid(src.shape, src.view.valid_shape, offsets, shapes, valid)
    view = TileView(valid_shape=valid, blayout=blayout, slayout=slayout, fractal=fractal)
    return make_tile_type(shapes, src.dtype, memory, view)


def _read_bounds(
    op: str,
    src: TensorType,
    offsets: Sequence[Expr],
    shapes: Sequence[Expr],
    valid: Sequence[Expr],
    clamp: bool,
) -> tuple[Expr, ...]:
    """What a load promises of each axis its constants decide, as PyPTO's reader and deduction refuse it: the window
    starts inside its source, the valid region fits the window, and (unless it clamps) the extent read ends inside
    the source. `clamp=True` narrows the valid region to the source's edge instead."""
    out = list(valid)
    for i, (o, w, v, n) in enumerate(zip(offsets, shapes, valid, src.shape)):
        oi, wi, vi, ni = static_int(o), static_int(w), static_int(v), static_int(n)
        if oi is not None and oi < 0:
            raise RefusedType(f"{op} offset {i} is provably negative ({oi}); a window must start inside its "
                                     f"source")  # fmt: skip
        if vi is not None and wi is not None and vi > wi:
            raise RefusedType(
                f"{op} valid_shape {i} is {vi}, which exceeds the window extent {wi}; a valid region cannot be "
                f"larger than the shape that holds it"
            )
        if oi is None or vi is None or ni is None or oi + vi <= ni:
            continue
        if clamp:
            out[i] = ConstInt(max(ni - oi, 0))
            continue
        raise RefusedType(
            f"{op} reads past the end of dimension {i}: offset {oi} + extent {vi} exceeds the source extent {ni}. "
            f"Pass clamp=True -- pl.load(x, offsets, shapes, clamp=True) -- to narrow the read to the source edge "
            f"instead"
        )
    return tuple(out)


def _store(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    _tile(op, args, 0, "tile")
    dst = type_of(args[2])
    if not isinstance(dst, TensorType):
        raise TypeDeductionError(f"{op}: operand 'output_tensor' must be a tensor, got {_type_name(dst)}")
    offsets = tuple_elems(op, args[1], "offsets")
    if len(offsets) != dst.rank:
        _extra_offsets(op, offsets, _tile(op, args, 0, "tile"), dst)
    if len(args) > 3:
        tuple_elems(op, args[3], "shapes")
    return dst


def _extra_offsets(op: str, offsets: Sequence[Expr], tile: TileType, dst: TensorType) -> None:
    """A store may give more offsets than its tensor has axes: one per axis of a tile with more axes than the
    tensor (B-055, as the reference keeps them), each extra leading one 0 on an axis of extent 1 the tensor
    lacks. Any other count is an error naming the shapes and the fix."""
    extra = len(offsets) - dst.rank
    lead = tile.shape[: max(0, tile.rank - dst.rank)]
    if (
        extra > 0
        and all(static_int(o) == 0 for o in offsets[:extra])
        and all(static_int(d) == 1 for d in lead)
    ):
        return
    raise TypeDeductionError(
        f"{op}: {len(offsets)} offsets {fmt_shape(offsets)} for the tile {fmt_shape(tile.shape)} and the rank-"
        f"{dst.rank} tensor {fmt_shape(dst.shape)}: give one offset per axis of the tensor (a tile with more axes "
        f"than its tensor may have one per tile axis, each extra leading axis of extent 1 at offset 0)"
    )
