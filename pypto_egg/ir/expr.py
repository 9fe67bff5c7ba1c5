"""Expressions: variables, constants, scalar arithmetic, tuples and calls."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from . import types as _types
from .node import fast_init
from .span import Span
from .types import UNKNOWN_TYPE, DataType, ScalarType, TupleType, Type

_ids = itertools.count()


@fast_init
@dataclass(frozen=True, slots=True, eq=False)
class Var:
    """A named SSA value; identity is the object, the name is only a hint."""

    name: str
    type: Type
    span: Span | None = field(default=None, compare=False)
    uid: int = field(default_factory=_ids.__next__)

    def __repr__(self) -> str:
        return f"Var({self.name})"


@fast_init
@dataclass(frozen=True, slots=True)
class DynDim:
    """A `pl.dynamic("S")` extent: bound at run time from the shape of an argument."""

    name: str
    span: Span | None = field(default=None, compare=False)


@fast_init
@dataclass(frozen=True, slots=True)
class ConstInt:
    """An integer literal (a bare literal of the DSL is an INDEX one)."""

    value: int
    dtype: DataType = DataType.INDEX
    span: Span | None = field(default=None, compare=False)


@fast_init
@dataclass(frozen=True, slots=True)
class ConstFloat:
    value: float
    dtype: DataType = DataType.FP32
    span: Span | None = field(default=None, compare=False)


@fast_init
@dataclass(frozen=True, slots=True)
class EnumLit:
    """A DSL enum, dtype or string given as an operand (`pl.tile.alloc(pl.Mem.Vec, 1024)`)."""

    value: Any
    span: Span | None = field(default=None, compare=False)


@fast_init
@dataclass(frozen=True, slots=True)
class FuncRef:
    """`self.kernel` passed as a value (`pl.submit(self.kernel, x)`)."""

    name: str
    span: Span | None = field(default=None, compare=False)


@fast_init
@dataclass(frozen=True, slots=True)
class ConstBool:
    value: bool
    span: Span | None = field(default=None, compare=False)


ARITH_OPS = ("add", "sub", "mul", "floordiv", "mod", "min", "max")
INT64_MAX = 2**63 - 1  # the largest value of an INDEX / INT64 scalar
CMP_OPS = ("eq", "ne", "lt", "le", "gt", "ge")
LOGIC_OPS = ("and", "or")


@fast_init
@dataclass(frozen=True, slots=True)
class BinOp:
    op: str
    lhs: Expr
    rhs: Expr
    span: Span | None = field(default=None, compare=False)


@fast_init
@dataclass(frozen=True, slots=True)
class UnaryOp:
    op: str  # "not" | "neg"
    operand: Expr
    span: Span | None = field(default=None, compare=False)


@fast_init
@dataclass(frozen=True, slots=True)
class MakeTuple:
    elements: tuple[Expr, ...]
    span: Span | None = field(default=None, compare=False)


@fast_init
@dataclass(frozen=True, slots=True)
class TupleGetItem:
    tuple: Expr
    index: int
    span: Span | None = field(default=None, compare=False)


KwValue = Any


@fast_init
@dataclass(frozen=True, slots=True)
class Call:
    """An op call (`tile.add`) or, when `is_function`, a call of another function of the program."""

    op: str
    args: tuple[Expr, ...]
    type: Type
    kwargs: tuple[tuple[str, KwValue], ...] = ()
    attrs: tuple[tuple[str, KwValue], ...] = ()
    span: Span | None = field(default=None, compare=False)
    is_function: bool = False

    def kwarg(self, name: str, default: KwValue = None) -> KwValue:
        for k, v in self.kwargs:
            if k == name:
                return v
        return default


Expr = Union[
    Var,
    DynDim,
    ConstInt,
    ConstFloat,
    ConstBool,
    BinOp,
    UnaryOp,
    MakeTuple,
    TupleGetItem,
    Call,
    EnumLit,
    FuncRef,
]


def const(value: int | Expr) -> Expr:
    return ConstInt(value) if isinstance(value, int) else value


def static_int(e: object) -> int | None:
    return e.value if type(e) is ConstInt else None


def type_of(e: Expr) -> Type:
    """The type of an expression; scalars deduce from their operands."""
    if type(e) is Var or type(e) is Call:  # (by exact class: the IR's node classes have no subclasses)
        return e.type
    if isinstance(e, DynDim | ConstInt):
        return ScalarType(e.dtype if isinstance(e, ConstInt) else DataType.INDEX)
    if isinstance(e, ConstFloat):
        return ScalarType(e.dtype)
    if isinstance(e, ConstBool):
        return ScalarType(DataType.BOOL)
    if isinstance(e, BinOp):
        if e.op in CMP_OPS or e.op in LOGIC_OPS:
            return ScalarType(DataType.BOOL)
        return type_of(e.lhs)
    if isinstance(e, UnaryOp):
        return ScalarType(DataType.BOOL) if e.op == "not" else type_of(e.operand)
    if isinstance(e, MakeTuple):
        return TupleType(tuple(type_of(x) for x in e.elements))
    if isinstance(e, TupleGetItem):
        tt = type_of(e.tuple)
        if not isinstance(tt, TupleType):
            return UNKNOWN_TYPE
        return tt.types[e.index]
    if isinstance(e, EnumLit | FuncRef):
        return UNKNOWN_TYPE
    raise TypeError(f"not an expression: {e!r}")


def tile_operand_types(args: tuple[Expr, ...], min_rank: int = 0) -> Sequence[_types.TileType]:
    """The tile types (of rank `min_rank` or more) among a call's operands: only variables, calls and tuple
    items can hold a tile (asking a tuple literal or a constant for its type would only build a type to throw
    away). A call with none, the common case of the checks that walk every call, gets an empty tuple, no list."""
    out: list[_types.TileType] | None = None
    tile = _types.TileType
    for a in args:
        if type(a) is Var or type(a) is Call:
            t = a.type
        elif type(a) is TupleGetItem:
            t = type_of(a)
        else:
            continue
        if type(t) is tile and len(t.shape) >= min_rank:
            if out is None:
                out = []
            out.append(t)
    return () if out is None else out


def exprs_equal(a: Expr, b: Expr) -> bool:
    """Structural equality of two expressions with variables compared by identity (spans ignored)."""
    if a is b:  # one object (the lowering shares decoded dims and types, so this is the common case)
        return True
    if isinstance(a, Var) or isinstance(b, Var):
        return a is b
    if type(a) is not type(b):
        return False
    if isinstance(a, ConstInt | ConstFloat | ConstBool):
        return a.value == b.value  # type: ignore[union-attr]
    if isinstance(a, DynDim | FuncRef):
        return a.name == b.name  # type: ignore[union-attr]
    if isinstance(a, EnumLit):
        return a.value == b.value  # type: ignore[union-attr]
    if isinstance(a, BinOp):
        assert isinstance(b, BinOp)
        return a.op == b.op and exprs_equal(a.lhs, b.lhs) and exprs_equal(a.rhs, b.rhs)
    if isinstance(a, UnaryOp):
        assert isinstance(b, UnaryOp)
        return a.op == b.op and exprs_equal(a.operand, b.operand)
    if isinstance(a, MakeTuple):
        assert isinstance(b, MakeTuple)
        return len(a.elements) == len(b.elements) and all(
            exprs_equal(x, y) for x, y in zip(a.elements, b.elements)
        )
    if isinstance(a, TupleGetItem):
        assert isinstance(b, TupleGetItem)
        return a.index == b.index and exprs_equal(a.tuple, b.tuple)
    return a == b


def free_vars(e: Expr) -> list[Var]:
    """Variables an expression reads, in first-seen order (a walk with a stack of its own: a nested function
    that calls itself is a reference cycle, left for the cyclic collector after every call)."""
    out: list[Var] = []
    seen: set[int] = set()
    todo: list[object] = [e]
    while todo:
        x = todo.pop()
        if isinstance(x, Var):
            if x.uid not in seen:
                seen.add(x.uid)
                out.append(x)
        elif isinstance(x, BinOp):
            todo += (x.rhs, x.lhs)
        elif isinstance(x, UnaryOp):
            todo.append(x.operand)
        elif isinstance(x, MakeTuple):
            todo += reversed(x.elements)
        elif isinstance(x, TupleGetItem):
            todo.append(x.tuple)
        elif isinstance(x, Call):
            if x.kwargs:
                todo += reversed([v for _, v in x.kwargs if isinstance(v, _WALKED)])
            todo += reversed(x.args)
    return out


_WALKED = (Var, BinOp, UnaryOp, MakeTuple, TupleGetItem, Call)
