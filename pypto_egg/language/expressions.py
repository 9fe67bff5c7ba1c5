"""Reading the DSL's expressions, op calls and type annotations into IR."""

from __future__ import annotations

import ast
import difflib
from collections.abc import Mapping
from typing import Any, NoReturn

from ..errors import RefusedType, TypeDeductionError
from ..ir import ops as opreg
from ..ir.deduce_common import static_count
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
from ..ir.printer import print_type
from ..ir.signatures import SIGNATURES
from ..ir.span import Span
from ..ir.stmt import (
    ParamDirection,
)
from ..ir.tiles import make_tile_type, printed_view
from ..ir.types import (
    UNKNOWN_TYPE,
    DataType,
    MemorySpace,
    MemRef,
    NamedConst,
    OpaqueType,
    ScalarType,
    TensorType,
    TensorView,
    TileType,
    TileView,
    TupleType,
    Type,
)
from .context import (
    BINOPS,
    CAST_CODES,
    CMPOPS,
    ENUMS,
    KEYWORD_ALIASES,
    NAMED_ENUMS,
    OP_ALIASES,
    VEC_BY_DEFAULT,
    Ctx,
    NameHints,
    dotted,
    pl_name,
)
from .runtime import DynamicDim


class ExprParser:
    """Expressions, calls and types of one function's body; statements are read by its subclass."""

    def __init__(
        self, ctx: Ctx, signatures: dict[str, tuple[Type, ...]], name_hints: NameHints | None = None
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
        name = pl_name(node)
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
            if head in NAMED_ENUMS and member:
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
        if isinstance(node, ast.Attribute) and pl_name(node) is not None:
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
        name = pl_name(node)
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
        if isinstance(node, ast.BinOp) and type(node.op) in BINOPS:
            return BinOp(BINOPS[type(node.op)], self.expr(node.left, env), self.expr(node.right, env), span)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in CMPOPS:
            return BinOp(CMPOPS[type(node.ops[0])], self.expr(node.left, env), self.expr(node.comparators[0], env),
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
        name = pl_name(func)
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
            self.ctx.error(node, f"unknown op '{shown}'{nearest_ops(name)}")
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
            if pl_name(last) in DataType.__members__:
                kwargs["dtype"] = self.enum_value(last)
                positional = positional[:-1]
        # attributes given positionally, as the DSL allows: tile.cast(t, pl.FP32), cast(x, pl.INDEX, 'round')
        signature = tuple(p.rstrip("*") for p in SIGNATURES.get(op, ()))
        if self.ctx.findings is not None and any(
            isinstance(x, ast.List | ast.Tuple) for x in positional[len(d.params) :]
        ):  # a dims literal past the operands is an operand too many, not an attribute (a pass's output)
            message = (
                f"{op} takes at most {len(d.params)} operands ({', '.join(d.params)}), got {len(positional)}"
            )
            self.ctx.tolerated(node, message)
            return self.undeduced_call(node, op, env, annotation)
        while len(positional) > len(d.params) and len(positional) <= len(signature):
            key = signature[len(positional) - 1]
            if key not in d.kwargs:
                break
            kwargs[key] = self.kwarg_value(positional[-1], key, env)
            positional = positional[:-1]
        if len(positional) > len(d.params):
            message = (
                f"{op} takes at most {len(d.params)} operands ({', '.join(d.params)}), got {len(positional)}"
            )
            if not self.ctx.tolerated(node, message):
                self.ctx.error(node, message)
            return self.undeduced_call(node, op, env, annotation)
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
            if kwargs["mode"] not in CAST_CODES:
                self.ctx.error(node, f"unknown cast mode {kwargs['mode']!r}; one of {sorted(CAST_CODES)}")
            kwargs["mode"] = CAST_CODES[kwargs["mode"]]
        if op in VEC_BY_DEFAULT and self.ctx.dialect == "pypto":
            kwargs.setdefault(
                "target_memory", MemorySpace.Vec
            )  # PyPTO's DSL fills it; pypto-egg's leaves it unset
        n = len(slots)
        while n and slots[n - 1] is None:
            n -= 1
        if any(s is None for s in slots[:n]) or n < d.required:
            missing = next(p for p, s in zip(d.params, slots) if s is None)
            self.ctx.error(node, f"{op} is missing operand '{missing}'")
        op, args = opreg.canonical_operands(op, tuple(s for s in slots[:n] if s is not None))
        try:
            return opreg.make_call(op, args, kwargs, attrs, self.ctx.span(node))
        except TypeDeductionError as e:
            if not self.ctx.tolerated(node, str(e)):
                self.ctx.error(node, str(e), refused=isinstance(e, RefusedType))
            written = tuple(kwargs.items())
            return Call(op, args, annotation or UNKNOWN_TYPE, written, attrs, self.ctx.span(node))

    def undeduced_call(self, node: ast.Call, op: str, env: dict[str, Var], annotation: Type | None) -> Call:
        """A call its op refuses, read as written for a tolerant reader: every operand in order, its keywords, and
        its annotation as its type."""
        args = tuple(self.expr(a, env) for a in node.args)
        kwargs: dict[str, Any] = {}
        attrs: tuple[tuple[str, Any], ...] = ()
        for kw in node.keywords:
            if kw.arg == "attrs":
                value = self.kwarg_value(kw.value, "attrs", env)
                attrs = tuple(value.items()) if isinstance(value, dict) else ()
            elif kw.arg is not None:
                kwargs[kw.arg] = self.kwarg_value(kw.value, kw.arg, env)
        return Call(op, args, annotation or UNKNOWN_TYPE, tuple(kwargs.items()), attrs, self.ctx.span(node))

    def annotated_call(self, node: ast.Call, op: str, env: dict[str, Var], annotation: Type | None) -> Expr:
        """An op without deduction: operands and keywords kept as written, the annotation is its type."""
        d = opreg.REGISTRY[op]
        if len(node.args) > len(d.params) and not d.variadic:
            message = (
                f"{op} takes at most {len(d.params)} operands ({', '.join(d.params)}), got {len(node.args)}"
            )
            if not self.ctx.tolerated(node, message):
                self.ctx.error(node, message)
            return self.undeduced_call(node, op, env, annotation)
        args = tuple(self.expr(a, env) for a in node.args)
        kwargs, attrs = self.keywords(node, env)
        for kw in node.keywords:
            if kw.arg not in d.kwargs and kw.arg != "attrs" and not d.any_keyword:
                accepted = sorted(d.kwargs | {"attrs"})
                self.ctx.error(kw, f"{op} has no keyword '{kw.arg}' (accepted: {', '.join(accepted)})")
        try:
            return opreg.make_call(op, args, kwargs, attrs, self.ctx.span(node), annotation)
        except TypeDeductionError as e:
            if not self.ctx.tolerated(node, str(e)):
                self.ctx.error(node, str(e), refused=isinstance(e, RefusedType))
            return self.undeduced_call(node, op, env, annotation)

    # ------------------------------------------------------------ types

    def dims(self, node: ast.AST, env: dict[str, Var]) -> tuple[Expr, ...]:
        if not isinstance(node, ast.List | ast.Tuple):
            self.ctx.error(node, "expected a list of dimensions like [2, 3, 4]")
        return tuple(self.expr(e, env) for e in node.elts)

    def type(self, node: ast.AST, env: dict[str, Var]) -> Type:
        if isinstance(node, ast.Subscript):
            head = pl_name(node.value) or dotted(node.value)
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
                    if isinstance(extra, ast.Call) and pl_name(extra.func) == "TileView":
                        tview = self.tile_view(extra, env)
                    elif is_memref(extra):
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
        if isinstance(node, ast.Attribute) and pl_name(node) is not None:
            name = pl_name(node) or ""
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
            if is_memref(extra):
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
        if not (isinstance(node, ast.Call) and pl_name(node.func) == "TensorView"):
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
        if isinstance(node, ast.Subscript) and pl_name(node.value) in ("Out", "InOut"):
            return self.type(node.slice, env), ParamDirection[pl_name(node.value) or "In"]
        return self.type(node, env), ParamDirection.In

    def annotated(self, node: ast.AST, ann: Type, value: Expr) -> Type:
        """The type a variable gets from its annotation and its value's deduced type."""
        merged = merged_annotation(ann, type_of(value))
        if merged is None:
            message = (
                f"annotation {print_type(ann)} disagrees with the value's type {print_type(type_of(value))}"
            )
            if self.ctx.tolerated(node, message):
                return ann
            self._mismatch(node, ann, type_of(value))
        return merged

    def _mismatch(self, node: ast.AST, ann: Type, ded: Type) -> NoReturn:
        # a dtype the value does not have is refused by PyPTO's reader too; a shape pypto-egg reads otherwise
        refused = isinstance(ann, TileType | TensorType) and isinstance(ded, TileType | TensorType) and (
            ann.dtype != ded.dtype)  # fmt: skip
        self.ctx.error(
            node, f"annotation {print_type(ann)} disagrees with the value's type {print_type(ded)}", refused
        )

    # ------------------------------------------------------------ statements


def nearest_ops(name: str) -> str:
    """The known ops spelled most like `name`, as a hint to append to its error ("" when none is near)."""
    known = [*opreg.REGISTRY, *OP_ALIASES]
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.75)
    if (
        not close and "." not in name
    ):  # a bare name may be a tile op's short spelling (pl.expp for pl.tile.exp)
        close = difflib.get_close_matches(f"tile.{name}", known, n=3, cutoff=0.75)
    spelled = [c if c.startswith("pld.") else f"pl.{c}" for c in close]
    return f"; did you mean {' or '.join(spelled)}?" if spelled else ""


def merged_annotation(ann: Type, ded: Type) -> Type | None:
    """The type a variable gets from its annotation `ann` and its value's deduced type `ded`, or None when
    they disagree: the annotation's shape (an N-D value may be annotated with its flattened shape) and view,
    the deduction's memory where the annotation names none."""
    if isinstance(ann, OpaqueType) or isinstance(ded, OpaqueType) or ann == ded:
        return ann
    if isinstance(ann, TileType) and isinstance(ded, TileType):
        if ann.dtype != ded.dtype:
            return None
        same_shape = len(ann.shape) == len(ded.shape) and all(
            static_int(a) == static_int(b) if static_int(a) is not None else True
            for a, b in zip(ann.shape, ded.shape)
        )
        if not same_shape and not same_count(ann.shape, ded.shape):
            return None
        memory = ded.memory if ded.memory is not None else ann.memory
        view = ann.view if ann.view is not None else (ded.view if same_shape else None)
        return make_tile_type(ann.shape, ann.dtype, memory, view, ann.memref or ded.memref)
    if isinstance(ann, TensorType) and isinstance(ded, TensorType):
        if ann.dtype != ded.dtype or len(ann.shape) != len(ded.shape):
            return None
        if ann.view is not None or ann.memref is not None or ann.distributed != ded.distributed:
            return ann
        return ded
    if type(ann) is not type(ded):
        return None
    return ann


def is_memref(node: ast.AST) -> bool:
    if isinstance(node, ast.Subscript):
        node = node.value
    return isinstance(node, ast.Call) and pl_name(node.func) == "MemRef"


def same_count(a: tuple[Expr, ...], b: tuple[Expr, ...]) -> bool:
    na = static_count(a)
    return na is not None and na == static_count(b)
