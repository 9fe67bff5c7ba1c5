"""Read `pl` DSL source (a `@pl.program` class) into IR with `ast`; bodies are never executed."""

from __future__ import annotations

import ast
import linecache
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

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
    FuncRef,
    MakeTuple,
    TupleGetItem,
    UnaryOp,
    Var,
    static_int,
    type_of,
)
from ..ir.printer import CAST_MODES, print_type
from ..ir.signatures import SIGNATURES
from ..ir.span import Span
from ..ir.stmt import (
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
    IterArg,
    LoopKind,
    Param,
    ParamDirection,
    Program,
    ReturnStmt,
    ScopeStmt,
    Stmt,
    WhileStmt,
    YieldStmt,
)
from ..ir.tiles import make_tile_type, printed_view
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
from .runtime import DynamicDim

# function name -> printed variable name -> the name hint the printer made it from (see `parse`)
NameHints = Mapping[str, Mapping[str, str]]

ENUMS: dict[str, Any] = {
    "Mem": MemorySpace, "MemorySpace": MemorySpace, "TileLayout": TileLayout, "TensorLayout": TensorLayout,
    "PadValue": PadValue, "CompactMode": CompactMode, "AtomicType": AtomicType,
}  # fmt: skip
OP_ALIASES = {
    "load": "tile.load", "store": "tile.store", "cast": "tile.cast", "transpose": "tile.transpose",
    "matmul": "tile.matmul", "matmul_acc": "tile.matmul_acc", "batch_matmul": "tile.batch_matmul",
    "batch_matmul_acc": "tile.batch_matmul_acc", "create_tensor": "tensor.create", "reshape": "tile.reshape",
    "move": "tile.move", "slice": "tile.slice", "assemble": "tile.assemble",
}  # fmt: skip
KEYWORD_ALIASES = {("tile.load", "valid_shapes"): "valid_shape"}
_BINOPS = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Div: "truediv",
    ast.LShift: "lshift", ast.RShift: "rshift", ast.BitAnd: "bitand", ast.BitOr: "bitor", ast.BitXor: "bitxor",
}  # fmt: skip
_CMPOPS = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}
_CAST_CODES = {v: k for k, v in CAST_MODES.items()}


# ops whose omitted target memory PyPTO's DSL spells as Vec (the specification's newer DSL leaves it unset)
_VEC_BY_DEFAULT = frozenset({"tile.load", "tile.create"})


class _Ctx:
    """Where the text came from, for spans and error positions."""

    def __init__(
        self,
        filename: str,
        line_offset: int,
        col_offset: int,
        env: dict[str, Any],
        dialect: str = "pypto_egg",
    ) -> None:
        self.filename, self.line_offset, self.col_offset, self.env = filename, line_offset, col_offset, env
        self.dialect = dialect  # which `pl` the text imports: its ops' defaults differ (see op_call)

    def span(self, node: ast.AST) -> Span:
        return Span(self.filename, getattr(node, "lineno", 0) + self.line_offset,
                    getattr(node, "col_offset", 0) + 1 + self.col_offset)  # fmt: skip

    def error(self, node: ast.AST, message: str) -> NoReturn:
        raise DSLError(f"{self.span(node)}: {message}")


def _dotted(node: ast.AST) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _pl_name(node: ast.AST) -> str | None:
    """`pl.tile.add` → "tile.add", `pld.tile.get` → "pld.tile.get"; None when not rooted at pl / pld."""
    d = _dotted(node)
    if d is None or "." not in d:
        return None
    root, rest = d.split(".", 1)
    if root == "pld":
        return "pld." + rest
    return rest if root in ("pl", "language") or root.endswith("pl") else None


# function types, levels and roles are kept as their member names
_NAMED_ENUMS = ("Level", "Role", "FunctionType")


