"""Structural equality of IR: equal up to a consistent renaming of variables (spans ignored)."""

from __future__ import annotations

from typing import Any

from .expr import BinOp, Call, ConstBool, ConstFloat, ConstInt, DynDim, MakeTuple, TupleGetItem, UnaryOp, Var
from .printer import python_print
from .stmt import (
    AssertStmt,
    AssignStmt,
    EvalStmt,
    ForStmt,
    Function,
    IfStmt,
    IterArg,
    Param,
    Program,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    WhileStmt,
    YieldStmt,
)
from .types import MemRef, OpaqueType, ScalarType, TensorType, TensorView, TileType, TileView, TupleType


class StructuralMismatch(AssertionError):
    def __init__(self, path: str, lhs: object, rhs: object, why: str) -> None:
        self.path, self.lhs, self.rhs, self.why = path, lhs, rhs, why
        super().__init__(f"structural mismatch at {path}: {why}\n  lhs: {_show(lhs)}\n  rhs: {_show(rhs)}")


def _show(x: object) -> str:
    if isinstance(x, tuple) and all(not hasattr(e, "var") and not hasattr(e, "body") for e in x):
        try:
            return "[" + ", ".join(python_print(e).strip() for e in x) + "]"
        except Exception:
            pass
    try:
        text = python_print(x)
    except Exception:
        text = repr(x)
    return text.strip().replace("\n", "\n       ")


def flatten_stmts(stmts: tuple[Any, ...]) -> list[Any]:
    """A body's statements with every sequence spliced in where it stands."""
    out: list[Any] = []
    for s in stmts:
        if isinstance(s, SeqStmts):
            out += flatten_stmts(s.stmts)
        else:
            out.append(s)
    return out


