"""Walks over statement bodies: every pass, checker and interpreter helper reads nested blocks the same way."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from .expr import Call, DynDim
from .stmt import AssignStmt, EvalStmt, ForStmt, IfStmt, ScopeStmt, SeqStmts, Stmt, WhileStmt


def walk_calls(body: tuple[Stmt, ...]) -> Iterator[tuple[Stmt, Call]]:
    """Every statement whose value is an op call, in program order, through nested blocks."""
    for s in body:
        if type(s) is AssignStmt:
            value = s.value
        elif type(s) is EvalStmt:
            value = s.expr
        else:
            for inner in child_bodies(s):
                yield from walk_calls(inner)
            continue
        if type(value) is Call and not value.is_function:
            yield s, value


def child_bodies(s: Stmt) -> tuple[tuple[Stmt, ...], ...]:
    """The statement lists nested directly inside a statement."""
    children = _CHILD_BODIES.get(type(s))
    return children(s) if children is not None else ()


_CHILD_BODIES: dict[type, Callable[[Any], tuple[tuple[Stmt, ...], ...]]] = {
    SeqStmts: lambda s: (s.stmts,),
    ScopeStmt: lambda s: (s.body,),
    IfStmt: lambda s: (s.then_body,) if s.else_body is None else (s.then_body, s.else_body),
    ForStmt: lambda s: (s.body,),
    WhileStmt: lambda s: (s.body,),
}  # by exact class: the IR's statement classes have no subclasses
NESTING: frozenset[type] = frozenset(_CHILD_BODIES)  # the statement classes that hold a block


def blocks(body: tuple[Stmt, ...]) -> Iterator[tuple[Stmt, ...]]:
    """Every statement list of a body, outermost first."""
    yield body
    for s in body:
        children = _CHILD_BODIES.get(type(s))  # (most statements hold no block: one look-up, no call)
        if children is not None:
            for inner in children(s):
                yield from blocks(inner)


def dynamic_dim_names(node: object, out: set[str]) -> None:
    """The names of the pl.dynamic dims anywhere in a node: its fields, tuples, lists and dicts, spans aside."""
    if isinstance(node, DynDim):
        out.add(node.name)
    elif isinstance(node, tuple | list):
        for x in node:
            dynamic_dim_names(x, out)
    elif isinstance(node, dict):
        for x in node.values():
            dynamic_dim_names(x, out)
    elif hasattr(node, "__dataclass_fields__"):
        for f in node.__dataclass_fields__:
            if f != "span":
                dynamic_dim_names(getattr(node, f), out)
