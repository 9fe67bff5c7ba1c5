"""Whether a pass's output keeps the pass's contract, function by function, without running it: every tile op of an
InCore function 2-D (TileOps2D, B-210 to B-213), every call one its op accepts, and every variable of the type its
op's own deduction gives (a flattened load or store keeps its N-D window, so a 2-D result of the same element
count is the deduction's too)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..errors import TypeDeductionError
from ..ir.expr import Call, Expr, static_int
from ..ir.ops import REGISTRY, deduce_type, fmt_shape
from ..ir.printer import python_print
from ..ir.stmt import AssignStmt, Function, Program, Stmt
from ..ir.types import TileType, Type
from ..ir.walk import walk_calls
from ..language.context import Finding
from ..passes.verify import tile_ops_2d_diagnostics


def contract_problems(fn: Function, findings: Sequence[Finding] = ()) -> list[str]:
    """What breaks the contract in one function of a pass's output, in program order of the kinds: calls the
    reading went past (their ops refuse them), TileOps2D, then types the ops' deductions do not give."""
    at = {call.span: stmt for stmt, call in walk_calls(fn.body) if call.span is not None}
    out = [f"{shown(at[f.span])}: {f.message}" for f in findings if f.span in at]
    by_span = {stmt.span: stmt for stmt, _ in walk_calls(fn.body) if stmt.span is not None}
    for d in tile_ops_2d_diagnostics(Program("_", (fn,))):
        stmt = by_span.get(d.span) if d.span is not None else None
        out.append(f"{shown(stmt)}: {d.message}" if stmt is not None else d.message)
    refused = {f.span for f in findings}
    for stmt, call in walk_calls(fn.body):
        if not isinstance(stmt, AssignStmt) or call.span in refused or not call.op.startswith("tile."):
            continue
        mismatch = _deduction_mismatch(call, stmt.var.type)
        if mismatch is not None:
            out.append(f"{shown(stmt)}: {mismatch}")
    return out


def shown(stmt: Stmt) -> str:
    """A statement as one line of the output's text, in backquotes."""
    return f"`{python_print(stmt).strip().splitlines()[0]}`"


def _deduction_mismatch(call: Call, declared: Type) -> str | None:
    """Why the declared type is not one the op's deduction gives on these operands (shape and dtype; the
    layouts and buffers a printed type spells are the reference's, which the deduction here need not copy)."""
    d = REGISTRY.get(call.op)
    if d is None or not d.deduces:
        return None
    try:
        deduced = deduce_type(call.op, call.args, dict(call.kwargs), declared)
    except TypeDeductionError as e:
        return f"its op refuses it: {e}"
    if not isinstance(deduced, TileType) or not isinstance(declared, TileType):
        return None
    if deduced.dtype != declared.dtype:
        return f"the op gives {deduced.dtype.label}, the output declares {declared.dtype.label}"
    if not _same_or_flattened(deduced.shape, declared.shape):
        return (
            f"the op gives shape {fmt_shape(deduced.shape)}, the output declares {fmt_shape(declared.shape)}"
        )
    return None


def _same_or_flattened(deduced: Sequence[Expr], declared: Sequence[Expr]) -> bool:
    """The same shape, or (a load's or a store's N-D window read into a 2-D tile) its 2-D flattening: the last
    dim, and the product of the others."""
    ded, dec = [static_int(d) for d in deduced], [static_int(d) for d in declared]
    if len(ded) == len(dec):
        return all(a is None or b is None or a == b for a, b in zip(ded, dec))
    if len(dec) != 2 or len(ded) < 2 or any(v is None for v in (*ded, *dec)):
        return len(dec) == 2 and len(ded) > 2  # (a dynamic dim: nothing to compare)
    return dec[1] == ded[-1] and dec[0] == math.prod(v for v in ded[:-1] if v is not None)