class Comparer:
    """Compares IR nodes up to a consistent renaming of variables, raising StructuralMismatch at the first place
    they differ; the variables it has matched so far (`fwd`, `bwd`) carry over from one call to the next."""

    def __init__(self) -> None:
        self.fwd: dict[int, Var] = {}
        self.bwd: dict[int, Var] = {}

    def fail(self, path: str, a: object, b: object, why: str) -> None:
        raise StructuralMismatch(path, a, b, why)

    def define(self, a: Var, b: Var, path: str) -> None:
        self.typ(a.type, b.type, path + ".type")
        self.fwd[a.uid] = b
        self.bwd[b.uid] = a

    def use(self, a: Var, b: Var, path: str) -> None:
        ma, mb = self.fwd.get(a.uid), self.bwd.get(b.uid)
        if ma is None and mb is None:
            if a is b or a.name == b.name:
                return
            self.fail(path, a, b, f"free variables {a.name!r} and {b.name!r} differ")
        if ma is not b or mb is not a:
            self.fail(path, a, b, f"variable {a.name!r} does not correspond to {b.name!r}")

    def expr(self, a: Any, b: Any, path: str) -> None:
        if isinstance(a, Var) and isinstance(b, Var):
            self.use(a, b, path)
            return
        if type(a) is not type(b):
            self.fail(path, a, b, f"{type(a).__name__} vs {type(b).__name__}")
        if isinstance(a, ConstInt | ConstFloat | ConstBool):
            if a.value != b.value or getattr(a, "dtype", None) != getattr(b, "dtype", None):
                self.fail(path, a, b, f"constant {a.value!r} vs {b.value!r}")
        elif isinstance(a, DynDim):
            if a.name != b.name:
                self.fail(path, a, b, f"dynamic dim {a.name} vs {b.name}")
        elif isinstance(a, BinOp):
            if a.op != b.op:
                self.fail(path, a, b, f"operator {a.op} vs {b.op}")
            self.expr(a.lhs, b.lhs, path + ".lhs")
            self.expr(a.rhs, b.rhs, path + ".rhs")
        elif isinstance(a, UnaryOp):
            if a.op != b.op:
                self.fail(path, a, b, f"operator {a.op} vs {b.op}")
            self.expr(a.operand, b.operand, path + ".operand")
        elif isinstance(a, MakeTuple):
            self.seq(a.elements, b.elements, path, self.expr)
        elif isinstance(a, TupleGetItem):
            if a.index != b.index:
                self.fail(path, a, b, "tuple index differs")
            self.expr(a.tuple, b.tuple, path + ".tuple")
        elif isinstance(a, Call):
            if a.op != b.op or a.is_function != b.is_function:
                self.fail(path, a, b, f"op {a.op} vs {b.op}")
            self.seq(a.args, b.args, path + ".args", self.expr)
            self.kw(dict(a.kwargs), dict(b.kwargs), path + ".kwargs")
            self.kw(dict(a.attrs), dict(b.attrs), path + ".attrs")
            self.typ(a.type, b.type, path + ".type")
        elif a != b:
            self.fail(path, a, b, "values differ")

    def kw(self, a: dict[str, Any], b: dict[str, Any], path: str) -> None:
        if a.keys() != b.keys():
            self.fail(path, a, b, f"keywords {sorted(a)} vs {sorted(b)}")
        for k in a:
            va, vb = a[k], b[k]
            if hasattr(va, "__dataclass_fields__") or isinstance(va, Var):
                self.expr(va, vb, f"{path}.{k}")
            elif va != vb or type(va) is not type(vb):
                self.fail(f"{path}.{k}", va, vb, f"keyword {k}={va!r} vs {vb!r}")

    def seq(self, a: Any, b: Any, path: str, each: Any) -> None:
        if len(a) != len(b):
            self.fail(path, a, b, f"length {len(a)} vs {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            each(x, y, f"{path}[{i}]")

    def opt_shape(self, a: Any, b: Any, path: str) -> None:
        if (a is None) != (b is None):
            self.fail(path, a, b, "one side is absent")
        if a is not None:
            self.seq(a, b, path, self.expr)

    def typ(self, a: Any, b: Any, path: str) -> None:
        if type(a) is not type(b):
            self.fail(path, a, b, f"{type(a).__name__} vs {type(b).__name__}")
        if isinstance(a, ScalarType):
            if a != b:
                self.fail(path, a, b, "scalar dtype differs")
        elif isinstance(a, OpaqueType):
            if a.text != b.text:
                self.fail(path, a, b, "type differs")
        elif isinstance(a, TensorType):
            self.seq(a.shape, b.shape, path + ".shape", self.expr)
            if a.dtype != b.dtype or a.distributed != b.distributed:
                self.fail(path, a, b, "dtype differs")
            self.memref(a.memref, b.memref, path + ".memref")
            if (a.view is None) != (b.view is None):
                self.fail(path + ".view", a, b, "tensor view present on one side only")
            if isinstance(a.view, TensorView):
                self.seq(a.view.stride, b.view.stride, path + ".view.stride", self.expr)
                self.seq(a.view.valid_shape, b.view.valid_shape, path + ".view.valid_shape", self.expr)
                if a.view.layout != b.view.layout or a.view.pad != b.view.pad:
                    self.fail(path + ".view", a, b, "tensor layout differs")
        elif isinstance(a, TileType):
            self.seq(a.shape, b.shape, path + ".shape", self.expr)
            for f in ("dtype", "memory"):
                if getattr(a, f) != getattr(b, f):
                    self.fail(f"{path}.{f}", a, b, f"{f} differs")
            self.memref(a.memref, b.memref, path + ".memref")
            va, vb = a.view or TileView(), b.view or TileView()
            self.opt_shape(va.valid_shape, vb.valid_shape, path + ".view.valid_shape")
            self.opt_shape(va.stride, vb.stride, path + ".view.stride")
            for f in ("blayout", "slayout", "fractal", "pad", "compact"):
                if getattr(va, f) != getattr(vb, f):
                    self.fail(f"{path}.view.{f}", a, b, f"view {f} differs")
            if (va.start_offset is None) != (vb.start_offset is None):
                self.fail(path + ".view.start_offset", a, b, "start_offset differs")
            if va.start_offset is not None:
                self.expr(va.start_offset, vb.start_offset, path + ".view.start_offset")
        elif isinstance(a, TupleType):
            self.seq(a.types, b.types, path, self.typ)

    def memref(self, a: MemRef | None, b: MemRef | None, path: str) -> None:
        if (a is None) != (b is None):
            self.fail(path, a, b, "MemRef present on one side only")
        if a is None or b is None:
            return
        if isinstance(a.base, str) or isinstance(b.base, str):
            if a.base != b.base:
                self.fail(path, a, b, "MemRef differs")
        else:
            self.expr(a.base, b.base, path + ".base")
        for f in ("offset", "size", "slots", "slot"):
            x, y = getattr(a, f), getattr(b, f)
            if (x is None) != (y is None):
                self.fail(f"{path}.{f}", a, b, f"MemRef {f} differs")
            if x is not None:
                self.expr(x, y, f"{path}.{f}")

    def iter_args(self, a: tuple[IterArg, ...], b: tuple[IterArg, ...], path: str) -> None:
        if len(a) != len(b):
            self.fail(path, a, b, f"{len(a)} vs {len(b)} iter_args")
        for i, (x, y) in enumerate(zip(a, b)):
            self.expr(x.init, y.init, f"{path}[{i}].init")
            self.define(x.var, y.var, f"{path}[{i}]")

    def stmts(self, a: tuple[Any, ...], b: tuple[Any, ...], path: str) -> None:
        fa, fb = flatten_stmts(a), flatten_stmts(b)
        for i, (x, y) in enumerate(zip(fa, fb)):
            self.stmt(x, y, f"{path}[{i}]")
        if len(fa) != len(fb):
            extra = fa[len(fb)] if len(fa) > len(fb) else fb[len(fa)]
            self.fail(f"{path}[{min(len(fa), len(fb))}]", fa[len(fb):] or None, fb[len(fa):] or None,
                      f"{len(fa)} vs {len(fb)} statements (first extra: {_show(extra)})")  # fmt: skip

    def stmt(self, a: Any, b: Any, path: str) -> None:
        if type(a) is not type(b):
            self.fail(path, a, b, f"{type(a).__name__} vs {type(b).__name__}")
        if isinstance(a, AssignStmt):
            self.expr(a.value, b.value, path + ".value")
            self.define(a.var, b.var, path + ".var")
        elif isinstance(a, EvalStmt):
            self.expr(a.expr, b.expr, path + ".expr")
        elif isinstance(a, YieldStmt | ReturnStmt):
            self.seq(a.values, b.values, path + ".values", self.expr)
        elif isinstance(a, ScopeStmt):
            if a.kind != b.kind:
                self.fail(path, a, b, f"scope pl.{a.kind} vs pl.{b.kind}")
            self.seq(a.args, b.args, path + ".args", self.expr)
            self.kw(dict(a.kwargs), dict(b.kwargs), path + ".kwargs")
            self.stmts(a.body, b.body, path + ".body")
        elif isinstance(a, AssertStmt):
            self.expr(a.condition, b.condition, path + ".condition")
            if a.message != b.message:
                self.fail(path, a, b, "assert message differs")
        elif isinstance(a, IfStmt):
            self.expr(a.condition, b.condition, path + ".condition")
            self.stmts(a.then_body, b.then_body, path + ".then")
            if (a.else_body is None) != (b.else_body is None):
                self.fail(path + ".else", a, b, "else branch present on one side only")
            if a.else_body is not None:
                self.stmts(a.else_body, b.else_body, path + ".else")
            self.seq(a.return_vars, b.return_vars, path + ".return_vars", self.define)
        elif isinstance(a, ForStmt):
            if a.kind != b.kind or a.stage != b.stage:
                self.fail(path, a, b, "loop kind differs")
            self.kw(dict(a.kwargs), dict(b.kwargs), path + ".kwargs")
            for f in ("start", "stop", "step"):
                self.expr(getattr(a, f), getattr(b, f), f"{path}.{f}")
            self.define(a.loop_var, b.loop_var, path + ".loop_var")
            self.iter_args(a.iter_args, b.iter_args, path + ".iter_args")
            self.stmts(a.body, b.body, path + ".body")
            self.seq(a.return_vars, b.return_vars, path + ".return_vars", self.define)
        elif isinstance(a, WhileStmt):
            self.iter_args(a.iter_args, b.iter_args, path + ".iter_args")
            self.expr(a.condition, b.condition, path + ".condition")
            self.stmts(a.body, b.body, path + ".body")
            self.seq(a.return_vars, b.return_vars, path + ".return_vars", self.define)

    def function(self, a: Function, b: Function, path: str) -> None:
        if (a.name, a.type, a.level, a.role) != (b.name, b.type, b.level, b.role):
            self.fail(path, a.name, b.name, "function name/type differs")
        self.kw(dict(a.options), dict(b.options), path + ".options")
        self.kw(dict(a.attrs), dict(b.attrs), path + ".attrs")
        self.seq(a.params, b.params, path + ".params", self.param)
        self.seq(a.return_types, b.return_types, path + ".return_types", self.typ)
        self.stmts(a.body, b.body, path + ".body")

    def param(self, a: Param, b: Param, path: str) -> None:
        if a.direction != b.direction:
            self.fail(path, a.var, b.var, "parameter direction differs")
        self.define(a.var, b.var, path)


def assert_structural_equal(a: object, b: object) -> None:
    """Raise StructuralMismatch naming the first differing path when `a` and `b` differ."""
    c = Comparer()
    if isinstance(a, Program) and isinstance(b, Program):
        if len(a.functions) != len(b.functions):
            raise StructuralMismatch("program.functions", [f.name for f in a.functions],
                                     [f.name for f in b.functions], "function count differs")  # fmt: skip
        for fa, fb in zip(a.functions, b.functions):
            c.function(fa, fb, f"function {fa.name!r}")
    elif isinstance(a, Function) and isinstance(b, Function):
        c.function(a, b, f"function {a.name!r}")
    elif isinstance(a, TileType | TensorType | ScalarType | TupleType | OpaqueType):
        c.typ(a, b, "type")
    elif isinstance(a, tuple) and isinstance(b, tuple):
        c.stmts(a, b, "body")
    else:
        c.expr(a, b, "expr")


def structural_equal(a: object, b: object) -> bool:
    try:
        assert_structural_equal(a, b)
    except StructuralMismatch:
        return False
    return True
