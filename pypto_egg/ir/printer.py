"""Print IR as `pl` DSL text that parses back to a structurally equal program."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

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
)
from .registry import REGISTRY
from .span import Span
from .stmt import (
    DIALECTS,
    AssertStmt,
    AssignStmt,
    BreakStmt,
    ContinueStmt,
    EvalStmt,
    ForStmt,
    Function,
    FunctionType,
    IfStmt,
    ParamDirection,
    Program,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    Stmt,
    WhileStmt,
    YieldStmt,
)
from .tiles import implicit_layouts
from .types import (
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
    TileLayout,
    TileType,
    TupleType,
    Type,
)
from .walk import dynamic_dim_names

CAST_MODES = {0: "none", 1: "rint", 2: "round", 3: "floor", 4: "ceil", 5: "trunc", 6: "odd"}
_INFIX = {
    "or": ("or", 1), "and": ("and", 2),
    "eq": ("==", 4), "ne": ("!=", 4), "lt": ("<", 4), "le": ("<=", 4), "gt": (">", 4), "ge": (">=", 4),
    "bitor": ("|", 4.1), "bitxor": ("^", 4.2), "bitand": ("&", 4.3), "lshift": ("<<", 4.4), "rshift": (">>", 4.4),
    "add": ("+", 5), "sub": ("-", 5), "mul": ("*", 6), "floordiv": ("//", 6), "mod": ("%", 6), "truediv": ("/", 6),
}  # fmt: skip


class Namer:
    """Gives every variable a unique printed name, as PyPTO's printer does: within a function, a hint that one
    variable has prints as itself; the variables that share a hint print as `x`, `x_1`, ... in definition
    order (parameters, then each statement's definitions depth first), skipping the names of the first kind.
    A variable outside that plan (a printed statement or expression alone) takes the next free `x_<n>`."""

    def __init__(self, defs: Sequence[Var] = ()) -> None:
        self.names: dict[int, str] = {}
        self.used: set[str] = set()
        counts: dict[str, int] = {}
        unique: list[Var] = []
        for v in defs:
            if v.uid not in self.names:
                self.names[v.uid] = ""
                unique.append(v)
                counts[v.name] = counts.get(v.name, 0) + 1
        for v in unique:
            if counts[v.name] == 1:
                self.names[v.uid] = v.name
                self.used.add(v.name)
        for v in unique:
            if counts[v.name] > 1:
                self.names[v.uid] = self._fresh(v.name)

    def _fresh(self, hint: str) -> str:
        name, i = hint, 0
        while name in self.used:
            i += 1
            name = f"{hint}_{i}"
        self.used.add(name)
        return name

    def define(self, v: Var) -> str:
        name = self.names.get(v.uid)
        if name is None:
            name = self.names[v.uid] = self._fresh(v.name)
        return name

    def name(self, v: Var) -> str:
        return self.names.get(v.uid) or v.name


def definitions(f: Function) -> list[Var]:
    """A function's variables in the order the printer plans their names: parameters, then every
    statement's definitions depth first (a loop: its variable, its results, its iter_args; a branch: its
    results; then the bodies)."""
    out = [p.var for p in f.params]
    stack: list[Stmt] = list(reversed(f.body))
    while stack:
        s = stack.pop()
        nested: tuple[Stmt, ...] = ()
        if isinstance(s, AssignStmt):
            out.append(s.var)
        elif isinstance(s, ForStmt):
            out += [s.loop_var, *s.return_vars, *(ia.var for ia in s.iter_args)]
            nested = s.body
        elif isinstance(s, WhileStmt):
            out += [*s.return_vars, *(ia.var for ia in s.iter_args)]
            nested = s.body
        elif isinstance(s, IfStmt):
            out += s.return_vars
            nested = s.then_body + (s.else_body or ())
        elif isinstance(s, SeqStmts):
            nested = s.stmts
        elif isinstance(s, ScopeStmt):
            nested = s.body
        stack.extend(reversed(nested))
    return out


def _prec(e: Expr) -> float:
    if isinstance(e, BinOp) and e.op in _INFIX:
        return _INFIX[e.op][1]
    if isinstance(e, UnaryOp):
        return 3 if e.op == "not" else 7
    return 9


def print_expr(e: Expr, namer: Namer | None = None, typed: bool = False) -> str:
    """An expression as PyPTO's printer spells it. An INDEX literal prints bare, except where the reader
    could not tell its type: inside a composite dimension of a type (`typed`), and in an arithmetic tree of
    literals only (which Python would fold) it prints as `pl.const(v, pl.INDEX)`."""
    n = namer or Namer()
    if isinstance(e, Var):
        return n.name(e)
    if isinstance(e, DynDim):
        return e.name
    if isinstance(e, ConstBool):
        return "True" if e.value else "False"
    if isinstance(e, ConstInt):
        if typed or e.dtype is not DataType.INDEX:
            return f"pl.const({e.value}, pl.{e.dtype.label})"
        return str(e.value)
    if isinstance(e, ConstFloat):
        if e.dtype is not DataType.FP32:
            return f"pl.const({float(e.value)!r}, pl.{e.dtype.label})"
        return repr(float(e.value))
    if isinstance(e, EnumLit):
        return print_kwarg_value("", e.value, n)
    if isinstance(e, FuncRef):
        return f"self.{e.name}"
    if isinstance(e, BinOp):
        if e.op in ("min", "max"):
            return f"pl.{e.op}({print_expr(e.lhs, n, typed)}, {print_expr(e.rhs, n, typed)})"
        typed = typed or _literals_only(e)
        sym, p = _INFIX[e.op]
        lhs, rhs = print_expr(e.lhs, n, typed), print_expr(e.rhs, n, typed)
        if _prec(e.lhs) < p:
            lhs = f"({lhs})"
        if _prec(e.rhs) <= p:
            rhs = f"({rhs})"
        return f"{lhs} {sym} {rhs}"
    if isinstance(e, UnaryOp):
        inner = print_expr(e.operand, n, typed)
        if _prec(e.operand) < _prec(e):
            inner = f"({inner})"
        return f"not {inner}" if e.op == "not" else f"-{inner}"
    if isinstance(e, MakeTuple):
        return "[" + ", ".join(print_expr(x, n) for x in e.elements) + "]"
    if isinstance(e, TupleGetItem):
        return f"{print_expr(e.tuple, n)}[{e.index}]"
    if isinstance(e, Call):
        return _print_call(e, n)
    raise TypeError(f"cannot print {e!r}")


def _literals_only(e: Expr) -> bool:
    if isinstance(e, ConstInt):
        return True
    return isinstance(e, BinOp) and _literals_only(e.lhs) and _literals_only(e.rhs)


def print_dim(d: Expr, n: Namer) -> str:
    """A dimension of a type: a literal or a variable prints bare, a composite one with typed literals."""
    if isinstance(d, ConstInt | Var | DynDim):
        return print_expr(d, n)
    return print_expr(d, n, typed=True)


def print_kwarg_value(key: str, v: Any, namer: Namer | None = None, cast_mode: bool = False) -> str:
    """A keyword or attribute value as DSL text; `cast_mode` spells an integer cast mode by name."""
    if isinstance(v, DataType):
        return f"pl.{v.label}"
    if isinstance(v, MemorySpace):
        return f"pl.Mem.{v.value}"
    if isinstance(v, TensorLayout | TileLayout | PadValue | CompactMode | AtomicType | NamedConst):
        return repr(v)
    if cast_mode and key == "mode" and isinstance(v, int) and not isinstance(v, bool):
        return repr(CAST_MODES.get(v, str(v)))
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, dict):
        return (
            "{"
            + ", ".join(f"{print_kwarg_value('', k)}: {print_kwarg_value(k, x, namer)}" for k, x in v.items())
            + "}"
        )
    if isinstance(v, list):
        return "[" + ", ".join(print_kwarg_value("", x, namer) for x in v) + "]"
    if hasattr(v, "__dataclass_fields__") and not isinstance(v, MemRef):
        return print_expr(v, namer)
    return repr(v)


# ops whose attributes the printer writes positionally, as PyPTO does: pl.cast(x, pl.INDEX)
_POSITIONAL_ATTRS = {"cast": ("target_type", "mode")}


def _print_call(c: Call, n: Namer) -> str:
    op = None if c.is_function else REGISTRY.get(c.op)
    parts: list[str] = []
    kw_parts: list[str] = []
    for i, a in enumerate(c.args):
        pname = op.params[i] if op is not None and i < len(op.params) else None
        if op is not None and pname in op.kwarg_params:
            kw_parts.append(f"{pname}={print_expr(a, n)}")
        else:
            parts.append(print_expr(a, n))
    positional = _POSITIONAL_ATTRS.get(c.op, ()) if not c.is_function else ()
    kwargs = dict(c.kwargs)
    parts += [print_kwarg_value(k, kwargs.pop(k), n, cast_mode=True) for k in positional if k in kwargs]
    cast_mode = c.op == "tile.cast"
    parts += [f"{k}={print_kwarg_value(k, v, n, cast_mode)}" for k, v in kwargs.items()]
    parts += kw_parts
    if c.attrs:
        parts.append("attrs={" + ", ".join(f'"{k}": {print_kwarg_value(k, v, n)}' for k, v in c.attrs) + "}")
    if c.is_function:
        return f"self.{c.op}(" + ", ".join(parts) + ")"
    prefix = "" if c.op.startswith("pld.") else "pl."
    return f"{prefix}{c.op}(" + ", ".join(parts) + ")"


def _shape(shape: tuple[Expr, ...], n: Namer) -> str:
    return "[" + ", ".join(print_dim(d, n) for d in shape) + "]"


def print_memref(m: MemRef, n: Namer) -> str:
    base = f'"{m.base}"' if isinstance(m.base, str) else print_expr(m.base, n)
    rest = [print_expr(x, n) for x in (m.offset, m.size) if x is not None]
    if m.slots is not None:
        rest.append(f"slots={print_expr(m.slots, n)}")
    text = "pl.MemRef(" + ", ".join([base, *rest]) + ")"
    return text if m.slot is None else f"{text}[{print_expr(m.slot, n)}]"


def print_type(t: Type, namer: Namer | None = None, tuple_head: str = "pl.Tuple") -> str:
    n = namer or Namer()
    if isinstance(t, ScalarType):
        return f"pl.Scalar[pl.{t.dtype.label}]"
    if isinstance(t, OpaqueType):
        return t.text
    if isinstance(t, TensorType):
        parts = [_shape(t.shape, n), f"pl.{t.dtype.label}"]
        if t.view is not None:
            vp = [f"stride={_shape(t.view.stride, n)}", f"layout={t.view.layout!r}"]
            if t.view.valid_shape:
                vp.insert(0, f"valid_shape={_shape(t.view.valid_shape, n)}")
            if t.view.pad is not None:
                vp.append(f"pad={t.view.pad!r}")
            parts.append("pl.TensorView(" + ", ".join(vp) + ")")
        if t.memref is not None:
            parts.append(print_memref(t.memref, n))
        head = "pld.DistributedTensor" if t.distributed else "pl.Tensor"
        return f"{head}[" + ", ".join(parts) + "]"
    if isinstance(t, TileType):
        parts = [_shape(t.shape, n), f"pl.{t.dtype.label}"]
        if t.memref is not None:
            parts.append(print_memref(t.memref, n))
        if t.memory is not None:
            parts.append(f"pl.Mem.{t.memory.value}")
        if t.view is not None:
            v = t.view
            vp = []
            if v.valid_shape is not None:
                vp.append(f"valid_shape={_shape(v.valid_shape, n)}")
            if v.stride is not None:
                vp.append(f"stride={_shape(v.stride, n)}")
            if v.start_offset is not None:
                vp.append(f"start_offset={print_expr(v.start_offset, n)}")
            # a layout is printed where it differs from the one the shape and space imply
            implicit = implicit_layouts(t.shape, t.memory)
            for f, default in zip(("blayout", "slayout"), implicit):
                if getattr(v, f) not in (None, default):
                    vp.append(f"{f}={getattr(v, f)!r}")
            if v.fractal not in (None, implicit[2]):
                vp.append(f"fractal={v.fractal}")
            if v.pad is not None:
                vp.append(f"pad={v.pad!r}")
            if v.compact is not None:
                vp.append(f"compact={v.compact!r}")
            parts.append("pl.TileView(" + ", ".join(vp) + ")")
        return "pl.Tile[" + ", ".join(parts) + "]"
    if isinstance(t, TupleType):
        return f"{tuple_head}[" + ", ".join(print_type(x, n) for x in t.types) + "]"
    raise TypeError(f"cannot print type {t!r}")


class _Printer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.spans: list[Span | None] = []  # each line's source: the function or statement it prints
        self.current: Span | None = None
        self.n = Namer()

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)
        self.spans.append(self.current)

    def function(self, f: Function, depth: int) -> None:
        self.current = f.span
        if f.source is not None:
            for line in f.source.splitlines():
                self.emit(depth if line.strip() else 0, line if line.strip() else "")
            return
        self.n = Namer(definitions(f))
        args = []
        for p in f.params:
            name = self.n.define(p.var)
            ty = print_type(p.var.type, self.n)
            if p.direction is not ParamDirection.In:
                ty = f"pl.{p.direction.value}[{ty}]"
            args.append(f"{name}: {ty}")
        if f.has_self:
            args.insert(0, "self")
        rets = [print_type(t, self.n, "tuple") for t in f.return_types]
        ret = "" if not rets else f" -> {rets[0]}" if len(rets) == 1 else f" -> tuple[{', '.join(rets)}]"
        deco = []
        if f.type is not FunctionType.Opaque:
            deco.append(f"type=pl.FunctionType.{f.type.value}")
        if f.level:
            deco.append(f"level=pl.Level.{f.level}")
        if f.role:
            deco.append(f"role=pl.Role.{f.role}")
        deco += [f"{k}={print_kwarg_value(k, v, self.n)}" for k, v in f.options]
        self.emit(depth, "@pl.function" + (f"({', '.join(deco)})" if deco else ""))
        self.emit(depth, f"def {f.name}({', '.join(args)}){ret}:")
        if f.attrs:
            self.emit(depth + 1, f"pl.func_attr({print_kwarg_value('', dict(f.attrs), self.n)})")
        self.body(f.body, depth + 1, ())
        if not f.body:
            self.emit(depth + 1, "...")  # as PyPTO prints an empty body (after pl.func_attr too)

    def body(self, stmts: tuple[Stmt, ...], depth: int, targets: tuple[Var, ...]) -> None:
        for s in stmts:
            self.stmt(s, depth, targets)

    def stmt(self, s: Stmt, d: int, targets: tuple[Var, ...]) -> None:
        n = self.n
        self.current = s.span
        if isinstance(s, AssignStmt):
            value = print_expr(s.value, n)
            self.emit(d, f"{n.define(s.var)}: {print_type(s.var.type, n)} = {value}")
        elif isinstance(s, EvalStmt):
            self.emit(d, print_expr(s.expr, n))
        elif isinstance(s, SeqStmts):
            self.body(s.stmts, d, targets)
        elif isinstance(s, YieldStmt):
            call = "pl.yield_(" + ", ".join(print_expr(v, n) for v in s.values) + ")"
            if len(targets) == 1:
                self.emit(d, f"{n.define(targets[0])}: {print_type(targets[0].type, n)} = {call}")
            elif targets:
                self.emit(d, ", ".join(n.define(v) for v in targets) + f" = {call}")
            else:
                self.emit(d, call)
        elif isinstance(s, BreakStmt):
            self.emit(d, "break")
        elif isinstance(s, ContinueStmt):
            self.emit(d, "continue")
        elif isinstance(s, AssertStmt):
            msg = f", {s.message!r}" if s.message is not None else ""
            self.emit(d, f"assert {print_expr(s.condition, n)}{msg}")
        elif isinstance(s, ReturnStmt):
            self.emit(d, ("return " + ", ".join(print_expr(v, n) for v in s.values)).rstrip())
        elif isinstance(s, ScopeStmt):
            kw = [print_expr(a, n) for a in s.args]
            kw += [f"{k}={_scope_value(k, v, n)}" for k, v in s.kwargs]
            self.emit(d, f"with pl.{s.kind}({', '.join(kw)}):")
            self.body(s.body, d + 1, targets)
            if not s.body:
                self.emit(d + 1, "pass")
        elif isinstance(s, IfStmt):
            self.emit(d, f"if {print_expr(s.condition, n)}:")
            self.body(s.then_body, d + 1, s.return_vars)
            if not s.then_body:
                self.emit(d + 1, "pass")
            if s.else_body is not None:
                self.emit(d, "else:")
                self.body(s.else_body, d + 1, s.return_vars)
                if not s.else_body:
                    self.emit(d + 1, "pass")
        elif isinstance(s, ForStmt):
            self.for_stmt(s, d)
        elif isinstance(s, WhileStmt):
            inits = ", ".join(print_expr(ia.init, n) for ia in s.iter_args)
            names = ", ".join(n.define(ia.var) for ia in s.iter_args)
            trail = "," if len(s.iter_args) == 1 else ""  # PyPTO's reader wants a tuple target
            self.emit(d, f"for ({names}{trail}) in pl.while_(init_values=({inits}{trail})):")
            self.emit(d + 1, f"pl.cond({print_expr(s.condition, n)})")
            self.body(s.body, d + 1, s.return_vars)
        else:
            raise TypeError(f"cannot print statement {s!r}")

    def for_stmt(self, s: ForStmt, d: int) -> None:
        n = self.n
        start, stop, step = (print_expr(x, n) for x in (s.start, s.stop, s.step))
        if (  # the default start is an INDEX 0; another type of 0 is spelled out
            isinstance(s.start, ConstInt)
            and s.start.value == 0
            and s.start.dtype is DataType.INDEX
            and isinstance(s.step, ConstInt)
            and s.step.value == 1
        ):
            bounds = [stop]
        elif isinstance(s.step, ConstInt) and s.step.value == 1:
            bounds = [start, stop]
        else:
            bounds = [start, stop, step]
        if s.stage is not None:
            bounds.append(f"stage={s.stage}")
        bounds += [f"{k}={print_kwarg_value(k, v, n)}" for k, v in s.kwargs]
        inits = [print_expr(ia.init, n) for ia in s.iter_args]
        loop_var = n.define(s.loop_var)
        if s.iter_args:
            trail = "," if len(inits) == 1 else ""
            bounds.append(f"init_values=({', '.join(inits)}{trail})")
            names = ", ".join(n.define(ia.var) for ia in s.iter_args)
            head = f"{loop_var}, ({names}{trail})"
        else:
            head = loop_var
        kind = s.kind.value
        self.emit(d, f"for {head} in pl.{kind}({', '.join(bounds)}):")
        self.body(s.body, d + 1, s.return_vars)
        if not s.body:
            self.emit(d + 1, "pass")


def _scope_value(key: str, v: Any, n: Namer) -> str:
    if key == "level" and isinstance(v, str):
        return f"pl.Level.{v}"
    if key == "role" and isinstance(v, str):
        return f"pl.Role.{v}"
    return print_kwarg_value(key, v, n)


def python_print(node: object, dialect: str | None = None) -> str:
    """DSL text for a program, function, statement, expression or type.

    A program's header imports the `pl` of `dialect` (a key of DIALECTS), by default the one it was read in."""
    if isinstance(node, Program):
        return print_program_lines(node, dialect)[0]
    p = _Printer()
    if isinstance(node, Function):
        p.function(node, 0)
        return "\n".join(p.lines) + "\n"
    if isinstance(node, TileType | TensorType | ScalarType | TupleType | OpaqueType):
        return print_type(node)
    if isinstance(node, AssignStmt | EvalStmt | SeqStmts | ForStmt | WhileStmt | IfStmt | YieldStmt | ReturnStmt
                  | ScopeStmt | BreakStmt | ContinueStmt | AssertStmt):  # fmt: skip
        p.stmt(node, 0, ())
        return "\n".join(p.lines)
    return print_expr(node)  # type: ignore[arg-type]


