"""Precondition analysis (B-010..B-013): read-only checks raised before anything is rewritten.

These are type facts of single calls. The one precondition that is a shape decision — whether an
N-D assemble writes a contiguous row band (D-07) — is made by rules/assemble.egg and reported by the
pass before lowering.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import diagnostics as diag
from ..ir.expr import INT64_MAX, Call, ConstInt, MakeTuple, static_int, tile_operand_types, type_of
from ..ir.ops import REGISTRY, fmt_shape
from ..ir.span import Span
from ..ir.stmt import AssignStmt, Function
from ..ir.types import TileType
from ..ir.walk import walk_calls

_ND_UNSUPPORTED = ("tile.read", "tile.write", "tile.slice")
_ROW_REDUCE = ("tile.row_sum", "tile.row_max", "tile.row_min")


def check_merged_rows(op: str, t: TileType, var: str | None, span: Span | None) -> None:
    """D-02b: the flattened row count must fit a 64-bit index (egglog's i64 would overflow)."""
    merged = 1
    for d in t.shape[:-1]:
        dim = static_int(d) or 1
        if merged * dim > INT64_MAX:
            raise diag.merged_dim_overflow(f"{op} tile {fmt_shape(t.shape)}", merged, dim, var, span)
        merged *= dim


def _nd_tile_types(call: Call, result: object) -> Sequence[TileType]:
    """The N-D tile types among a call's operands and result, operands first. Every precondition is about
    an N-D tile, so a call without one is done at once."""
    out = tile_operand_types(call.args, 3)
    if type(result) is TileType and len(result.shape) > 2:
        return [*out, result]
    return out


def check_preconditions(fn: Function) -> None:
    checked: set[int] = set()  # N-D tile types whose dims passed (variables share their type object)
    for stmt, call in walk_calls(fn.body):
        for a in call.args:
            if type(a) is Call and not a.is_function and a.op.startswith("tile."):
                raise diag.nested_tile_call(a.op, call.op, *_where(stmt, call))
        nd = _nd_tile_types(call, stmt.var.type if type(stmt) is AssignStmt else call.type)
        if not nd:
            continue
        op = call.op
        # an op without a deduction is refused only where its result would be a flattened tile of unknown type;
        # one that yields no tile (pld.tile.remote_store) takes its flattened operands as it is (B-090)
        if not REGISTRY[op].deduces and isinstance(call.type, TileType):
            raise diag.no_deduction_on_nd(op, nd[0].shape, *_where(stmt, call))
        if not op.startswith("tile."):
            continue
        for t in nd:
            if id(t) not in checked:
                checked.add(id(t))
                _check_dims(op, t, stmt, call)
        if not call.args:
            continue
        arg0 = type_of(call.args[0])
        if not (isinstance(arg0, TileType) and len(arg0.shape) > 2):
            continue
        if op in _ND_UNSUPPORTED:
            raise diag.unsupported_on_nd(op, arg0.shape, *_where(stmt, call))
        if op == "tile.assemble" and len(call.args) == 3:
            var, span = _where(stmt, call)
            src, offset = type_of(call.args[1]), call.args[2]
            if not isinstance(src, TileType) or not isinstance(offset, MakeTuple):
                raise diag.assemble_not_literal(var, span)
            if len(offset.elements) != arg0.rank:
                raise diag.assemble_offset_rank(arg0.rank, len(offset.elements), var, span)
            if src.rank != arg0.rank:
                raise diag.assemble_source_rank(arg0.rank, src.shape, var, span)
        if op in _ROW_REDUCE and not call.kwarg("keepdim", True):
            raise diag.reduce_keepdim(op, *_where(stmt, call))


def _where(stmt: object, call: Call) -> tuple[str | None, Span | None]:
    """The variable and span a diagnostic names."""
    var = stmt.var.name if isinstance(stmt, AssignStmt) else None
    return var, getattr(stmt, "span", None) or call.span


def _check_dims(op: str, t: TileType, stmt: object, call: Call) -> None:
    """B-011 / D-02: every physical dim of an N-D tile is a positive constant, and its merged rows fit a
    64-bit index (the diagnostics are built only for a shape that fails)."""
    rows = 1
    for d in t.shape[:-1]:
        if type(d) is not ConstInt or d.value <= 0:
            break
        rows *= d.value
    else:
        last = t.shape[-1]
        if type(last) is ConstInt and last.value > 0 and rows <= INT64_MAX:
            return
    for i, d in enumerate(t.shape):
        value = static_int(d)
        if value is None:
            raise diag.dynamic_physical_dim(op, i, t.shape, *_where(stmt, call))
        if value <= 0:
            raise diag.non_positive_dim(i, f"{op} tile {fmt_shape(t.shape)}", value, *_where(stmt, call))
    check_merged_rows(op, t, *_where(stmt, call))
