"""PyPTO's IR objects to pypto-egg's IR, with no text in between.

A PyPTO function becomes the pypto-egg function its printed text would read as: the same variables (their
name hints), the same op calls (types deduced by pypto-egg's registry and merged with each variable's type,
as the reader merges a value with its annotation), the same source positions (each PyPTO span's first
line and column). `Origins` remembers, for the way back, which PyPTO object each pypto-egg one came from.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import DSLError, TypeDeductionError
from ..ir import ops as opreg
from ..ir.expr import (
    BinOp,
    Call,
    ConstBool,
    ConstFloat,
    ConstInt,
    DynDim,
    EnumLit,
    Expr,
    MakeTuple,
    TupleGetItem,
    UnaryOp,
    Var,
    type_of,
)
from ..ir.span import Span
from ..ir.stmt import (
    AssignStmt,
    BreakStmt,
    ContinueStmt,
    EvalStmt,
    ForStmt,
    Function,
    FunctionType,
    IfStmt,
    IterArg,
    LoopKind,
    Param,
    ParamDirection,
    ReturnStmt,
    ScopeStmt,
    Stmt,
    WhileStmt,
    YieldStmt,
)
from ..ir.tiles import canonical_view
from ..ir.types import (
    AtomicType,
    CompactMode,
    DataType,
    MemorySpace,
    MemRef,
    NamedConst,
    OpaqueType,
    PadValue,
    ScalarType,
    TensorLayout,
    TensorType,
    TensorView,
    TileLayout,
    TileType,
    TileView,
    TupleType,
    Type,
)
from ..language.context import CAST_CODES, OP_ALIASES
from ..language.expressions import merged_annotation
from .loader import PyPTO
from .op_names import dsl_name


class Unconvertible(DSLError):
    """A construct of a PyPTO function that pypto-egg's IR has no form for."""


@dataclass
class Origins:
    """Where each pypto-egg object of a converted function came from in PyPTO's."""

    # pypto-egg Var uid -> (that variable, the PyPTO Var it was read from); a variable the pass re-creates may reuse the
    # uid, so the builder takes the PyPTO Var only for the very object it was read as
    vars: dict[int, tuple[Var, Any]] = field(default_factory=dict)
    stmts: dict[int, tuple[Stmt, Any]] = field(default_factory=dict)  # id(pypto-egg stmt) -> (it, PyPTO stmt)
    spans: dict[Span, Any] = field(default_factory=dict)  # pypto-egg span -> the PyPTO span it was read from
    scopes: dict[Span, Any] = field(default_factory=dict)  # a loop's or scope's span -> its PyPTO statement
    memrefs: dict[MemRef, Any] = field(default_factory=dict)  # pypto-egg MemRef -> PyPTO MemRef
    types: dict[Type, Any] = field(default_factory=dict)  # pypto-egg type -> the PyPTO type it was read from
    dyn_dims: dict[str, Any] = field(default_factory=dict)  # a `pl.dynamic` dimension's name -> its PyPTO Var
    # a call's span -> (the PyPTO call, the op it was read as, the keywords it was read with)
    calls: dict[Span, tuple[Any, str, dict[str, Any]]] = field(default_factory=dict)


# PyPTO's binary expression classes -> pypto-egg's operators, and PyPTO's loop kinds -> pypto-egg's
BINARY_OPS = {
    "Add": "add", "Sub": "sub", "Mul": "mul", "FloorDiv": "floordiv", "FloorMod": "mod", "FloatDiv": "truediv",
    "Min": "min", "Max": "max", "Eq": "eq", "Ne": "ne", "Lt": "lt", "Le": "le", "Gt": "gt", "Ge": "ge",
    "And": "and", "Or": "or", "BitAnd": "bitand", "BitOr": "bitor", "BitXor": "bitxor",
    "BitShiftLeft": "lshift", "BitShiftRight": "rshift",
}  # fmt: skip
LOOP_KINDS = {"Sequential": LoopKind.range, "Parallel": LoopKind.parallel, "Unroll": LoopKind.unroll,
               "Pipeline": LoopKind.pipeline}  # fmt: skip
_ENUMS: dict[str, Any] = {
    "MemorySpace": MemorySpace, "TileLayout": TileLayout, "TensorLayout": TensorLayout, "PadValue": PadValue,
    "CompactMode": CompactMode, "AtomicType": AtomicType,
}  # fmt: skip