def statement_printer(f: Function) -> Callable[[Stmt], str]:
    """Print statements of `f` one at a time, each variable named as printing all of `f` names it."""
    namer = Namer(definitions(f))

    def text(s: Stmt) -> str:
        p = _Printer()
        p.n = namer
        p.stmt(s, 0, ())
        return "\n".join(p.lines)

    return text


def print_program_lines(node: Program, dialect: str | None = None) -> tuple[str, list[Span | None]]:
    """A program's text, and for each of its lines the span of the function or statement it prints."""
    module = DIALECTS.get(dialect or node.dialect)
    if module is None:
        raise ValueError(f"unknown dialect {dialect!r}; choose one of {', '.join(DIALECTS)}")
    p = _Printer()
    dyn: set[str] = set()
    dynamic_dim_names(node.functions, dyn)
    p.lines += [f"# pypto.program: {node.name}", f"import {module} as pl", ""]
    if dyn:
        p.lines += [f'{x} = pl.dynamic("{x}")' for x in sorted(dyn)] + [""]
    p.lines += ["@pl.program", f"class {node.name}:"]
    p.spans += [None] * len(p.lines)
    for i, f in enumerate(node.functions):
        if i:
            p.lines.append("")
            p.spans.append(None)
        p.function(f, 1)
    if not node.functions:
        p.lines.append("    pass")  # a class needs a body
        p.spans.append(None)
    return "\n".join(p.lines) + "\n", p.spans