class _FunctionParser:
    def __init__(
        self, ctx: _Ctx, signatures: dict[str, tuple[Type, ...]], name_hints: NameHints | None = None
    ) -> None:
        self.ctx = ctx
        self.signatures = signatures
        self.yield_types: dict[str, Type] = {}  # `r: <type> = pl.yield_(...)`: the type the loop result gets
        self.name_hints = name_hints or {}
        self.hints: Mapping[str, str] = {}  # the current function's

    def var(self, name: str, ty: Type, span: Span | None) -> Var:
        """A new variable for a printed name; its name is the hint the printer made the printed name from."""
        return Var(self.hints.get(name, name), ty, span)

    # ------------------------------------------------------------ values and names

    def lookup(self, env: dict[str, Var], node: ast.Name) -> Expr:
        if node.id in env:
            return env[node.id]
        if node.id in self.ctx.env:
            return self.constant(node, self.ctx.env[node.id])
        self.ctx.error(node, f"name '{node.id}' is not defined (expected a variable defined above it, "
                             f"a module-level constant or a pl.dynamic dimension)")  # fmt: skip

    def constant(self, node: ast.AST, value: Any) -> Expr:
        span = self.ctx.span(node)
        if isinstance(value, DynamicDim):
            return DynDim(value.name, span)
        if isinstance(value, bool):
            return ConstBool(value, span)
        if isinstance(value, int):
            return ConstInt(value, DataType.INDEX, span)
        if isinstance(value, float):
            return ConstFloat(value, DataType.FP32, span)
        self.ctx.error(node, f"cannot use {value!r} as a value in a pl program")

    def enum_value(self, node: ast.AST) -> Any:
        """pl.FP32, pl.Mem.Vec, pl.TileLayout.row_major, ... → the enum member, else raise."""
        name = _pl_name(node)
        if name is not None:
            if name in DataType.__members__:
                return DataType[name]
            head, _, member = name.partition(".")
            if head in ENUMS and member:
                enum_cls = ENUMS[head]
                try:
                    return enum_cls[member]
                except KeyError:
                    self.ctx.error(node, f"unknown {head} member '{member}'")
            if head in _NAMED_ENUMS and member:
                return member
            if member and head[:1].isalpha() and not name.startswith(("tile.", "tensor.", "system.")):
                root = "pld" if name.startswith("pld.") else "pl"
                return NamedConst(name[4:] if root == "pld" else name, root)
        self.ctx.error(
            node, f"expected a pl enum value such as pl.FP32 or pl.Mem.Vec, got '{ast.unparse(node)}'"
        )

    def kwarg_value(self, node: ast.AST, key: str, env: dict[str, Var]) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Dict):
            return {self.kwarg_value(k, "", env): self.kwarg_value(v, "", env) for k, v in zip(node.keys, node.values)
                    if k is not None}  # fmt: skip
        if isinstance(node, ast.Attribute) and _pl_name(node) is not None:
            return self.enum_value(node)
        if isinstance(node, ast.Name) and node.id in self.ctx.env and node.id not in env:
            return self.ctx.env[node.id]
        if isinstance(node, ast.List | ast.Tuple) and any(self._is_enum(e) for e in node.elts):
            return [self.kwarg_value(e, key, env) for e in node.elts]
        if (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.op, ast.USub)
            and isinstance(node.operand, ast.Constant)
        ):
            value = node.operand.value
            if isinstance(value, int | float) and not isinstance(value, bool):
                return -value
        return self.expr(node, env)

    @staticmethod
    def _is_enum(node: ast.AST) -> bool:
        name = _pl_name(node)
        return (
            name is not None
            and isinstance(node, ast.Attribute)
            and (name in DataType.__members__ or name[:1].isupper() or name.startswith(("adir.", "pld.")))
        )

    def expr(self, node: ast.AST, env: dict[str, Var]) -> Expr:
        span = self.ctx.span(node)
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool):
                return ConstBool(node.value, span)
            if isinstance(node.value, int):
                return ConstInt(node.value, DataType.INDEX, span)
            if isinstance(node.value, float):
                return ConstFloat(node.value, DataType.FP32, span)
            if isinstance(node.value, str) or node.value is None:
                return EnumLit(node.value, span)
            self.ctx.error(node, f"unsupported literal {node.value!r}")
        if isinstance(node, ast.Name):
            return self.lookup(env, node)
        if isinstance(node, ast.List | ast.Tuple):
            return MakeTuple(tuple(self.expr(e, env) for e in node.elts), span)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return BinOp(_BINOPS[type(node.op)], self.expr(node.left, env), self.expr(node.right, env), span)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMPOPS:
            return BinOp(_CMPOPS[type(node.ops[0])], self.expr(node.left, env), self.expr(node.comparators[0], env),
                         span)  # fmt: skip
        if isinstance(node, ast.BoolOp):
            op = "and" if isinstance(node.op, ast.And) else "or"
            out = self.expr(node.values[0], env)
            for v in node.values[1:]:
                out = BinOp(op, out, self.expr(v, env), span)
            return out
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                inner = self.expr(node.operand, env)
                if isinstance(inner, ConstInt):
                    return ConstInt(-inner.value, inner.dtype, span)
                if isinstance(inner, ConstFloat):
                    return ConstFloat(-inner.value, inner.dtype, span)
                return UnaryOp("neg", inner, span)
            if isinstance(node.op, ast.Not):
                return UnaryOp("not", self.expr(node.operand, env), span)
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            base = self.expr(node.value, env)
            if isinstance(type_of(base), TupleType) and isinstance(node.slice.value, int):
                return TupleGetItem(base, node.slice.value, span)
        if isinstance(node, ast.Call):
            return self.call(node, env)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                if node.attr not in self.signatures:
                    self.ctx.error(node, f"self.{node.attr} is not a function of this program")
                return FuncRef(node.attr, span)
            if self._is_enum(node):
                return EnumLit(self.enum_value(node), span)
        self.ctx.error(node, f"unsupported expression '{ast.unparse(node)}'")

    # ------------------------------------------------------------ calls

    def call(self, node: ast.Call, env: dict[str, Var], annotation: Type | None = None) -> Expr:
        span = self.ctx.span(node)
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            return self.function_call(node, func.attr, env, annotation)
        name = _pl_name(func)
        if name is None:
            self.ctx.error(node, f"unsupported call '{ast.unparse(func)}' (expected pl.* or self.<function>)")
        if name in ("min", "max"):
            if len(node.args) != 2:
                self.ctx.error(node, f"pl.{name} takes two operands")
            return BinOp(name, self.expr(node.args[0], env), self.expr(node.args[1], env), span)
        if name == "const":
            return self.const(node, env)
        if name == "cast" and node.args:
            first = self.expr(node.args[0], env)
            if not isinstance(type_of(first), TileType | TensorType):
                return self.op_call(node, "cast", env, annotation)
        op = OP_ALIASES.get(name, name)
        if op not in opreg.REGISTRY and f"tile.{op}" in opreg.REGISTRY:
            op = f"tile.{op}"
        if op not in opreg.REGISTRY:
            shown = name if name.startswith("pld.") else f"pl.{name}"
            self.ctx.error(node, f"unknown op '{shown}'")
        return self.op_call(node, op, env, annotation)

    def const(self, node: ast.Call, env: dict[str, Var]) -> Expr:
        """`pl.const(1, pl.INT32)`: a literal with an explicit dtype."""
        span = self.ctx.span(node)
        if len(node.args) != 2:
            self.ctx.error(node, "pl.const takes a value and a dtype: pl.const(0, pl.INT64)")
        value = self.expr(node.args[0], env)
        dtype = self.enum_value(node.args[1])
        if not isinstance(dtype, DataType):
            self.ctx.error(node.args[1], "pl.const needs a dtype such as pl.INT32")
        if isinstance(value, ConstBool):
            return ConstBool(value.value, span)
        if isinstance(value, ConstInt) and not dtype.is_float:
            return ConstInt(value.value, dtype, span)
        if isinstance(value, ConstInt | ConstFloat):
            return ConstFloat(float(value.value), dtype, span)
        self.ctx.error(node.args[0], "pl.const takes a number literal")

    def function_call(self, node: ast.Call, name: str, env: dict[str, Var], annotation: Type | None) -> Expr:
        """A call of another function; the call site's annotation is its type (a dynamic-shape callee
        returns `[M, 64]`, the call `[256, 64]`). Keywords and `attrs=` are kept as written."""
        if name not in self.signatures:
            self.ctx.error(node, f"self.{name} is not a function of this program")
        rets = self.signatures[name]
        ty: Type = rets[0] if len(rets) == 1 else TupleType(rets)
        if annotation is not None:
            ty = annotation
        args = tuple(self.expr(a, env) for a in node.args)
        kwargs, attrs = self.keywords(node, env)
        return Call(name, args, ty, tuple(kwargs.items()), attrs, span=self.ctx.span(node), is_function=True)

    def keywords(
        self, node: ast.Call, env: dict[str, Var]
    ) -> tuple[dict[str, Any], tuple[tuple[str, Any], ...]]:
        kwargs: dict[str, Any] = {}
        attrs: tuple[tuple[str, Any], ...] = ()
        for kw in node.keywords:
            if kw.arg is None:
                self.ctx.error(kw, "** arguments are not supported")
            value = self.kwarg_value(kw.value, kw.arg, env)
            if kw.arg == "attrs":
                if not isinstance(value, dict):
                    self.ctx.error(kw, "attrs= takes a dict literal")
                attrs = tuple(value.items())
            else:
                kwargs[kw.arg] = value
        return kwargs, attrs

    def op_call(self, node: ast.Call, op: str, env: dict[str, Var], annotation: Type | None = None) -> Expr:
        d = opreg.REGISTRY[op]
        if not d.deduces:
            return self.annotated_call(node, op, env, annotation)
        slots: list[Expr | None] = [None] * len(d.params)
        kwargs: dict[str, Any] = {}
        attrs: tuple[tuple[str, Any], ...] = ()
        positional = list(node.args)
        # dtype given positionally (pl.tile.create([32, 32], pl.FP32), reinterpret_view(t, pl.INT16))
        if op in ("tile.create", "tile.reinterpret_view", "tile.full") and positional:
            last = positional[-1]
            if _pl_name(last) in DataType.__members__:
                kwargs["dtype"] = self.enum_value(last)
                positional = positional[:-1]
        # attributes given positionally, as the DSL allows: tile.cast(t, pl.FP32), cast(x, pl.INDEX, 'round')
        signature = tuple(p.rstrip("*") for p in SIGNATURES.get(op, ()))
        while len(positional) > len(d.params) and len(positional) <= len(signature):
            key = signature[len(positional) - 1]
            if key not in d.kwargs:
                break
            kwargs[key] = self.kwarg_value(positional[-1], key, env)
            positional = positional[:-1]
        if len(positional) > len(d.params):
            self.ctx.error(node, f"{op} takes at most {len(d.params)} operands ({', '.join(d.params)}), "
                                 f"got {len(positional)}")  # fmt: skip
        for i, a in enumerate(positional):
            slots[i] = self.expr(a, env)
        for kw in node.keywords:
            if kw.arg is None:
                self.ctx.error(kw, "** arguments are not supported")
            key = KEYWORD_ALIASES.get((op, kw.arg), kw.arg)
            if key == "attrs":
                value = self.kwarg_value(kw.value, key, env)
                if not isinstance(value, dict):
                    self.ctx.error(kw, "attrs= takes a dict literal")
                attrs = tuple(value.items())
            elif key in d.params:
                slots[d.params.index(key)] = self.expr(kw.value, env)
            elif key in d.kwargs:
                kwargs[key] = self.kwarg_value(kw.value, key, env)
            else:
                accepted = sorted(set(d.params) | d.kwargs | {"attrs"})
                self.ctx.error(kw, f"{op} has no keyword '{key}' (accepted: {', '.join(accepted)})")
        if op in ("tile.cast", "cast") and isinstance(kwargs.get("mode"), str):
            if kwargs["mode"] not in _CAST_CODES:
                self.ctx.error(node, f"unknown cast mode {kwargs['mode']!r}; one of {sorted(_CAST_CODES)}")
            kwargs["mode"] = _CAST_CODES[kwargs["mode"]]
        if op == "tile.load" and slots[3] is None:
            slots[3] = slots[2]
        if op in _VEC_BY_DEFAULT and self.ctx.dialect == "pypto":
            kwargs.setdefault(
                "target_memory", MemorySpace.Vec
            )  # PyPTO's DSL fills it; pypto-egg's leaves it unset
        if op in opreg.SCALAR_FORM and slots[1] is not None and isinstance(type_of(slots[1]), ScalarType):
            op = opreg.SCALAR_FORM[op]
        n = len(slots)
        while n and slots[n - 1] is None:
            n -= 1
        if any(s is None for s in slots[:n]) or n < d.required:
            missing = next(p for p, s in zip(d.params, slots) if s is None)
            self.ctx.error(node, f"{op} is missing operand '{missing}'")
        args = tuple(s for s in slots[:n] if s is not None)
        try:
            return opreg.make_call(op, args, kwargs, attrs, self.ctx.span(node))
        except TypeDeductionError as e:
            self.ctx.error(node, str(e))

    def annotated_call(self, node: ast.Call, op: str, env: dict[str, Var], annotation: Type | None) -> Expr:
        """An op without deduction: operands and keywords kept as written, the annotation is its type."""
        d = opreg.REGISTRY[op]
        if len(node.args) > len(d.params) and not d.variadic:
            self.ctx.error(node, f"{op} takes at most {len(d.params)} operands ({', '.join(d.params)}), "
                                 f"got {len(node.args)}")  # fmt: skip
        args = tuple(self.expr(a, env) for a in node.args)
        kwargs, attrs = self.keywords(node, env)
        for kw in node.keywords:
            if kw.arg not in d.kwargs and kw.arg != "attrs" and not d.any_keyword:
                accepted = sorted(d.kwargs | {"attrs"})
                self.ctx.error(kw, f"{op} has no keyword '{kw.arg}' (accepted: {', '.join(accepted)})")
        try:
            return opreg.make_call(op, args, kwargs, attrs, self.ctx.span(node), annotation)
        except TypeDeductionError as e:
            self.ctx.error(node, str(e))

    # ------------------------------------------------------------ types

    def dims(self, node: ast.AST, env: dict[str, Var]) -> tuple[Expr, ...]:
        if not isinstance(node, ast.List | ast.Tuple):
            self.ctx.error(node, "expected a list of dimensions like [2, 3, 4]")
        return tuple(self.expr(e, env) for e in node.elts)

    def type(self, node: ast.AST, env: dict[str, Var]) -> Type:
        if isinstance(node, ast.Subscript):
            head = _pl_name(node.value) or _dotted(node.value)
            items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
            if head in ("tuple", "Tuple"):
                return TupleType(tuple(self.type(i, env) for i in items))
            if head == "Scalar":
                return ScalarType(self.enum_value(items[0]))
            if head in ("Tensor", "Tile", "pld.DistributedTensor") and len(items) >= 2:
                shape = self.dims(items[0], env)
                dtype = self.enum_value(items[1])
                if not isinstance(dtype, DataType):
                    self.ctx.error(
                        items[1], f"expected a dtype such as pl.FP32, got '{ast.unparse(items[1])}'"
                    )
                if head != "Tile":
                    return self.tensor_type(shape, dtype, items[2:], env, head != "Tensor")
                memory, tview, memref = None, None, None
                for extra in items[2:]:
                    if isinstance(extra, ast.Call) and _pl_name(extra.func) == "TileView":
                        tview = self.tile_view(extra, env)
                    elif _is_memref(extra):
                        memref = self.memref(extra, env)
                    elif isinstance(extra, ast.Name):
                        memref = MemRef(extra.id)
                    else:
                        value = self.enum_value(extra)
                        if not isinstance(value, MemorySpace):
                            self.ctx.error(
                                extra, "expected a memory space (pl.Mem.X), a pl.TileView or a MemRef"
                            )
                        memory = value
                # a printed view leaves out the layouts the shape and space imply
                return make_tile_type(shape, dtype, memory, printed_view(shape, memory, tview), memref)
            if head in ("Array", "Ptr") or (head or "").startswith("pld."):
                return OpaqueType(ast.unparse(node))
        if isinstance(node, ast.Attribute) and _pl_name(node) is not None:
            name = _pl_name(node) or ""
            if name[:1].isupper() or name.startswith("pld."):
                return OpaqueType(ast.unparse(node))
        self.ctx.error(node, f"expected a type such as pl.Tile[[16, 16], pl.FP32], got '{ast.unparse(node)}'")

    def tensor_type(
        self,
        shape: tuple[Expr, ...],
        dtype: DataType,
        extras: list[ast.expr],
        env: dict[str, Var],
        distributed: bool,
    ) -> TensorType:
        view, memref = None, None
        for extra in extras:
            if _is_memref(extra):
                memref = self.memref(extra, env)
            else:
                view = self.tensor_view(extra, env)
        return TensorType(shape, dtype, view, memref, distributed)

    def memref(self, node: ast.AST, env: dict[str, Var]) -> MemRef:
        """`pl.MemRef("mem_ddr_0", 0, 16384)`, `pl.MemRef(ptr_var, 0, 32)`, `pl.MemRef("name")`, or one slot
        of a ring: `pl.MemRef("ping", 0, 1024, slots=2)[i % 2]`."""
        slot = None
        if isinstance(node, ast.Subscript):
            slot = self.expr(node.slice, env)
            node = node.value
        assert isinstance(node, ast.Call)
        slots = None
        for kw in node.keywords:
            if kw.arg != "slots":
                self.ctx.error(kw, f"pl.MemRef has no keyword '{kw.arg}' (accepted: slots)")
            slots = self.expr(kw.value, env)
        if not 1 <= len(node.args) <= 3:
            self.ctx.error(node, 'expected pl.MemRef("name"[, offset, size])')
        first = node.args[0]
        base: str | Expr
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            base = first.value
        else:
            base = self.expr(first, env)
        rest = [self.expr(a, env) for a in node.args[1:]]
        return MemRef(base, rest[0] if rest else None, rest[1] if len(rest) > 1 else None, slots, slot)

    def tile_view(self, node: ast.Call, env: dict[str, Var]) -> TileView:
        fields: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg in ("valid_shape", "stride"):
                fields[kw.arg] = self.dims(kw.value, env)
            elif kw.arg == "start_offset":
                fields[kw.arg] = self.expr(kw.value, env)
            elif kw.arg == "fractal":
                fields[kw.arg] = static_int(self.expr(kw.value, env))
            elif kw.arg in ("blayout", "slayout", "pad", "compact"):
                fields[kw.arg] = self.enum_value(kw.value)
            else:
                self.ctx.error(kw, f"pl.TileView has no field '{kw.arg}'")
        return TileView(**fields)

    def tensor_view(self, node: ast.AST, env: dict[str, Var]) -> TensorView:
        if not (isinstance(node, ast.Call) and _pl_name(node.func) == "TensorView"):
            self.ctx.error(node, "expected pl.TensorView(...)")
        fields: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg in ("stride", "valid_shape"):
                fields[kw.arg] = self.dims(kw.value, env)
            elif kw.arg in ("layout", "pad"):
                fields[kw.arg] = self.enum_value(kw.value)
            else:
                self.ctx.error(kw, f"pl.TensorView has no field '{kw.arg}'")
        return TensorView(**fields)

    def param_type(self, node: ast.AST, env: dict[str, Var]) -> tuple[Type, ParamDirection]:
        if isinstance(node, ast.Subscript) and _pl_name(node.value) in ("Out", "InOut"):
            return self.type(node.slice, env), ParamDirection[_pl_name(node.value) or "In"]
        return self.type(node, env), ParamDirection.In

    def annotated(self, node: ast.AST, ann: Type, value: Expr) -> Type:
        """The type a variable gets from its annotation and its value's deduced type."""
        ded = type_of(value)
        if isinstance(ann, OpaqueType) or isinstance(ded, OpaqueType) or ann == ded:
            return ann
        if isinstance(ann, TileType) and isinstance(ded, TileType):
            if ann.dtype != ded.dtype:
                self._mismatch(node, ann, ded)
            same_shape = len(ann.shape) == len(ded.shape) and all(
                static_int(a) == static_int(b) if static_int(a) is not None else True
                for a, b in zip(ann.shape, ded.shape)
            )
            if not same_shape and not _same_count(ann.shape, ded.shape):
                self._mismatch(node, ann, ded)
            memory = ded.memory if ded.memory is not None else ann.memory
            view = ann.view if ann.view is not None else (ded.view if same_shape else None)
            return make_tile_type(ann.shape, ann.dtype, memory, view, ann.memref or ded.memref)
        if isinstance(ann, TensorType) and isinstance(ded, TensorType):
            if ann.dtype != ded.dtype or len(ann.shape) != len(ded.shape):
                self._mismatch(node, ann, ded)
            if ann.view is not None or ann.memref is not None or ann.distributed != ded.distributed:
                return ann
            return ded
        if type(ann) is not type(ded):
            self._mismatch(node, ann, ded)
        return ann

    def _mismatch(self, node: ast.AST, ann: Type, ded: Type) -> NoReturn:
        self.ctx.error(
            node, f"annotation {print_type(ann)} disagrees with the value's type {print_type(ded)}"
        )

    # ------------------------------------------------------------ statements

    def function(self, fn: ast.FunctionDef, options: dict[str, Any]) -> Function:
        self.hints = self.name_hints.get(fn.name, {})
        env: dict[str, Var] = {}
        params: list[Param] = []
        args = fn.args.args
        if options.get("role") != "SubWorker":
            if not args or args[0].arg != "self":
                self.ctx.error(fn, f"function '{fn.name}' must take self as its first parameter")
            args = args[1:]
        for a in args:
            if a.annotation is None:
                self.ctx.error(a, f"parameter '{a.arg}' needs a type annotation")
            ty, direction = self.param_type(a.annotation, env)
            v = self.var(a.arg, ty, self.ctx.span(a))
            env[a.arg] = v
            params.append(Param(v, direction))
        stmts = list(fn.body)
        attrs: tuple[tuple[str, Any], ...] = ()
        if stmts and isinstance(stmts[0], ast.Expr) and isinstance(stmts[0].value, ast.Constant) \
                and isinstance(stmts[0].value.value, str):  # fmt: skip
            stmts = stmts[1:]  # docstring
        first = stmts[0] if stmts else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Call)
            and _pl_name(first.value.func) == "func_attr"
        ):
            call = first.value
            value = (
                self.kwarg_value(call.args[0], "", env) if len(call.args) == 1 and not call.keywords else None
            )
            if not isinstance(value, dict):
                self.ctx.error(
                    call,
                    'pl.func_attr takes one dict literal, e.g. pl.func_attr({"split": pl.SplitMode.UP_DOWN})',
                )
            attrs = tuple(value.items())
            stmts = stmts[1:]
        body, _ = self.block(stmts, env)
        return Function(fn.name, tuple(params), self.signatures[fn.name], tuple(body),
                        options.get("type", FunctionType.Opaque), options.get("level"), options.get("role"),
                        self.ctx.span(fn), tuple(options.get("options", ())), attrs)  # fmt: skip

    def block(self, stmts: list[ast.stmt], env: dict[str, Var]) -> tuple[list[Stmt], list[str] | None]:
        """Statements of one block, and the names a trailing `x = pl.yield_(...)` binds (None: no yield)."""
        out: list[Stmt] = []
        targets: list[str] | None = None
        for s in stmts:
            t = self.stmt(s, env, out)
            if t is not None:
                targets = t
        return out, targets

    def stmt(self, s: ast.stmt, env: dict[str, Var], out: list[Stmt]) -> list[str] | None:
        """One statement into `out`; returns the names a yield (or a with-scope) binds, if any."""
        span = self.ctx.span(s)
        if isinstance(s, ast.Pass):
            return None
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
            return None  # docstring
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and s.value.value is Ellipsis:
            return None  # `...` body
        if isinstance(s, ast.Break | ast.Continue):
            out.append(BreakStmt(span) if isinstance(s, ast.Break) else ContinueStmt(span))
            return None
        if isinstance(s, ast.Assert):
            out.append(self.assert_stmt(s, env, span))
            return None
        value_node = s.value if isinstance(s, ast.Assign | ast.AnnAssign | ast.Expr) else None
        if isinstance(value_node, ast.Call) and _pl_name(value_node.func) == "yield_":
            return self.yield_stmt(s, value_node, env, span, out)
        if isinstance(s, ast.AnnAssign):
            self.annotated_assign(s, env, span, out)
        elif isinstance(s, ast.Assign):
            self.assign(s, env, span, out)
        elif isinstance(s, ast.Expr):
            if isinstance(s.value, ast.Call) and _pl_name(s.value.func) == "func_attr":
                self.ctx.error(s, "pl.func_attr({...}) must be the first statement of a function")
            if isinstance(s.value, ast.Call) and _pl_name(s.value.func) == "cond":
                self.ctx.error(s, "pl.cond(...) must be the first statement of a pl.while_ loop")
            out.append(EvalStmt(self.expr(s.value, env), span))
        elif isinstance(s, ast.Return):
            out.append(self.return_stmt(s, env, span))
        elif isinstance(s, ast.For):
            out.append(self.for_stmt(s, env))
        elif isinstance(s, ast.If):
            out.append(self.if_stmt(s, env))
        elif isinstance(s, ast.With):
            scope, targets = self.with_stmt(s, env)
            out.append(scope)
            return targets
        else:
            self.ctx.error(s, f"unsupported statement '{ast.unparse(s).splitlines()[0]}'")
        return None

    def assert_stmt(self, s: ast.Assert, env: dict[str, Var], span: Span) -> AssertStmt:
        message = s.msg.value if isinstance(s.msg, ast.Constant) and isinstance(s.msg.value, str) else None
        if s.msg is not None and message is None:
            self.ctx.error(s.msg, "an assert message must be a string literal")
        return AssertStmt(self.expr(s.test, env), message, span)

    def yield_stmt(
        self, s: ast.stmt, call: ast.Call, env: dict[str, Var], span: Span, out: list[Stmt]
    ) -> list[str]:
        """`pl.yield_(...)`, bare or bound: the bound names are the enclosing loop's or if's results."""
        out.append(YieldStmt(tuple(self.expr(a, env) for a in call.args), span))
        if isinstance(s, ast.Assign):
            return self.target_names(s.targets[0])
        if isinstance(s, ast.AnnAssign):
            names = self.target_names(s.target)
            self.yield_types[names[0]] = self.type(s.annotation, env)
            return names
        return []

    def annotated_assign(self, s: ast.AnnAssign, env: dict[str, Var], span: Span, out: list[Stmt]) -> None:
        if not isinstance(s.target, ast.Name) or s.value is None:
            self.ctx.error(s, "expected 'name: type = value'")
        declared = self.type(s.annotation, env)
        if isinstance(s.value, ast.Call):
            value = self.call(s.value, env, declared)
        else:
            value = self.expr(s.value, env)
        ann = self.annotated(s, declared, value)
        if isinstance(value, Call) and not value.is_function:
            value = replace(value, type=ann)  # the annotation is the call's result type
        v = self.var(s.target.id, ann, span)
        out.append(AssignStmt(v, value, span))
        env[s.target.id] = v

    def assign(self, s: ast.Assign, env: dict[str, Var], span: Span, out: list[Stmt]) -> None:
        if len(s.targets) != 1:
            self.ctx.error(s, "chained assignment is not supported")
        target = s.targets[0]
        value = self.expr(s.value, env)
        if isinstance(target, ast.Name):
            v = self.var(target.id, type_of(value), span)
            out.append(AssignStmt(v, value, span))
            env[target.id] = v
            return
        names = self.target_names(target)
        tt = type_of(value)
        if not isinstance(tt, TupleType) or len(tt.types) != len(names):
            self.ctx.error(s, f"cannot unpack {len(names)} names from this value")
        tmp = self.var("_".join(names) + "_tuple", tt, span)
        out.append(AssignStmt(tmp, value, span))
        for i, name in enumerate(names):
            v = self.var(name, tt.types[i], span)
            out.append(AssignStmt(v, TupleGetItem(tmp, i, span), span))
            env[name] = v

    def return_stmt(self, s: ast.Return, env: dict[str, Var], span: Span) -> ReturnStmt:
        if s.value is None:
            values: tuple[Expr, ...] = ()
        elif isinstance(s.value, ast.Tuple):
            values = tuple(self.expr(e, env) for e in s.value.elts)
        else:
            values = (self.expr(s.value, env),)
        return ReturnStmt(values, span)

    def target_names(self, target: ast.AST) -> list[str]:
        if isinstance(target, ast.Name):
            return [target.id]
        if isinstance(target, ast.Tuple | ast.List) and all(isinstance(e, ast.Name) for e in target.elts):
            return [e.id for e in target.elts]  # type: ignore[attr-defined]
        self.ctx.error(target, "expected a name or a tuple of names")

    def with_stmt(self, s: ast.With, env: dict[str, Var]) -> tuple[Stmt, list[str] | None]:
        """`with pl.at(...)`, `pl.scope(...)`, `pl.cluster()`, `pl.incore()`, ...: a scope of statements."""
        item = s.items[0].context_expr if len(s.items) == 1 else None
        kind = _pl_name(item.func) if isinstance(item, ast.Call) else None
        if item is None or kind is None or s.items[0].optional_vars is not None:
            self.ctx.error(s, "expected 'with pl.<scope>(...):' with one scope, such as pl.at(level=...)")
        assert isinstance(item, ast.Call)
        args = tuple(self.expr(a, env) for a in item.args)
        kwargs = tuple((kw.arg or "", self.kwarg_value(kw.value, kw.arg or "", env)) for kw in item.keywords)
        body, targets = self.block(s.body, env)  # a scope may hold the yield of the loop around it
        return ScopeStmt(tuple(body), kind, kwargs, self.ctx.span(s), args), targets

    def if_stmt(self, s: ast.If, env: dict[str, Var]) -> Stmt:
        cond = self.expr(s.test, env)
        then_env, else_env = dict(env), dict(env)
        then_body, then_targets = self.block(s.body, then_env)
        else_body: list[Stmt] | None = None
        else_targets = None
        if s.orelse:
            else_body, else_targets = self.block(s.orelse, else_env)
        names = then_targets or else_targets or []
        yields = [y for y in then_body if isinstance(y, YieldStmt)]
        rvs: list[Var] = []
        if names:
            if not yields or len(yields[-1].values) != len(names):
                self.ctx.error(s, "the yields of an if statement must bind the same names in both branches")
            for name, value in zip(names, yields[-1].values):
                rv = self.var(name, self.yield_types.pop(name, type_of(value)), self.ctx.span(s))
                rvs.append(rv)
                env[name] = rv
        return IfStmt(cond, tuple(then_body), tuple(else_body) if else_body is not None else None, tuple(rvs),
                      self.ctx.span(s))  # fmt: skip

    def for_stmt(self, s: ast.For, env: dict[str, Var]) -> Stmt:
        if not isinstance(s.iter, ast.Call):
            self.ctx.error(
                s.iter, "expected pl.range(...), pl.parallel(...), pl.pipeline(...) or pl.while_(...)"
            )
        kind_name = _pl_name(s.iter.func)
        if kind_name == "while_":
            return self.while_stmt(s, env)
        kinds = {k.value: k for k in LoopKind}
        if kind_name not in kinds:
            self.ctx.error(s.iter, f"unsupported loop '{ast.unparse(s.iter)}' (expected pl.range, pl.parallel, "
                                   f"pl.unroll, pl.pipeline or pl.while_)")  # fmt: skip
        span = self.ctx.span(s)
        bounds = [self.expr(a, env) for a in s.iter.args]
        if not 1 <= len(bounds) <= 3:
            self.ctx.error(
                s.iter, f"pl.{kind_name} takes 1 to 3 bounds (stop | start, stop | start, stop, step)"
            )
        start: Expr = ConstInt(0, DataType.INDEX, span)
        step: Expr = ConstInt(1, DataType.INDEX, span)
        if len(bounds) == 1:
            stop = bounds[0]
        else:
            start, stop = bounds[0], bounds[1]
            if len(bounds) == 3:
                step = bounds[2]
        inits: list[Expr] = []
        stage = None
        extra: list[tuple[str, Any]] = []
        for kw in s.iter.keywords:
            if kw.arg == "init_values":
                if not isinstance(kw.value, ast.Tuple | ast.List):
                    self.ctx.error(kw, "init_values takes a tuple like (t,)")
                inits = [self.expr(e, env) for e in kw.value.elts]
            elif kw.arg == "stage":
                stage = static_int(self.expr(kw.value, env))
            elif kw.arg in ("attrs", "mode", "chunk", "chunk_policy", "name_hint"):
                extra.append((kw.arg, self.kwarg_value(kw.value, kw.arg, env)))
            else:
                self.ctx.error(
                    kw, f"pl.{kind_name} has no keyword '{kw.arg}' (accepted: init_values, stage, attrs)"
                )
        # a split_aiv loop is a scope: what it defines stays visible after it
        body_env = env if kinds[kind_name] is LoopKind.split_aiv else dict(env)
        if inits:
            if not (isinstance(s.target, ast.Tuple) and len(s.target.elts) == 2):
                self.ctx.error(
                    s.target, "a loop with init_values is written 'for i, (a, b) in pl.range(...)'"
                )
            loop_name = self.target_names(s.target.elts[0])[0]
            carried = self.target_names(s.target.elts[1])
            if len(carried) != len(inits):
                self.ctx.error(s.target, f"{len(carried)} loop-carried names for {len(inits)} init_values")
        else:
            loop_name = self.target_names(s.target)[0]
            carried = []
        loop_var = self.var(loop_name, ScalarType(DataType.INDEX), span)
        body_env[loop_name] = loop_var
        iter_args = []
        for name, init in zip(carried, inits):
            v = self.var(name, type_of(init), span)
            body_env[name] = v
            iter_args.append(IterArg(v, init))
        body, targets = self.block(s.body, body_env)
        rvs = self.return_vars(s, iter_args, targets, env)
        return ForStmt(loop_var, start, stop, step, tuple(iter_args), tuple(body), rvs, kinds[kind_name], stage,
                       span, tuple(extra))  # fmt: skip

    def return_vars(self, s: ast.AST, iter_args: list[IterArg], targets: list[str] | None,
                    env: dict[str, Var]) -> tuple[Var, ...]:  # fmt: skip
        if not iter_args:
            return ()
        names = targets or [f"{ia.var.name}_out" for ia in iter_args]
        if len(names) != len(iter_args):
            self.ctx.error(s, f"the loop yields {len(names)} values for {len(iter_args)} loop-carried names")
        rvs = tuple(
            self.var(n, self.yield_types.pop(n, ia.var.type), self.ctx.span(s))
            for n, ia in zip(names, iter_args)
        )
        for n, rv in zip(names, rvs):
            env[n] = rv
        return rvs

    def while_stmt(self, s: ast.For, env: dict[str, Var]) -> Stmt:
        assert isinstance(s.iter, ast.Call)
        span = self.ctx.span(s)
        inits: list[Expr] = []
        for kw in s.iter.keywords:
            if kw.arg != "init_values" or not isinstance(kw.value, ast.Tuple | ast.List):
                self.ctx.error(kw, "pl.while_ takes init_values=(...)")
            inits = [self.expr(e, env) for e in kw.value.elts]
        names = self.target_names(s.target.elts[0] if isinstance(s.target, ast.Tuple) and len(s.target.elts) == 1
                                  and isinstance(s.target.elts[0], ast.Tuple) else s.target)  # fmt: skip
        if len(names) != len(inits):
            self.ctx.error(s.target, f"{len(names)} loop-carried names for {len(inits)} init_values")
        body_env = dict(env)
        iter_args = []
        for name, init in zip(names, inits):
            v = self.var(name, type_of(init), span)
            body_env[name] = v
            iter_args.append(IterArg(v, init))
        first = s.body[0] if s.body else None
        if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Call)
                and _pl_name(first.value.func) == "cond" and len(first.value.args) == 1):  # fmt: skip
            self.ctx.error(s, "a pl.while_ loop must start with pl.cond(<condition>)")
        cond = self.expr(first.value.args[0], body_env)
        body, targets = self.block(s.body[1:], body_env)
        rvs = self.return_vars(s, iter_args, targets, env)
        return WhileStmt(cond, tuple(iter_args), tuple(body), rvs, span)


