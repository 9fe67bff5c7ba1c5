"""pypto-egg's IR back to PyPTO's IR objects, with no text in between.

What the pass kept stays PyPTO's own object: a statement the pass returned as it read it (and whose
variables are all still PyPTO's), each variable it did not re-create, each memory reference. What it made
is built with PyPTO's constructors and explicit types: a value keeps the name hint the pass gave it (several
values may share one, as the C++ pass's page slices do), and every new statement, loop or scope carries the
PyPTO span of the statement it was made from.
"""

from __future__ import annotations

import enum
from typing import Any

from ..errors import InternalError
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
    free_vars,
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
    IfStmt,
    LoopKind,
    ReturnStmt,
    ScopeStmt,
    Stmt,
    WhileStmt,
    YieldStmt,
)
from ..ir.types import (
    AtomicType,
    DataType,
    MemRef,
    NamedConst,
    OpaqueType,
    ScalarType,
    TensorType,
    TileType,
    TupleType,
    Type,
)
from .loader import PyPTO
from .objects_in import BINARY_OPS, LOOP_KINDS, Origins, pypto_dtypes
from .op_names import ir_name

# PyPTO's class of each of pypto-egg's operators, and of each loop kind: objects_in's maps, inverted
_BINARY = {ours: theirs for theirs, ours in BINARY_OPS.items()}
_LOOP_KINDS = {ours: theirs for theirs, ours in LOOP_KINDS.items()}


