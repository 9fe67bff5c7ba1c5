"""Values for the dynamic dims of a function's inputs that nothing binds: large enough for every static
window a load or store reads or writes on that axis, so the function can run on random inputs."""

from __future__ import annotations

from ..ir.expr import Call, ConstInt, DynDim, Expr, MakeTuple, Var, type_of
from ..ir.stmt import Function
from ..ir.types import TensorType, TileType
from ..ir.walk import dynamic_dim_names, walk_calls


def _static(e: Expr) -> list[int | None]:
    elems = e.elements if isinstance(e, MakeTuple) else ()
    return [x.value if isinstance(x, ConstInt) else None for x in elems]


def _need(tensor: Expr, offsets: Expr, extents: list[int | None], out: dict[str, int]) -> None:
    ty = type_of(tensor)
    if not isinstance(tensor, Var) or not isinstance(ty, TensorType):
        return
    offs = _static(offsets)
    pad: list[int | None] = [None] * (len(ty.shape) - len(extents))  # a lower-rank tile: the trailing axes
    for dim, o, n in zip(ty.shape, offs, pad + extents):
        if isinstance(dim, DynDim) and o is not None and n is not None:
            out[dim.name] = max(out.get(dim.name, 0), o + n)


def _window_needs(call: Call, out: dict[str, int]) -> None:
    a = call.args
    if call.op == "tile.load" and len(a) >= 3:
        _need(a[0], a[1], _static(a[2]), out)
    elif call.op == "tile.store" and len(a) >= 3:
        tile = type_of(a[0])
        if len(a) > 3:
            _need(a[2], a[1], _static(a[3]), out)
        elif isinstance(tile, TileType):
            _need(a[2], a[1], [d.value if isinstance(d, ConstInt) else None for d in tile.shape], out)


def dynamic_sizes(fn: Function, default: int) -> dict[str, int]:
    """Every pl.dynamic dim of the parameters' and the body's types: `default`, or more where a static window
    needs it."""
    needs: dict[str, int] = {}
    names: set[str] = set()
    dynamic_dim_names(fn.params, names)
    for _, call in walk_calls(fn.body):
        _window_needs(call, needs)
        dynamic_dim_names(call.type, names)
    return {name: max(default, needs.get(name, 0)) for name in sorted(names)}
