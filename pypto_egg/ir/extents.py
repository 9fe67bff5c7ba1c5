"""Reasoning on valid extents, as the reference's type deduction does it: what can be proved about `a <= b`
from constants, equal expressions and min/max, and the valid region a window read of a partly valid source
has (the same rule for every window read: tile.slice's, a page of a batched matmul)."""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

from .expr import BinOp, ConstInt, Expr, exprs_equal, static_int


class Proof(Enum):
    true = "true"
    false = "false"
    unknown = "unknown"


def prove_le(a: Expr, b: Expr) -> Proof:
    """`a <= b`, proved from what the expressions show (no assumption on a free variable)."""
    if exprs_equal(a, b):
        return Proof.true
    x, y = static_int(a), static_int(b)
    if x is not None and y is not None:
        return Proof.true if x <= y else Proof.false
    lower = (a.lhs, a.rhs) if isinstance(a, BinOp) and a.op == "min" else ()  # min(p, q) <= b if p or q is
    upper = (b.lhs, b.rhs) if isinstance(b, BinOp) and b.op == "max" else ()  # a <= max(p, q) if a <= p or q
    both = (b.lhs, b.rhs) if isinstance(b, BinOp) and b.op == "min" else ()  # a <= min(p, q) if a <= p and q
    if any(prove_le(x, b) is Proof.true for x in lower) or any(prove_le(a, y) is Proof.true for y in upper):
        return Proof.true
    if both and all(prove_le(a, y) is Proof.true for y in both):
        return Proof.true
    return Proof.unknown


def min_extent(a: Expr, b: Expr) -> Expr:
    if prove_le(a, b) is Proof.true:
        return a
    if prove_le(b, a) is Proof.true:
        return b
    return BinOp("min", a, b)


def _remaining(valid: Expr, offset: Expr) -> Expr:
    """max(valid, offset) - offset: the source's valid extent past the offset, never negative."""
    if static_int(offset) == 0:
        return valid
    v, o = static_int(valid), static_int(offset)
    if v is not None and o is not None:
        return ConstInt(max(v, o) - o)
    return BinOp("sub", BinOp("max", valid, offset), offset)


def window_valid(
    physical: Sequence[Expr], valid: Sequence[Expr], offsets: Sequence[Expr], window: Sequence[Expr],
    requested: Sequence[Expr] | None = None,
) -> tuple[Expr, ...]:  # fmt: skip
    """The valid region of a window [offsets, offsets + window) of a source: on each axis, the window where the
    source is whole, else the source's valid extent under it; a request is kept unless the source is provably
    narrower."""
    out: list[Expr] = []
    for i, (n, v, o, w) in enumerate(zip(physical, valid, offsets, window)):
        available = w if exprs_equal(v, n) else min_extent(_remaining(v, o), w)
        if not requested:
            out.append(available)
            continue
        r = requested[i]
        narrower = not exprs_equal(available, w) and prove_le(available, r) is Proof.true
        out.append(available if narrower else r)
    return tuple(out)
