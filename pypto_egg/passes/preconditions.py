"""Precondition analysis (B-010..B-013): read-only checks raised before anything is rewritten.

These are type facts of single calls. The one precondition that is a shape decision — whether an
N-D assemble writes a contiguous row band (D-07) — is made by rules/assemble.egg and reported by the
pass before lowering.
"""

from __future__ import annotations

from ..egraph.encode import walk_calls
from ..ir.expr import Call, MakeTuple, static_int, tile_operand_types, type_of
from ..ir.ops import REGISTRY, fmt_shape
from ..ir.span import Span
from ..ir.stmt import AssignStmt, Function
from ..ir.types import TileType, is_nd_tile
from . import diagnostics as diag

_ND_UNSUPPORTED = ("tile.read", "tile.write", "tile.slice")
_ROW_REDUCE = ("tile.row_sum", "tile.row_max", "tile.row_min")
_INT64_MAX = 2**63 - 1


def check_merged_rows(op: str, t: TileType, var: str | None, span: Span | None) -> None:
    """D-02b: the flattened row count must fit a 64-bit index (egglog's i64 would overflow)."""
    merged = 1
    for d in t.shape[:-1]:
        dim = static_int(d) or 1
        if merged * dim > _INT64_MAX:
            raise diag.merged_dim_overflow(f"{op} tile {fmt_shape(t.shape)}", merged, dim, var, span)
        merged *= dim


def _tile_types(call: Call, result: object) -> list[TileType]:
    """The tile types of a call's operands and result."""
    out = tile_operand_types(call.args)
    if isinstance(result, TileType):
        out.append(result)
    return out


def check_preconditions(fn: Function) -> None:
    checked: set[int] = set()  # N-D tile types whose dims passed (variables share their type object)
    for stmt, call in walk_calls(fn.body):
        result = stmt.var.type if isinstance(stmt, AssignStmt) else call.type
        tiles = _tile_types(call, result)
        if not tiles:
            continue
        var = stmt.var.name if isinstance(stmt, AssignStmt) else None
        span = stmt.span or call.span
        if not REGISTRY[call.op].deduces:
            nd = next((t for t in tiles if is_nd_tile(t)), None)
            if nd is not None:
                raise diag.no_deduction_on_nd(call.op, nd.shape, var, span)
            continue
        if not call.op.startswith("tile."):
            continue
        for t in tiles:
            if t.rank > 2 and id(t) not in checked:
                checked.add(id(t))
                for i, d in enumerate(t.shape):
                    value = static_int(d)
                    if value is None:
                        raise diag.dynamic_physical_dim(call.op, i, t.shape, var, span)
                    if value <= 0:
                        raise diag.non_positive_dim(
                            i, f"{call.op} tile {fmt_shape(t.shape)}", value, var, span
                        )
                check_merged_rows(call.op, t, var, span)
        if not call.args:
            continue
        arg0 = type_of(call.args[0])
        nd_arg0 = isinstance(arg0, TileType) and arg0.rank > 2
        if call.op in _ND_UNSUPPORTED and nd_arg0:
            assert isinstance(arg0, TileType)
            raise diag.unsupported_on_nd(call.op, arg0.shape, var, span)
        if call.op == "tile.assemble" and len(call.args) == 3 and nd_arg0:
            assert isinstance(arg0, TileType)
            src, offset = type_of(call.args[1]), call.args[2]
            if not isinstance(src, TileType) or not isinstance(offset, MakeTuple):
                raise diag.assemble_not_literal(var, span)
            if len(offset.elements) != arg0.rank:
                raise diag.assemble_offset_rank(arg0.rank, len(offset.elements), var, span)
            if src.rank != arg0.rank:
                raise diag.assemble_source_rank(arg0.rank, src.shape, var, span)
        if call.op in _ROW_REDUCE and nd_arg0 and not call.kwarg("keepdim", True):
            raise diag.reduce_keepdim(call.op, var, span)
