"""What every type deduction shares: operand checks, shape spelling, and the view a vector op's result
inherits."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import TypeDeductionError
from .expr import Expr, MakeTuple, static_int, type_of
from .printer import print_expr, print_type
from .tiles import effective_view, implicit_layouts, make_tile_type
from .types import DataType, MemorySpace, TensorType, TileLayout, TileType, TileView, Type


def fmt_shape(shape: Sequence[Expr]) -> str:
    return "[" + ", ".join(print_expr(d) for d in shape) + "]"


def _tile(op: str, args: Sequence[Expr], i: int, what: str) -> TileType:
    t = type_of(args[i])
    if not isinstance(t, TileType):
        raise TypeDeductionError(f"{op}: operand '{what}' must be a tile, got {_type_name(t)}")
    return t


def _tensor(op: str, args: Sequence[Expr], i: int, what: str) -> TensorType:
    t = type_of(args[i])
    if not isinstance(t, TensorType):
        raise TypeDeductionError(f"{op}: operand '{what}' must be a tensor, got {_type_name(t)}")
    return t


def _type_name(t: Type) -> str:
    return print_type(t)


def tuple_elems(op: str, e: Expr, what: str) -> tuple[Expr, ...]:
    if isinstance(e, MakeTuple):
        return e.elements
    raise TypeDeductionError(f"{op}: operand '{what}' must be a list of dims like [2, 3, 4]")


def _same_dim(a: Expr, b: Expr) -> bool:
    sa, sb = static_int(a), static_int(b)
    return sa is None or sb is None or sa == sb


def _inherited(src: TileType, valid: Sequence[Expr] | None) -> TileView:
    """A fresh view over `valid` with the operand's layouts, pad and compact mode (its fractal is the
    default one): what a vector op's result carries."""
    eff = effective_view(src)
    return TileView(valid_shape=tuple(valid) if valid is not None else None, blayout=eff.blayout,
                    slayout=eff.slayout, pad=eff.pad, compact=eff.compact)  # fmt: skip


def _elementwise_result(
    src: TileType, dtype: DataType | None = None, shape: Sequence[Expr] | None = None
) -> TileType:
    """A vector op's result: the operand's valid shape and layouts, left unplaced (the registry puts it in
    Vec). An operand in Vec with the implicit view gives its own type back: types are immutable."""
    if (
        src.view is None and src.memory is MemorySpace.Vec and src.memref is None
        and (dtype is None or dtype is src.dtype) and (shape is None or shape == src.shape)
    ):  # fmt: skip
        return src
    view = _inherited(src, src.view.valid_shape if src.view is not None else None)
    return make_tile_type(tuple(shape or src.shape), dtype or src.dtype, None, view)


def _implicit_column_layout(shape: Sequence[Expr]) -> TileLayout:
    """The block layout a shape implies with no memory space: col_major for a column vector [N, 1]."""
    return implicit_layouts(tuple(shape), None)[0]


def static_count(shape: Sequence[Expr]) -> int | None:
    """The element count of a shape, or None when a dim is not static."""
    n = 1
    for d in shape:
        v = static_int(d)
        if v is None:
            return None
        n *= v
    return n