def _is_memref(node: ast.AST) -> bool:
    if isinstance(node, ast.Subscript):
        node = node.value
    return isinstance(node, ast.Call) and _pl_name(node.func) == "MemRef"


def _same_count(a: tuple[Expr, ...], b: tuple[Expr, ...]) -> bool:
    na = opreg.static_count(a)
    return na is not None and na == opreg.static_count(b)


def _decorator_options(fn: ast.FunctionDef, parser: _FunctionParser) -> dict[str, Any] | None:
    """`@pl.function(type=..., level=..., role=..., <other keywords kept as written>)`."""
    for deco in fn.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if _pl_name(target) != "function":
            continue
        options: dict[str, Any] = {"options": []}
        if isinstance(deco, ast.Call):
            for kw in deco.keywords:
                if kw.arg == "type":
                    value = parser.enum_value(kw.value)
                    if value not in FunctionType.__members__:
                        parser.ctx.error(
                            kw,
                            f"unknown function type '{value}' (one of {', '.join(FunctionType.__members__)})",
                        )
                    options["type"] = FunctionType[value]
                elif kw.arg in ("level", "role"):
                    options[kw.arg] = parser.enum_value(kw.value)
                elif kw.arg is not None:
                    options["options"].append((kw.arg, parser.kwarg_value(kw.value, kw.arg, {})))
                else:
                    parser.ctx.error(kw, "** arguments are not supported in @pl.function")
        return options
    return None


