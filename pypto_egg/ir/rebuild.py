"""Rebuilding IR after a rewrite: a substitution of variables through expressions, a call on other operands,
variables re-typed where their type changed, and an if's results re-typed from its yields. The lowering and
the loop-carry repair share them."""

from __future__ import annotations

import operator

from .equality import structural_equal
from .expr import (
    BinOp,
    Call,
    ConstBool,
    ConstFloat,
    ConstInt,
    DynDim,
    EnumLit,
    Expr,
    FuncRef,
    MakeTuple,
    TupleGetItem,
    UnaryOp,
    Var,
    type_of,
)
from .stmt import IfStmt, ScopeStmt, SeqStmts, Stmt, YieldStmt
from .tiles import retile
from .types import TileType, Type

Ctx = dict[int, Expr]  # variable uid -> what replaces it


def with_operands(call: Call, args: tuple[Expr, ...], type: Type | None = None) -> Call:
    """`call` on other operands of the same types and extents, which its deduction would give the same type
    (or the type given)."""
    return Call(call.op, args, call.type if type is None else type, call.kwargs, call.attrs, call.span,
                call.is_function)  # fmt: skip


def substitute(e: Expr, ctx: Ctx) -> Expr:
    """`e` with every mapped variable replaced; the same object when nothing changed. (Dispatch is on the exact
    class: the IR's node classes have no subclasses.)"""
    if type(e) is Var:
        return ctx.get(e.uid, e)
    if type(e) in _LEAVES:
        return e
    if type(e) is MakeTuple:
        if _LEAVES.issuperset(map(type, e.elements)):  # (offsets and shapes: constants, mostly)
            return e
        elems = tuple([substitute(x, ctx) for x in e.elements])
        return e if all(map(operator.is_, elems, e.elements)) else MakeTuple(elems, e.span)
    if type(e) is Call:
        args = tuple([substitute(a, ctx) for a in e.args])
        return e if all(map(operator.is_, args, e.args)) else with_operands(e, args)
    if isinstance(e, BinOp):
        lhs, rhs = substitute(e.lhs, ctx), substitute(e.rhs, ctx)
        return e if lhs is e.lhs and rhs is e.rhs else BinOp(e.op, lhs, rhs, e.span)
    if isinstance(e, UnaryOp):
        x = substitute(e.operand, ctx)
        return e if x is e.operand else UnaryOp(e.op, x, e.span)
    if isinstance(e, TupleGetItem):
        x = substitute(e.tuple, ctx)
        return e if x is e.tuple else TupleGetItem(x, e.index, e.span)
    return e


_LEAVES = frozenset({ConstInt, ConstFloat, ConstBool, DynDim, EnumLit, FuncRef})  # no variable inside


def carry(deduced: Type, old: Type) -> Type:
    """WithCarriedMemRef: keep a user-bound MemRef and a memory space the re-deduction does not state."""
    if not isinstance(deduced, TileType) or not isinstance(old, TileType):
        return deduced
    memref = deduced.memref or old.memref
    memory = deduced.memory if deduced.memory is not None else old.memory
    if memref == deduced.memref and memory == deduced.memory:
        return deduced
    return retile(deduced, memref=memref, memory=memory)


def retyped(v: Var, ty: Type, ctx: Ctx) -> Var:
    """`v` itself when its type is `ty`, else a new variable of that type, mapped in `ctx`."""
    if structural_equal(v.type, ty):
        ctx.pop(v.uid, None)
        return v
    nv = Var(v.name, ty, v.span)
    ctx[v.uid] = nv
    return nv


def if_results(
    s: IfStmt, then_body: tuple[Stmt, ...], else_body: tuple[Stmt, ...] | None, ctx: Ctx
) -> tuple[Var, ...]:
    """B-023: an if's return vars re-typed positionally from the first yield of its new then-body (else of
    its else-body)."""
    y = first_yield(then_body) or (first_yield(else_body) if else_body is not None else None)
    return tuple(
        retyped(rv, type_of(y.values[i]) if y is not None and i < len(y.values) else rv.type, ctx)
        for i, rv in enumerate(s.return_vars)
    )


def first_yield(body: tuple[Stmt, ...]) -> YieldStmt | None:
    for s in body:
        if isinstance(s, YieldStmt):
            return s
        if isinstance(s, SeqStmts | ScopeStmt):
            found = first_yield(s.stmts if isinstance(s, SeqStmts) else s.body)
            if found is not None:
                return found
    return None
