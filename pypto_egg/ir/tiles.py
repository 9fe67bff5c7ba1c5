"""Tile types in canonical form: the implicit layouts of a shape in a space, and the views the reference
stores. These read the dimensions' values (ir.expr), so they sit above both the types and the expressions."""

from __future__ import annotations

from typing import Any

from .expr import exprs_equal, static_int
from .node import replaced
from .types import CompactMode, DataType, MemorySpace, MemRef, PadValue, Shape, TileLayout, TileType, TileView


def tile_layouts(t: TileType) -> tuple[TileLayout, TileLayout, int]:
    """(blayout, slayout, fractal) of a tile: its view's where it names them, else the implicit ones."""
    b, s, f = implicit_layouts(t.shape, t.memory)
    v = t.view
    if v is None:
        return b, s, f
    return (
        v.blayout if v.blayout is not None else b,
        v.slayout if v.slayout is not None else s,
        v.fractal if v.fractal is not None else f,
    )


def tile_nbytes(t: TileType) -> int | None:
    """A tile's size in bytes, or None when a dimension is not static."""
    total = t.dtype.nbytes
    for d in t.shape:
        v = static_int(d)
        if v is None:
            return None
        total *= v
    return total


def implicit_layouts(shape: Shape, memory: MemorySpace | None) -> tuple[TileLayout, TileLayout, int]:
    """(blayout, slayout, fractal) a tile of this shape gets in this space when it has no view: a column
    vector [N, 1] (N > 1) is col_major, and each on-chip matrix space has its box layout."""
    if memory is MemorySpace.Mat or memory is MemorySpace.Left:
        return TileLayout.col_major, TileLayout.row_major, 512
    if memory is MemorySpace.Acc:
        return TileLayout.col_major, TileLayout.row_major, 1024
    if memory is MemorySpace.LeftScale:
        return TileLayout.row_major, TileLayout.row_major, 32
    if memory is MemorySpace.RightScale:
        return TileLayout.col_major, TileLayout.col_major, 32
    column = len(shape) == 2 and static_int(shape[1]) == 1 and (static_int(shape[0]) or 0) > 1
    blayout = TileLayout.col_major if column else TileLayout.row_major
    if memory is MemorySpace.Right:
        return blayout, TileLayout.col_major, 512
    return blayout, TileLayout.none_box, 512


# the spaces whose tiles have a box layout of their own (`implicit_layouts`), where any other space has Vec's
BOXED_SPACES = frozenset({MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc,
                          MemorySpace.LeftScale, MemorySpace.RightScale})  # fmt: skip

# the layouts of a view that does not name them: those of a freshly constructed view, whatever the shape
DEFAULT_LAYOUTS = (TileLayout.row_major, TileLayout.none_box, 512)


def make_tile_type(
    shape: Shape,
    dtype: DataType,
    memory: MemorySpace | None = None,
    view: TileView | None = None,
    memref: MemRef | None = None,
) -> TileType:
    """A TileType in canonical form: no view when the view is the implicit one (see `canonical_view`)."""
    return TileType(tuple(shape), dtype, memory, canonical_view(tuple(shape), memory, view), memref)


def canonical_view(shape: Shape, memory: MemorySpace | None, view: TileView | None) -> TileView | None:
    """A tile's view as the reference stores it: none when it says nothing the shape and space do not
    (the whole shape valid, no stride, offset, pad or compact, the implicit layouts), else every field,
    the layouts absolute. A layout the view does not name is the default one (DEFAULT_LAYOUTS), as for a
    view an op builds; `printed_view` reads a printed view, whose omitted layouts are the implicit ones."""
    if view is None:
        return None
    valid = view.valid_shape
    if valid is not None and len(valid) == len(shape) and all(map(exprs_equal, valid, shape)):
        valid = None
    fields = (
        tuple(valid) if valid is not None else None,
        tuple(view.stride) if view.stride else None,
        view.start_offset,
        view.blayout or DEFAULT_LAYOUTS[0],
        view.slayout or DEFAULT_LAYOUTS[1],
        view.fractal or DEFAULT_LAYOUTS[2],
        None if view.pad in (None, PadValue.null) else view.pad,
        None if view.compact in (None, CompactMode.null) else view.compact,
    )
    if (
        fields[:3] == _NO_DATA
        and fields[6:] == _NO_DATA[:2]
        and fields[3:6] == implicit_layouts(shape, memory)
    ):
        return None
    return TileView(*fields)


def printed_view(shape: Shape, memory: MemorySpace | None, view: TileView | None) -> TileView | None:
    """A view as a printer writes it, which leaves out each layout equal to the implicit one."""
    if view is None:
        return None
    b, s, f = implicit_layouts(tuple(shape), memory)
    return canonical_view(
        tuple(shape),
        memory,
        replaced(view, blayout=view.blayout or b, slayout=view.slayout or s, fractal=view.fractal or f),
    )


def implicit_view(shape: Shape, memory: MemorySpace | None) -> TileView:
    """The implicit view of a shape in a space, its layouts spelled out."""
    b, s, f = implicit_layouts(tuple(shape), memory)
    return TileView(blayout=b, slayout=s, fractal=f)


def effective_view(t: TileType) -> TileView:
    """The view a tile has, its implicit one spelled out when it has none (the valid shape left unset)."""
    return t.view if t.view is not None else implicit_view(t.shape, t.memory)


_NO_DATA = (None, None, None)


def retile(t: TileType, **changes: object) -> TileType:
    """A copy of `t` with fields changed, re-canonicalising the view for the new shape and space."""
    fields: dict[str, Any] = {
        "shape": t.shape,
        "dtype": t.dtype,
        "memory": t.memory,
        "view": t.view,
        "memref": t.memref,
    }
    fields.update(changes)  # (an unknown field is refused by make_tile_type)
    return make_tile_type(**fields)
