"""Windows that reach outside their tensor or tile, found without running the program: every load, store, slice
and assemble whose offsets, box and bounds are all constants. The interpreter checks the others as it runs
(`interp.run(..., strict=True)`)."""

from __future__ import annotations

from collections.abc import Sequence

from ..ir.expr import Call, Expr, MakeTuple, static_int, type_of
from ..ir.printer import python_print
from ..ir.stmt import Function, Stmt
from ..ir.types import TensorType, TileType
from ..ir.walk import walk_calls


def static_ints(items: Sequence[Expr]) -> tuple[int, ...] | None:
    values = [static_int(d) for d in items]
    return None if any(v is None for v in values) else tuple(v for v in values if v is not None)


def _literal(e: Expr) -> tuple[int, ...] | None:
    return static_ints(e.elements) if isinstance(e, MakeTuple) else None


def _shape(e: Expr) -> tuple[int, ...] | None:
    t = type_of(e)
    return static_ints(t.shape) if isinstance(t, TensorType | TileType) else None


def _valid(e: Expr) -> tuple[int, ...] | None:
    t = type_of(e)
    return static_ints(t.valid_shape) if isinstance(t, TileType) else None


def _outside(offsets: tuple[int, ...], box: tuple[int, ...], bounds: tuple[int, ...]) -> bool:
    return len(offsets) == len(box) == len(bounds) and any(
        o < 0 or o + n > b for o, n, b in zip(offsets, box, bounds)
    )


def window_of(call: Call) -> tuple[str, tuple[int, ...], tuple[int, ...], tuple[int, ...]] | None:
    """(what the window lies in, offsets, box, bounds) of a call whose window is all constants, or None."""
    a = call.args
    op = call.op
    if op == "tile.load" and len(a) >= 3:
        box = _literal(a[3]) if len(a) > 3 else _literal(a[2])  # the valid part is what is read
        found = _literal(a[1]), box, _shape(a[0])
        kind = "tensor"
    elif op == "tile.store" and len(a) >= 3:
        dst = _shape(a[2])
        if len(a) > 3:
            box = _literal(a[3])
        else:  # the tile's valid dims, on the tensor's trailing axes
            valid = _valid(a[0])
            box = None if valid is None or dst is None or len(valid) != len(dst) else valid
        found = _literal(a[1]), box, dst
        kind = "tensor"
    elif op == "tile.slice" and len(a) >= 3:
        found = _literal(a[2]), _literal(a[1]), _shape(a[0])
        kind = "tile"
    elif op == "tile.assemble" and len(a) == 3:
        found = _literal(a[2]), _shape(a[1]), _shape(a[0])
        kind = "tile"
    else:
        return None
    offsets, box, bounds = found
    if offsets is None or box is None or bounds is None:
        return None
    return kind, offsets, box, bounds


def static_bounds(fn: Function) -> tuple[Stmt, str] | None:
    """The first statement whose constant window reaches outside its tensor or tile, and what it reaches."""
    for stmt, call in walk_calls(fn.body):
        window = window_of(call)
        if window is None:
            continue
        kind, offsets, box, bounds = window
        if _outside(offsets, box, bounds):
            text = python_print(stmt).strip().splitlines()[0]
            return stmt, (
                f"`{text}`: the window at {list(offsets)} of extent {list(box)} reaches outside its {kind} "
                f"{list(bounds)} (axis {_first_axis(offsets, box, bounds)})"
            )
    return None


def _first_axis(offsets: tuple[int, ...], box: tuple[int, ...], bounds: tuple[int, ...]) -> str:
    for i, (o, n, b) in enumerate(zip(offsets, box, bounds)):
        if o < 0 or o + n > b:
            return f"{i}: {o} + {n} > {b}" if o >= 0 else f"{i}: offset {o} < 0"
    return "?"