class FunctionBuilder:
    """Builds the PyPTO function of a rewritten pypto-egg function read by `FunctionReader`."""

    def __init__(self, pto: PyPTO, original: Any, origins: Origins) -> None:
        self.pto, self.original, self.origins = pto, original, origins
        self.ir = pto.core_ir
        # id(pypto-egg Var) -> PyPTO Var: those read (the objects stay alive in the function), then those made
        self.vars: dict[int, Any] = {id(ours): theirs for ours, theirs in origins.vars.values()}
        self.remade: set[int] = set()  # read variables given a new PyPTO object (a re-seeded loop carry)
        self.dtypes = {ours: theirs for theirs, ours in pypto_dtypes(pto).items()}
        self.unknown = self.ir.Span.unknown()

    # ------------------------------------------------------------ positions, variables, types

    def span(self, s: Span | None) -> Any:
        return self.unknown if s is None else self.origins.spans.get(s, self.unknown)

    def var(self, v: Var) -> Any:
        out = self.vars.get(id(v))
        if out is None:
            out = self.vars[id(v)] = self.ir.Var(v.name, self.type(v.type), self.span(v.span))
        return out

    def exprs(self, dims: tuple[Expr, ...]) -> list[Any]:
        """Dims as PyPTO expressions (a view's fields take no bare integers beside an expression)."""
        return [self.expr(d) for d in dims]

    def dims(self, dims: tuple[Expr, ...]) -> list[Any]:
        if all(type(d) is ConstInt for d in dims):
            return [d.value for d in dims]  # type: ignore[union-attr]
        return [self.ir.ConstInt(d.value, self.dtypes[DataType.INDEX], self.unknown) if type(d) is ConstInt
                else self.expr(d) for d in dims]  # fmt: skip

    def type(self, t: Type) -> Any:
        out = self.origins.types.get(t)
        if out is None:
            out = self._type(t)
        return out

    def _type(self, t: Type) -> Any:
        ir = self.ir
        if type(t) is TileType:
            view = None
            if t.view is not None:
                v = t.view
                view = ir.TileView(
                    self.exprs(v.valid_shape) if v.valid_shape is not None else [],
                    self.exprs(v.stride) if v.stride is not None else [],
                    None if v.start_offset is None else self.expr(v.start_offset),
                    getattr(ir.TileLayout, v.blayout.value if v.blayout else "row_major"),
                    getattr(ir.TileLayout, v.slayout.value if v.slayout else "none_box"),
                    v.fractal if v.fractal is not None else 512,
                    getattr(ir.PadValue, v.pad.value if v.pad else "null"),
                    getattr(ir.CompactMode, v.compact.value if v.compact else "null"),
                )  # fmt: skip
            memory = None if t.memory is None else getattr(ir.MemorySpace, t.memory.value)
            return ir.TileType(self.dims(t.shape), self.dtypes[t.dtype], self.memref(t.memref), view, memory)
        if type(t) is ScalarType:
            return ir.ScalarType(self.dtypes[t.dtype])
        if type(t) is TensorType:
            tensor_view = None
            if t.view is not None:
                tv = t.view
                tensor_view = ir.TensorView(self.exprs(tv.stride), getattr(ir.TensorLayout, tv.layout.value),
                                            self.exprs(tv.valid_shape), getattr(ir.PadValue, tv.pad.value if tv.pad else "null"))  # fmt: skip
            cls = ir.DistributedTensorType if t.distributed else ir.TensorType
            return cls(self.dims(t.shape), self.dtypes[t.dtype], self.memref(t.memref), tensor_view)
        if type(t) is TupleType:
            return ir.TupleType([self.type(x) for x in t.types])
        if type(t) is OpaqueType and t.text == "pl.UnknownType":
            return ir.UnknownType()
        raise InternalError(f"pypto-egg does not build the type {t}")

    def memref(self, m: MemRef | None) -> Any:
        if m is None:
            return None
        out = self.origins.memrefs.get(m)
        if out is None:
            raise InternalError(f"the pass made a memory reference of its own: {m}")
        return out

    # ------------------------------------------------------------ expressions

    def expr(self, e: Expr) -> Any:
        ir = self.ir
        k = type(e)
        if k is Var:
            return self.var(e)  # type: ignore[arg-type]
        if k is ConstInt:
            return ir.ConstInt(e.value, self.dtypes[e.dtype], self.span(e.span))  # type: ignore[union-attr]
        if k is MakeTuple:
            return ir.MakeTuple([self.expr(x) for x in e.elements], self.span(e.span))  # type: ignore[union-attr]
        if k is Call:
            return self.call(e)  # type: ignore[arg-type]
        if k is BinOp:
            cls = getattr(ir, _BINARY[e.op])  # type: ignore[union-attr]
            dtype = self.dtypes[type_of(e).dtype]  # type: ignore[union-attr]
            return cls(self.expr(e.lhs), self.expr(e.rhs), dtype, self.span(e.span))  # type: ignore[union-attr]
        if k is ConstFloat:
            return ir.ConstFloat(e.value, self.dtypes[e.dtype], self.span(e.span))  # type: ignore[union-attr]
        if k is ConstBool:
            return ir.ConstBool(e.value, self.span(e.span))  # type: ignore[union-attr]
        if k is DynDim:
            found = self.origins.dyn_dims.get(e.name)  # type: ignore[union-attr]
            if found is None:
                raise InternalError(f"the pass made a dynamic dimension of its own: {e}")
            return found
        if k is UnaryOp:
            operand = self.expr(e.operand)  # type: ignore[union-attr]
            dtype = self.dtypes[type_of(e).dtype]  # type: ignore[union-attr]
            cls = ir.Neg if e.op == "neg" else ir.Not  # type: ignore[union-attr]
            return cls(operand, dtype, self.span(e.span))  # type: ignore[union-attr]
        if k is TupleGetItem:
            return ir.TupleGetItemExpr(self.expr(e.tuple), e.index, self.span(e.span))  # type: ignore[union-attr]
        raise InternalError(f"pypto-egg does not build the expression {e!r}")

    def kwarg(self, v: Any, key: str) -> Any:
        if isinstance(v, bool | int | float | str) or v is None:
            return v
        if isinstance(v, DataType):
            return self.dtypes[v]
        if isinstance(v, AtomicType):
            return v.value
        if isinstance(v, NamedConst):
            kind, _, member = v.path.partition(".")
            return getattr(getattr(self.ir, kind), member)
        if isinstance(v, enum.Enum):  # MemorySpace, TileLayout, ...: PyPTO's member of the same name
            return getattr(getattr(self.ir, type(v).__name__), v.name)
        if isinstance(v, list | tuple):
            return [self.kwarg(x, key) for x in v]
        if isinstance(v, dict):
            return {self.kwarg(a, key): self.kwarg(b, key) for a, b in v.items()}
        return self.expr(v)

    def call(self, c: Call) -> Any:
        ir = self.ir
        span = self.span(c.span)
        read = self.origins.calls.get(c.span) if c.span is not None else None
        if c.is_function:
            op = ir.GlobalVar(c.op)
        elif c.op == "cast" and type(c.type) is ScalarType:
            return ir.Cast(self.expr(c.args[0]), self.dtypes[c.type.dtype], span)
        else:
            name = (
                "pld.tile.remote_load" if c.op == "pld.tile._remote_load_with_physical_tail_padding" else c.op
            )
            op = ir.get_op(ir_name(name))
        args = []
        for a in c.args:
            if type(a) is EnumLit:  # a memory space operand, stored as its code
                code = int(getattr(ir.MemorySpace, a.value.value).value)
                args.append(ir.ConstInt(code, self.dtypes[DataType.INDEX], self.span(a.span)))
            else:
                args.append(self.expr(a))
        kwargs: dict[str, Any] = {}
        original_kwargs = read[0].kwargs if read is not None and read[1] == c.op else {}
        egg_kwargs = read[2] if read is not None and read[1] == c.op else {}
        for k, v in c.kwargs:
            kwargs[k] = (
                original_kwargs[k] if k in original_kwargs and egg_kwargs.get(k) == v else self.kwarg(v, k)
            )
        for k, v in original_kwargs.items():  # the keywords the reading left out (PyPTO's printer does too)
            if k not in egg_kwargs:
                kwargs.setdefault(k, v)
        attrs = {k: self.kwarg(v, k) for k, v in c.attrs}
        return ir.Call(op, args, kwargs, attrs, self.type(c.type), span)

    # ------------------------------------------------------------ statements

    def build(self, f: Function) -> Any:
        o = self.original
        body = self.seq(f.body, o.body.span)
        params = list(zip(o.params, o.param_directions))
        return self.ir.Function(o.name, params, list(o.return_types), body, o.span, o.func_type, o.level, o.role,
                                dict(o.attrs), o.requires_runtime_binding)  # fmt: skip

    def seq(self, stmts: tuple[Stmt, ...], span: Any) -> Any:
        built = [self.stmt(s) for s in stmts]
        return self.ir.SeqStmts(built, span)

    def reusable(self, s: Stmt) -> Any:
        read = self.origins.stmts.get(id(s))
        if read is None or read[0] is not s:
            return None
        if type(s) is AssignStmt and id(s.var) not in self.vars:  # a re-definition: a variable of its own
            return None
        if self.remade and any(v.uid in self.remade for v in _stmt_vars(s)):
            return None
        return read[1]

    def stmt(self, s: Stmt) -> Any:
        kept = self.reusable(s)
        if kept is not None:
            return kept
        ir = self.ir
        span = self.span(s.span)
        k = type(s)
        if k is AssignStmt:
            return ir.AssignStmt(self.var(s.var), self.expr(s.value), span)  # type: ignore[union-attr]
        if k is EvalStmt:
            return ir.EvalStmt(self.expr(s.expr), span)  # type: ignore[union-attr]
        if k is YieldStmt:
            return ir.YieldStmt([self.expr(x) for x in s.values], span)  # type: ignore[union-attr]
        if k is ReturnStmt:
            return ir.ReturnStmt([self.expr(x) for x in s.values], span)  # type: ignore[union-attr]
        if k is ForStmt:
            return self.for_stmt(s, span)  # type: ignore[arg-type]
        if k is IfStmt:
            cond = self.expr(s.condition)  # type: ignore[union-attr]
            then_body = self.seq(s.then_body, span)  # type: ignore[union-attr]
            else_body = None if s.else_body is None else self.seq(s.else_body, span)  # type: ignore[union-attr]
            rvs = [self.var(v) for v in s.return_vars]  # type: ignore[union-attr]
            return ir.IfStmt(cond, then_body, else_body, rvs, span)
        if k is WhileStmt:
            iter_args = [self.iter_arg(ia.var, ia.init) for ia in s.iter_args]  # type: ignore[union-attr]
            cond = self.expr(s.condition)  # type: ignore[union-attr]
            body = self.seq(s.body, span)  # type: ignore[union-attr]
            rvs = [self.var(v) for v in s.return_vars]  # type: ignore[union-attr]
            return ir.WhileStmt(cond, iter_args, body, rvs, span)
        if k is ScopeStmt:
            return self.scope(s, span)  # type: ignore[arg-type]
        if k is BreakStmt:
            return ir.BreakStmt(span)
        if k is ContinueStmt:
            return ir.ContinueStmt(span)
        raise InternalError(f"pypto-egg does not build the statement {s!r}")

    def iter_arg(self, v: Var, init: Expr) -> Any:
        """A loop carry: PyPTO's own when the pass kept it and its seed, else a new one (and then every
        statement that reads it is rebuilt)."""
        init_built = self.expr(init)
        pair = self.origins.vars.get(v.uid)
        read = pair[1] if pair is not None and pair[0] is v else None
        if read is not None and read.initValue.same_as(init_built):
            return read
        out = self.ir.IterArg(v.name, self.type(v.type), init_built, self.span(v.span))
        if read is not None:
            self.remade.add(v.uid)
        self.vars[id(v)] = out
        return out

    def for_stmt(self, s: ForStmt, span: Any) -> Any:
        ir = self.ir
        original = self.origins.scopes.get(s.span) if s.span is not None else None
        if s.kind is LoopKind.split_aiv:
            return self.split_aiv(s, span, original)
        iter_args = [self.iter_arg(ia.var, ia.init) for ia in s.iter_args]
        loop_var = self.var(s.loop_var)
        body = self.seq(s.body, original.body.span if original is not None else span)
        rvs = [self.var(v) for v in s.return_vars]
        if original is not None:
            kind, attrs = original.kind, dict(original.attrs)
        else:
            kind, attrs = getattr(ir.ForKind, _LOOP_KINDS[s.kind]), None
        return ir.ForStmt(loop_var, self.expr(s.start), self.expr(s.stop), self.expr(s.step), iter_args, body, rvs,
                          span, kind, attrs)  # fmt: skip

    def split_aiv(self, s: ForStmt, span: Any, original: Any) -> Any:
        if original is None:
            raise InternalError("the pass made a pl.split_aiv region of its own")
        stmts = list(original.body.stmts) if type(original.body) is self.ir.SeqStmts else [original.body]
        lead = []
        if s.loop_var.uid in self.origins.vars:
            lead = [stmts[0]]
        body = self.ir.SeqStmts(lead + [self.stmt(x) for x in s.body], original.body.span)
        return self.ir.SplitAivScopeStmt(original.split, original.count, original.name_hint, body, span)

    def scope(self, s: ScopeStmt, span: Any) -> Any:
        original = self.origins.scopes.get(s.span) if s.span is not None else None
        if original is None:
            raise InternalError("the pass made a scope of its own")
        body = self.seq(s.body, original.body.span)
        return _rescoped(self.ir, original, body)


