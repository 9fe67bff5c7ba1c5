"""Statements, functions and programs."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from .expr import Expr, Var
from .node import fast_init
from .span import Span
from .types import Type


@fast_init
@dataclass(frozen=True, slots=True)
class AssignStmt:
    var: Var
    value: Expr
    span: Span | None = field(default=None, compare=False)


@fast_init
@dataclass(frozen=True, slots=True)
class EvalStmt:
    expr: Expr
    span: Span | None = field(default=None, compare=False)


@fast_init
@dataclass(frozen=True, slots=True)
class SeqStmts:
    stmts: tuple[Stmt, ...]
    span: Span | None = field(default=None, compare=False)


@fast_init
@dataclass(frozen=True, slots=True)
class IterArg:
    """A loop-carried value: `var` inside the body, seeded by `init`."""

    var: Var
    init: Expr


class LoopKind(enum.Enum):
    range = "range"
    parallel = "parallel"
    unroll = "unroll"
    pipeline = "pipeline"
    split_aiv = "split_aiv"


@fast_init
@dataclass(frozen=True, slots=True)
class ForStmt:
    loop_var: Var
    start: Expr
    stop: Expr
    step: Expr
    iter_args: tuple[IterArg, ...]
    body: tuple[Stmt, ...]
    return_vars: tuple[Var, ...]
    kind: LoopKind = LoopKind.range
    stage: int | None = None
    span: Span | None = field(default=None, compare=False)
    kwargs: tuple[tuple[str, Any], ...] = ()  # other loop keywords as written (`attrs={...}`, `mode=...`)


@fast_init
@dataclass(frozen=True, slots=True)
class WhileStmt:
    condition: Expr
    iter_args: tuple[IterArg, ...]
    body: tuple[Stmt, ...]
    return_vars: tuple[Var, ...]
    span: Span | None = field(default=None, compare=False)


@fast_init
@dataclass(frozen=True, slots=True)
class IfStmt:
    condition: Expr
    then_body: tuple[Stmt, ...]
    else_body: tuple[Stmt, ...] | None
    return_vars: tuple[Var, ...]
    span: Span | None = field(default=None, compare=False)


@fast_init
@dataclass(frozen=True, slots=True)
class YieldStmt:
    values: tuple[Expr, ...]
    span: Span | None = field(default=None, compare=False)


@fast_init
@dataclass(frozen=True, slots=True)
class ReturnStmt:
    values: tuple[Expr, ...]
    span: Span | None = field(default=None, compare=False)


@fast_init
@dataclass(frozen=True, slots=True)
class ScopeStmt:
    """`with pl.at(...)`, `with pl.scope(mode=...)`, `with pl.cluster()`, ...: `kind` is the pl function,
    `kwargs` its keywords as written. Definitions inside stay visible afterwards."""

    body: tuple[Stmt, ...]
    kind: str = "at"
    kwargs: tuple[tuple[str, Any], ...] = ()
    span: Span | None = field(default=None, compare=False)
    args: tuple[Expr, ...] = ()


@fast_init
@dataclass(frozen=True, slots=True)
class BreakStmt:
    span: Span | None = field(default=None, compare=False)


@fast_init
@dataclass(frozen=True, slots=True)
class ContinueStmt:
    span: Span | None = field(default=None, compare=False)


@fast_init
@dataclass(frozen=True, slots=True)
class AssertStmt:
    condition: Expr
    message: str | None = None
    span: Span | None = field(default=None, compare=False)


Stmt = Union[
    AssignStmt,
    EvalStmt,
    SeqStmts,
    ForStmt,
    WhileStmt,
    IfStmt,
    YieldStmt,
    ReturnStmt,
    ScopeStmt,
    BreakStmt,
    ContinueStmt,
    AssertStmt,
]


class FunctionType(enum.Enum):
    Opaque = "Opaque"
    Orchestration = "Orchestration"
    InCore = "InCore"
    AIC = "AIC"
    AIV = "AIV"
    Group = "Group"
    Spmd = "Spmd"
    Inline = "Inline"
    Graph = "Graph"

    @property
    def is_incore(self) -> bool:
        return self in (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV)


class ParamDirection(enum.Enum):
    In = "In"
    Out = "Out"
    InOut = "InOut"


@fast_init
@dataclass(frozen=True, slots=True)
class Param:
    var: Var
    direction: ParamDirection = ParamDirection.In


@fast_init
@dataclass(frozen=True, slots=True)
class Function:
    name: str
    params: tuple[Param, ...]
    return_types: tuple[Type, ...]
    body: tuple[Stmt, ...]
    type: FunctionType = FunctionType.Opaque
    level: str | None = None
    role: str | None = None
    span: Span | None = field(default=None, compare=False)
    options: tuple[tuple[str, Any], ...] = ()  # other decorator keywords (`auto_scope=False`), as written
    attrs: tuple[tuple[str, Any], ...] = ()  # `pl.func_attr({...})` at the top of the body
    # the function's text as written (decorators included), for one the DSL's reader cannot read and the pass never
    # has to change (parser.py): printed back verbatim; params and body are then empty
    source: str | None = None

    @property
    def has_self(self) -> bool:
        return self.role != "SubWorker"


@fast_init
@dataclass(frozen=True, slots=True)
class Program:
    name: str
    functions: tuple[Function, ...]
    span: Span | None = field(default=None, compare=False)
    # the `pl` module the text it was read from imported, printed back as its header (see DIALECTS)
    dialect: str = field(default="pypto_egg", compare=False)

    def function(self, name: str) -> Function:
        for f in self.functions:
            if f.name == name:
                return f
        raise KeyError(f"program {self.name!r} has no function {name!r}")

    def functions_named(self, names: Sequence[str]) -> list[Function]:
        """The functions of these names, in their order (one look-up table for them all, not a scan per name)."""
        by_name = {f.name: f for f in self.functions}
        missing = next((n for n in names if n not in by_name), None)
        if missing is not None:
            raise KeyError(f"program {self.name!r} has no function {missing!r}")
        return [by_name[n] for n in names]


# A program's header imports one of these as `pl`: pypto-egg's own reader, or PyPTO's (whose `pl.parse`
# runs the text it reads, so it must see its own module).
DIALECTS = {"pypto_egg": "pypto_egg.language", "pypto": "pypto.language"}