def _parse_class(
    cls: ast.ClassDef, ctx: _Ctx, dialect: str = "pypto_egg", name_hints: NameHints | None = None
) -> Program:
    fns: list[tuple[ast.FunctionDef, dict[str, Any]]] = []
    signatures: dict[str, tuple[Type, ...]] = {}
    parser = _FunctionParser(ctx, signatures, name_hints)
    for item in cls.body:
        if isinstance(item, ast.FunctionDef):
            options = _decorator_options(item, parser)
            if options is None:
                ctx.error(item, f"method '{item.name}' needs a @pl.function decorator")
            fns.append((item, options))
            if item.returns is None:
                signatures[item.name] = ()
            else:
                rt = parser.type(item.returns, {})
                signatures[item.name] = rt.types if isinstance(rt, TupleType) else (rt,)
    functions = tuple(parser.function(fn, options) for fn, options in fns)
    return Program(cls.name, functions, ctx.span(cls), dialect)


def _dialect(tree: ast.Module) -> str:
    """The dialect whose `pl` module the text imports (pypto-egg's own when it imports neither)."""
    modules = {m: d for d, m in DIALECTS.items()}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    return modules[alias.name]
        elif isinstance(node, ast.ImportFrom) and node.module in ("pypto", "pypto_egg"):
            for alias in node.names:
                if f"{node.module}.{alias.name}" in modules:
                    return modules[f"{node.module}.{alias.name}"]
    return "pypto_egg"