@functools.cache
def pypto_dtypes(pto: PyPTO) -> dict[Any, DataType]:
    """PyPTO's data types -> pypto-egg's, by name (made once, not for every function read)."""
    return {getattr(pto.core.DataType, d.name): d for d in DataType}


class FunctionReader:
    """One PyPTO function read into pypto-egg's IR; `read` raises `Unconvertible` naming what it met."""

    def __init__(self, pto: PyPTO, function: Any) -> None:
        self.pto, self.function = pto, function
        self.origins = Origins()
        self.env: dict[int, Var] = {}  # PyPTO Var unique_id -> pypto-egg Var
        self.dtypes = pypto_dtypes(pto)
        self.span_cache: dict[tuple[str, int, int], Span] = {}
        self.memrefs: dict[int, MemRef] = {}
        self.keep: list[Any] = []  # the PyPTO objects keyed by id above, kept alive while reading

    # ------------------------------------------------------------ positions and names

    def span(self, s: Any) -> Span:
        key = (s.filename, s.begin_line, s.begin_column)
        out = self.span_cache.get(key)
        if out is None:
            out = self.span_cache[key] = Span(*key)
            self.origins.spans[out] = s
        return out

    def fail(self, what: str, where: Any) -> Unconvertible:
        return Unconvertible(f"{self.span(where.span)}: function {self.function.name!r}: {what}")

    def define(self, v: Any, ty: Type | None = None) -> Var:
        """A pypto-egg variable for PyPTO's `v`. A second definition of the same PyPTO variable (IR not yet in SSA
        form) is a variable of its own in pypto-egg's IR, and is built back as a new PyPTO variable."""
        out = Var(v.name_hint, ty if ty is not None else self.type(v.type), self.span(v.span))
        if v.unique_id not in self.env:
            self.origins.vars[out.uid] = (out, v)
        self.env[v.unique_id] = out
        return out

    # ------------------------------------------------------------ types

    def dtype(self, d: Any) -> DataType:
        found = self.dtypes.get(d)
        if found is None:
            raise Unconvertible(
                f"function {self.function.name!r}: the data type {d}, which pypto-egg does not know"
            )
        return found

    def dims(self, dims: Any) -> tuple[Expr, ...]:
        out: list[Expr] = []
        for d in dims:
            if type(d) is self.pto.core_ir.ConstInt:
                out.append(ConstInt(d.value, DataType.INDEX, self.span(d.span)))
            else:
                out.append(self.expr(d))
        return tuple(out)

    def type(self, t: Any) -> Type:
        out = self._type(t)
        self.origins.types.setdefault(out, t)
        return out

    def _type(self, t: Any) -> Type:
        ir = self.pto.core_ir
        k = type(t)
        if k is ir.TileType:
            shape = self.dims(t.shape)
            memory = None if t.memory_space is None else MemorySpace[t.memory_space.name]
            return TileType(shape, self.dtype(t.dtype), memory, self.tile_view(shape, memory, t.tile_view),
                            None if t.memref is None else self.memref(t.memref))  # fmt: skip
        if k is ir.TensorType or k is ir.DistributedTensorType:
            view = t.tensor_view
            return TensorType(self.dims(t.shape), self.dtype(t.dtype), None if view is None else self.tensor_view(view),
                              None if t.memref is None else self.memref(t.memref),
                              k is ir.DistributedTensorType)  # fmt: skip
        if k is ir.ScalarType:
            return ScalarType(self.dtype(t.dtype))
        if k is ir.TupleType:
            return TupleType(tuple(self.type(x) for x in t.types))
        return OpaqueType(ir.python_print_type(t))

    def tile_view(self, shape: tuple[Expr, ...], memory: MemorySpace | None, v: Any) -> TileView | None:
        if v is None:
            return None
        view = TileView(
            self.dims(v.valid_shape) if len(v.valid_shape) else None,
            self.dims(v.stride) if len(v.stride) else None,
            None if v.start_offset is None else self.expr(v.start_offset),
            TileLayout[v.blayout.name], TileLayout[v.slayout.name], v.fractal,
            None if v.pad.name == "null" else PadValue[v.pad.name],
            None if v.compact.name == "null" else CompactMode[v.compact.name],
        )  # fmt: skip
        return canonical_view(shape, memory, view)

    def tensor_view(self, v: Any) -> TensorView:
        return TensorView(self.dims(v.stride), TensorLayout[v.layout.name], self.dims(v.valid_shape),
                          None if v.pad.name == "null" else PadValue[v.pad.name])  # fmt: skip

    def memref(self, m: Any) -> MemRef:
        """As PyPTO prints it: a base defined in the body is its variable, any other base its name."""
        out = self.memrefs.get(id(m))
        if out is not None:
            return out
        base_var = m.base_
        base: str | Expr = self.env.get(base_var.unique_id) or base_var.name_hint
        slot = m.slot_index_
        slots = None if m.slot_count_ <= 1 else ConstInt(m.slot_count_)
        if m.is_pinned_:
            out = MemRef(base, None, None, slots, None if slot is None else self.expr(slot))
        else:
            out = MemRef(base, self.dims((m.byte_offset_,))[0], ConstInt(m.size_), slots,
                         None if slot is None else self.expr(slot))  # fmt: skip
        self.memrefs[id(m)] = out
        self.origins.memrefs[out] = m
        self.keep.append(m)
        return out

    # ------------------------------------------------------------ expressions

    def expr(self, e: Any) -> Expr:
        ir = self.pto.core_ir
        k = type(e)
        if k is ir.Var or k is ir.IterArg:
            out = self.env.get(e.unique_id)
            if out is None:  # a `pl.dynamic` dimension, bound from an argument's shape at run time
                self.origins.dyn_dims.setdefault(e.name_hint, e)
                return DynDim(e.name_hint, self.span(e.span))
            return out
        if k is ir.ConstInt:
            return ConstInt(e.value, self.dtype(e.dtype), self.span(e.span))
        if k is ir.MakeTuple:
            return MakeTuple(tuple(self.expr(x) for x in e.elements), self.span(e.span))
        if k is ir.Call:
            return self.call(e, None)
        if k is ir.ConstFloat:
            return ConstFloat(e.value, self.dtype(e.dtype), self.span(e.span))
        if k is ir.ConstBool:
            return ConstBool(e.value, self.span(e.span))
        name = BINARY_OPS.get(k.__name__)
        if name is not None:
            return BinOp(name, self.expr(e.left), self.expr(e.right), self.span(e.span))
        if k is ir.Neg:
            inner = self.expr(e.operand)
            if type(inner) is ConstInt:
                return ConstInt(-inner.value, inner.dtype, self.span(e.span))
            if type(inner) is ConstFloat:
                return ConstFloat(-inner.value, inner.dtype, self.span(e.span))
            return UnaryOp("neg", inner, self.span(e.span))
        if k is ir.Not:
            return UnaryOp("not", self.expr(e.operand), self.span(e.span))
        if k is ir.Cast:
            return opreg.make_call("cast", (self.expr(e.operand),), {"target_type": self.dtype(e.type.dtype)}, (),
                                   self.span(e.span))  # fmt: skip
        if k is ir.TupleGetItemExpr:
            return TupleGetItem(self.expr(e.tuple), e.index, self.span(e.span))
        raise self.fail(f"the expression {ir.python_print(e)!r} ({k.__name__})", e)

    def kwarg(self, v: Any, key: str = "") -> Any:
        if type(v) is int and key in _CODED:  # stored as its code, printed as the member's name
            return _CODED[key](self.pto, v)
        if isinstance(v, bool | int | float | str) or v is None:
            return v
        if isinstance(v, self.pto.core.DataType):
            return self.dtype(v)
        cls = type(v).__name__
        if cls in _ENUMS:
            return _ENUMS[cls][v.name]
        if isinstance(v, list | tuple):
            return [self.kwarg(x) for x in v]
        if isinstance(v, dict):
            return {self.kwarg(a): self.kwarg(b) for a, b in v.items()}
        if hasattr(v, "name") and hasattr(type(v), "__members__"):
            return NamedConst(f"{cls}.{v.name}")
        if isinstance(v, self.pto.core_ir.Expr):
            k = type(v)
            if (
                k is self.pto.core_ir.ConstInt
                or k is self.pto.core_ir.ConstFloat
                or k is self.pto.core_ir.ConstBool
            ):
                return v.value  # printed as a literal, read as one
            return self.expr(v)
        raise Unconvertible(f"function {self.function.name!r}: the keyword value {v!r} ({cls})")

    def call(self, c: Any, declared: Type | None) -> Expr:
        ir = self.pto.core_ir
        span = self.span(c.span)
        args = tuple(self.expr(a) for a in c.args)
        kwargs = {k: self.kwarg(v, k) for k, v in c.kwargs.items()}
        if type(kwargs.get("pipe")) is int and c.op.name in ("system.sync_set", "system.sync_wait"):
            kwargs["pipe"] = _CODED["set_pipe"](self.pto, kwargs["pipe"])
        attrs = tuple((k, self.kwarg(v, k)) for k, v in c.attrs.items())
        if type(c.op) is ir.GlobalVar:
            name = c.op.name
            ty = declared if declared is not None else self.type(c.type)
            return Call(name, args, ty, tuple(kwargs.items()), attrs, span, is_function=True)
        op = OP_ALIASES.get(c.op.name) or dsl_name(c.op.name)
        if op == "pld.tile.remote_load" and kwargs.pop("allow_physical_tail_padding", False):
            op = "pld.tile._remote_load_with_physical_tail_padding"  # as PyPTO's printer spells it
        if op not in opreg.REGISTRY:
            raise self.fail(f"the op {op!r}, which pypto-egg's registry does not know", c)
        d = opreg.REGISTRY[op]
        if d.kwarg_params:  # operands printed as keywords are printed as bare literals
            args = tuple(_literal(a) if p in d.kwarg_params else a for a, p in zip(args, d.params))
        if not d.any_keyword:  # keywords PyPTO's printer leaves out
            kwargs = {k: v for k, v in kwargs.items() if k in d.kwargs}
        if op == "tile.alloc" and args and type(args[0]) is ConstInt:  # a memory space, stored as its code
            args = (
                EnumLit(MemorySpace[self.pto.core_ir.MemorySpace(args[0].value).name], args[0].span),
                *args[1:],
            )
        op, args = opreg.canonical_operands(op, args)
        if op in ("tile.cast", "cast") and isinstance(kwargs.get("mode"), str):
            kwargs["mode"] = CAST_CODES[kwargs["mode"]]
        self.origins.calls[span] = (c, op, kwargs)
        try:
            if not d.deduces:
                return opreg.make_call(op, args, kwargs, attrs, span, declared or self.type(c.type))
            return opreg.make_call(op, args, kwargs, attrs, span)
        except TypeDeductionError as e:
            raise Unconvertible(f"{span}: function {self.function.name!r}: {e}") from None

    # ------------------------------------------------------------ statements

    def read(self) -> Function:
        f = self.function
        params = tuple(
            Param(self.define(v), ParamDirection[d.name]) for v, d in zip(f.params, f.param_directions)
        )
        return_types = tuple(self.type(t) for t in f.return_types)
        body = self.block(f.body)
        return Function(
            f.name, params, return_types, body, FunctionType[f.func_type.name],
            None if f.level is None else f.level.name, None if f.role is None else f.role.name,
            self.span(f.span), (), tuple((k, self.kwarg(v, "func:" + k)) for k, v in f.attrs.items()),
        )  # fmt: skip

    def block(self, s: Any) -> tuple[Stmt, ...]:
        if type(s) is self.pto.core_ir.SeqStmts:
            out: list[Stmt] = []
            for x in s.stmts:
                if type(x) is self.pto.core_ir.SeqStmts:
                    out += self.block(x)
                else:
                    out.append(self.stmt(x))
            return tuple(out)
        return (self.stmt(s),)

    def stmt(self, s: Any) -> Stmt:
        out = self._stmt(s)
        self.origins.stmts[id(out)] = (out, s)
        return out

    def _stmt(self, s: Any) -> Stmt:
        ir = self.pto.core_ir
        k = type(s)
        span = self.span(s.span)
        if k is ir.AssignStmt:
            v = s.var
            declared = self.type(v.type)
            value = self.call(s.value, declared) if type(s.value) is ir.Call else self.expr(s.value)
            ty = merged_annotation(declared, type_of(value))
            if ty is None:
                raise self.fail(f"the type of {v.name_hint!r} disagrees with its value's", s)
            if type(value) is Call and not value.is_function:
                value = replace(value, type=ty)
            return AssignStmt(self.define(v, ty), value, span)
        if k is ir.EvalStmt:
            return EvalStmt(self.expr(s.expr), span)
        if k is ir.YieldStmt:
            return YieldStmt(tuple(self.expr(x) for x in s.value), span)
        if k is ir.ReturnStmt:
            return ReturnStmt(tuple(self.expr(x) for x in s.value), span)
        if k is ir.ForStmt:
            return self.for_stmt(s, span)
        if k is ir.IfStmt:
            cond = self.expr(s.condition)
            then_body = self.block(s.then_body)
            else_body = None if s.else_body is None else self.block(s.else_body)
            self.origins.scopes[span] = s
            return IfStmt(cond, then_body, else_body, tuple(self.define(v) for v in s.return_vars), span)
        if k is ir.WhileStmt:
            iter_args = tuple(IterArg(self.define(a), self.expr(a.initValue)) for a in s.iter_args)
            cond = self.expr(s.condition)
            body = self.block(s.body)
            self.origins.scopes[span] = s
            return WhileStmt(cond, iter_args, body, tuple(self.define(v) for v in s.return_vars), span)
        if k is ir.BreakStmt:
            return BreakStmt(span)
        if k is ir.ContinueStmt:
            return ContinueStmt(span)
        if k is ir.SplitAivScopeStmt:
            return self.split_aiv(s, span)
        if isinstance(s, ir.ScopeStmt):
            self.origins.scopes[span] = s
            kwargs: tuple[tuple[str, Any], ...] = (("level", "CORE_GROUP"),)
            kind = "at"
            if k is not ir.InCoreScopeStmt:
                kind, kwargs = k.__name__, ()
            if s.name_hint:
                kwargs += (("name_hint", s.name_hint),)
            return ScopeStmt(self.block(s.body), kind, kwargs, span)
        raise self.fail(f"the statement {k.__name__}", s)

    def split_aiv(self, s: Any, span: Span) -> Stmt:
        """`for aiv_id in pl.split_aiv(2, mode=...)`: the region's leading `tile.get_subblock_idx()` binding is
        the loop variable."""
        ir = self.pto.core_ir
        stmts = list(s.body.stmts) if type(s.body) is ir.SeqStmts else [s.body]
        first: Any = stmts[0] if stmts else None
        if (type(first) is ir.AssignStmt and type(first.value) is ir.Call and type(first.value.op) is ir.Op
                and first.value.op.name == "tile.get_subblock_idx"):  # fmt: skip
            loop_var = self.define(first.var, ScalarType(DataType.INDEX))
            stmts = stmts[1:]
        else:
            loop_var = Var("aiv_id", ScalarType(DataType.INDEX), span)
        body: list[Stmt] = []
        for x in stmts:
            body += self.block(x)
        self.origins.scopes[span] = s
        mode = NamedConst(f"SplitMode.{s.split.name}")
        return ForStmt(loop_var, ConstInt(0, DataType.INDEX, span), ConstInt(s.count, DataType.INDEX, span),
                       ConstInt(1, DataType.INDEX, span), (), tuple(body), (), LoopKind.split_aiv, None, span,
                       (("mode", mode),))  # fmt: skip

    def for_stmt(self, s: Any, span: Span) -> Stmt:
        start, stop, step = self.expr(s.start), self.expr(s.stop), self.expr(s.step)
        iter_args = tuple(IterArg(self.define(a), self.expr(a.initValue)) for a in s.iter_args)
        loop_var = self.define(s.loop_var)
        body = self.block(s.body)
        self.origins.scopes[span] = s
        kind = LOOP_KINDS.get(s.kind.name)
        if kind is None:
            raise self.fail(f"the loop kind {s.kind.name}", s)
        attrs = dict(s.attrs)
        stage = attrs.pop("pipeline_stages", None) if kind is LoopKind.pipeline else None
        extra = (("attrs", {k: self.kwarg(v) for k, v in attrs.items()}),) if attrs else ()
        return ForStmt(loop_var, start, stop, step, iter_args, body, tuple(self.define(v) for v in s.return_vars),
                       kind, stage, span, extra)  # fmt: skip


def _literal(e: Expr) -> Expr:
    """A constant as its bare literal reads: an INDEX integer, an FP32 float."""
    if type(e) is ConstInt and e.dtype is not DataType.INDEX:
        return ConstInt(e.value, DataType.INDEX, e.span)
    if type(e) is ConstFloat and e.dtype is not DataType.FP32:
        return ConstFloat(e.value, DataType.FP32, e.span)
    return e


# keywords and attributes PyPTO stores as an integer code and prints as a member's name
_CODED: dict[str, Any] = {
    "atomic": lambda pto, v: AtomicType(v),
    "func:split": lambda pto, v: NamedConst(f"SplitMode.{pto.core_ir.SplitMode(v).name}"),
    "set_pipe": lambda pto, v: NamedConst(f"PipeType.{pto.core_ir.PipeType(v).name}"),
    "wait_pipe": lambda pto, v: NamedConst(f"PipeType.{pto.core_ir.PipeType(v).name}"),
}