def _rescoped(ir: Any, original: Any, body: Any) -> Any:
    """A scope statement like `original` (of any kind, with all its fields and attributes) around another body:
    PyPTO's own mutator rebuilds it, given the new body where it meets the old one."""
    old = original.body

    class Rebody(ir.IRMutator):  # type: ignore[misc, name-defined]
        def visit_seq_stmts(self, op: Any) -> Any:
            return body if op.same_as(old) else super().visit_seq_stmts(op)

    if type(old) is not ir.SeqStmts:
        raise InternalError(
            f"pypto-egg does not rebuild a {type(original).__name__} whose body is one statement"
        )
    return Rebody().visit_stmt(original)


def _stmt_vars(s: Stmt) -> list[Var]:
    """The variables a statement reads, those of the statements inside it included."""
    if type(s) is AssignStmt:
        return free_vars(s.value)
    if type(s) is EvalStmt:
        return free_vars(s.expr)
    if type(s) is YieldStmt or type(s) is ReturnStmt:
        return [v for x in s.values for v in free_vars(x)]
    out: list[Var] = []
    if type(s) is ForStmt:
        out += [v for e in (s.start, s.stop, s.step, *(ia.init for ia in s.iter_args)) for v in free_vars(e)]
    if type(s) is IfStmt or type(s) is WhileStmt:
        out += free_vars(s.condition)
    if type(s) is WhileStmt:
        out += [v for ia in s.iter_args for v in free_vars(ia.init)]
    for body in _bodies(s):
        for x in body:
            out += _stmt_vars(x)
    return out


def _bodies(s: Stmt) -> tuple[tuple[Stmt, ...], ...]:
    if type(s) is IfStmt:
        return (s.then_body, s.else_body or ())
    if type(s) is ForStmt or type(s) is WhileStmt or type(s) is ScopeStmt:
        return (s.body,)
    return ()