def _module_env(tree: ast.Module) -> dict[str, Any]:
    """Module-level constants and `pl.dynamic` dims of a DSL text."""
    env: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            v = node.value
            if isinstance(v, ast.Constant) and isinstance(v.value, int | float):
                env[node.targets[0].id] = v.value
            elif isinstance(v, ast.Call) and _pl_name(v.func) == "dynamic" and v.args and \
                    isinstance(v.args[0], ast.Constant):  # fmt: skip
                env[node.targets[0].id] = DynamicDim(str(v.args[0].value))
    return env


def _program_classes(text: str, filename: str) -> tuple[list[ast.ClassDef], _Ctx, str]:
    try:
        tree = ast.parse(text, filename)
    except SyntaxError as e:
        raise DSLError(f"{filename}:{e.lineno}:{e.offset}: invalid Python syntax: {e.msg}") from None
    dialect = _dialect(tree)
    ctx = _Ctx(filename, 0, 0, _module_env(tree), dialect)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)
               and any(_pl_name(d) == "program" for d in n.decorator_list)]  # fmt: skip
    return classes, ctx, dialect


def parse_all(text: str, filename: str = "<pl>") -> list[Program]:
    """Every module-level `@pl.program` class of DSL text, in order, read without running the text."""
    classes, ctx, dialect = _program_classes(text, filename)
    return [_parse_class(c, ctx, dialect) for c in classes]


def parse(
    text: str, filename: str = "<pl>", program_name: str | None = None, name_hints: NameHints | None = None
) -> Program:
    """Parse DSL text holding one (or, with `program_name`, a named) `@pl.program` class.

    `name_hints` names variables by the hints a printer disambiguated (two variables hinted `x` print as `x`
    and `x_1`): names the pass derives from them are then the ones it would derive in the printer's process."""
    classes, ctx, dialect = _program_classes(text, filename)
    if program_name is not None:
        classes = [c for c in classes if c.name == program_name]
    if not classes:
        raise DSLError(
            f"{filename}:1:1: no @pl.program class" + (f" named {program_name!r}" if program_name else "")
        )
    return _parse_class(classes[0], ctx, dialect, name_hints)


def parse_file(path: str | Path, program_name: str | None = None) -> Program:
    p = Path(path)
    return parse(p.read_text(), str(p), program_name)


def program(cls: type) -> Program:
    """`@pl.program`: read the decorated class's source into a Program."""
    frame = sys._getframe(1)
    env = {**frame.f_globals, **frame.f_locals}
    filename = frame.f_code.co_filename
    text = "".join(linecache.getlines(filename, frame.f_globals))
    if not text:
        raise DSLError(f"cannot read the source of class {cls.__name__}; use pl.parse(text) instead")
    tree = ast.parse(text, filename)
    candidates = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == cls.__name__]
    if not candidates:
        raise DSLError(
            f"{filename}: cannot find the source of class {cls.__name__}; use pl.parse(text) instead"
        )

    def distance(n: ast.ClassDef) -> int:
        first = min([n.lineno] + [d.lineno for d in n.decorator_list])
        return (
            0
            if first <= frame.f_lineno <= n.lineno
            else min(abs(first - frame.f_lineno), abs(n.lineno - frame.f_lineno))
        )

    node = min(candidates, key=distance)
    dialect = _dialect(tree)
    return _parse_class(node, _Ctx(filename, 0, 0, env, dialect), dialect)
