"""Lower a function's extracted plans back to IR statements.

The walk mirrors the reference traversal (B-020..B-028): a context maps each original variable to
its replacement; every tile statement is rewritten as its extracted plan says; control flow is
rebuilt around the rewritten bodies, with iter_args and return vars retyped from their new inits
and yields. Fresh names derive from the originals. This module makes no lowering decision of its
own: shapes, offsets, windows and pages all come from the plan terms.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from pypto_egg import diagnostics as diag
from pypto_egg.errors import TypeDeductionError
from pypto_egg.ir.expr import (
    Call,
    ConstInt,
    Expr,
    MakeTuple,
    Var,
    exprs_equal,
    free_vars,
    tile_operand_types,
    type_of,
)
from pypto_egg.ir.node import replaced
from pypto_egg.ir.ops import REGISTRY, deduce_type, make_call
from pypto_egg.ir.rebuild import Ctx, carry, if_results, retyped, substitute, with_operands
from pypto_egg.ir.span import Span
from pypto_egg.ir.stmt import (
    AssertStmt,
    AssignStmt,
    BreakStmt,
    ContinueStmt,
    EvalStmt,
    ForStmt,
    Function,
    IfStmt,
    IterArg,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    Stmt,
    WhileStmt,
    YieldStmt,
)
from pypto_egg.ir.tiles import implicit_view, make_tile_type, retile
from pypto_egg.ir.types import MemorySpace, MemRef, TileType, TileView
from pypto_egg.ir.walk import blocks
from pypto_egg.rules import schema

from .decode import TermDecoder
from .failures import failure
from .term import Term, as_int

if TYPE_CHECKING:
    from pypto_egg.egraph.encode import Encoding


class PageCalls:
    """The statements of a run of pages (a batched matmul's, an N-D transpose's): the same extents at other
    offsets, and no deduction reads an offset, so each role's call is deduced for the first page and the others
    take its type. A page's statement is one call here: a batch of 1,024 pages makes some 5,000."""

    def __init__(self, span: Span | None, stmt_span: Span | None, out: list[Stmt]) -> None:
        self.span, self.stmt_span, self.out = span, stmt_span, out
        self.first: dict[str, Call] = {}

    def emit(self, name: str, value: Call, at: AssignStmt | None = None) -> Var:
        """`name = value` appended at the statement's span, or at statement `at`'s (a page's store stands for
        the store it replaces, variable and statement); its variable."""
        v = Var(name, value.type, self.span if at is None else at.var.span)
        self.out.append(AssignStmt(v, value, self.stmt_span if at is None else at.span))
        return v

    def bind(
        self, name: str, role: str, op: str, args: tuple[Expr, ...], kwargs: dict[str, Any] | None = None,
        attrs: tuple[tuple[str, Any], ...] = (),
    ) -> Var:  # fmt: skip
        """`name = op(args)` appended at the statement's span; its variable (`emit` written out: the page loop's
        one call)."""
        first = self.first.get(role)
        if first is None:
            value = self.first[role] = make_call(op, args, kwargs, attrs, self.span)
        else:
            value = Call(first.op, args, first.type, first.kwargs, first.attrs, first.span, first.is_function)
        v = Var(name, value.type, self.span)
        self.out.append(AssignStmt(v, value, self.stmt_span))
        return v


def deduced_memref(call: Call) -> MemRef | None:
    """The MemRef the registry states for a call's result, if it states one. A deduction only ever passes on
    an operand's MemRef (an in-place op), so a call none of whose tile operands has one needs no deduction."""
    if not REGISTRY[call.op].deduces or not any(t.memref for t in tile_operand_types(call.args)):
        return None
    try:
        t = deduce_type(call.op, call.args, dict(call.kwargs))
    except TypeDeductionError:
        return None
    return t.memref if isinstance(t, TileType) else None


# the argument places of the plans every program lowers, read from their declarations once (rules/sorts.egg)
_RETYPE_SHAPE = schema.declared("Retype").index("shape")
_LOAD_SHAPE, _LOAD_VALID = (schema.declared("LoadFlat").index(f) for f in ("shape", "valid"))
_STORE_WINDOW = schema.declared("StorePartition").index("window")
assert schema.declared("StorePartitionFlat").index("window") == _STORE_WINDOW


class Lowerer:
    def __init__(
        self,
        fn: Function,
        enc: Encoding,
        plans: dict[int, Term | None],
        facts: Callable[[str], list[tuple[Any, ...]]] | None = None,
        decode: TermDecoder | None = None,
    ) -> None:
        """`decode`: the run's decoder of dimension terms, which the lowerers of its functions share (their plans
        share terms, one per e-class)."""
        self.fn = fn
        self.enc = enc
        self.plans = plans
        self.facts = facts or (lambda _name: [])
        # a store a batched matmul's pages write (StoreByPages): its statement id -> the last page's store, once the
        # matmul is lowered
        self.page_stores: dict[int, Var | None] = {}
        self.lowered: dict[int, Term] = {}  # statement id -> the plan lowered for it
        self.decode = decode if decode is not None else TermDecoder(enc)
        # original variables the reference would have rebuilt: every load's and store's result, and every
        # value computed from a rebuilt one (B-040, B-054, B-090, B-024). A rebuilt tile op is re-created
        # through the registry: its attrs are dropped and its type re-deduced, even on a 2-D function.
        self.renewed: set[int] = set()
        self.rewrote = False  # whether any statement came out different (read by the trivial path)
        self.emitted: dict[int, list[Stmt]] | None = None  # a dict: each statement id -> what it lowered to

    # plan op -> the method that lowers it (names, not bound methods: a lowerer must not refer to itself, or
    # it and the e-graph it reads would live until the cyclic collector runs)
    HANDLERS: ClassVar[dict[str, str]] = {
        "Keep": "keep", "Retype": "retype", "Forward": "forward", "LoadFlat": "load_flat",
        "LoadCollapsed": "load_collapsed", "StorePartition": "store", "StorePartitionFlat": "store",
        "Alloc": "alloc", "AssembleFold": "assemble", "Reshape2D": "reshape",
        "Transpose2D": "transpose_2d", "TransposeUnroll": "transpose_unroll",
        "TransposeUnrollND": "transpose_unroll", "Fail": "fail",
        "Rededuce": "rededuce", "AsView": "as_view",
    }  # fmt: skip

    # the relations the handlers read (`self.facts`), besides the plans
    FACTS: ClassVar[frozenset[str]] = frozenset()

    def handle(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        getattr(self, self.HANDLERS[plan.op])(s, call, plan, ctx, out)

    @functools.cached_property
    def vars(self) -> dict[int, Var]:
        """The function's variables by id, which a `Forward` plan names: collected at the first such plan."""
        found = {p.var.uid: p.var for p in self.fn.params}
        for block in blocks(self.fn.body):
            for s in block:
                if type(s) is AssignStmt:
                    found[s.var.uid] = s.var
                    continue
                if isinstance(s, ForStmt | WhileStmt):
                    for ia in s.iter_args:
                        found[ia.var.uid] = ia.var
                if isinstance(s, IfStmt | ForStmt | WhileStmt):
                    for v in s.return_vars:
                        found[v.uid] = v
        return found

    def run(self) -> Function:
        return replaced(self.fn, body=tuple(self.block(self.fn.body, {})))

    # ------------------------------------------------------------ blocks

    def block(self, body: tuple[Stmt, ...], ctx: Ctx) -> list[Stmt]:
        out: list[Stmt] = []
        for s in body:
            self.stmt(s, ctx, out)
        return out

    def stmt(self, s: Stmt, ctx: Ctx, out: list[Stmt]) -> None:
        if type(s) is AssignStmt or type(s) is EvalStmt:
            value = s.value if isinstance(s, AssignStmt) else s.expr
            sid = self.enc.stmt_ids.get(id(s))
            if sid is not None and type(value) is Call:
                plan = self.plans.get(sid)
                if plan is None:
                    raise diag.internal(f"no lowering was extracted for {value.op} (statement {sid})")
                self.lowered[sid] = plan
                if self.emitted is None:
                    self.handle(s, value, plan, ctx, out)
                else:  # (asked for: what the statement lowered to)
                    start = len(out)
                    self.handle(s, value, plan, ctx, out)
                    self.emitted[sid] = out[start:]
            else:
                self.passthrough(s, value, ctx, out)
        elif isinstance(s, SeqStmts):
            for x in s.stmts:
                self.stmt(x, ctx, out)
        elif isinstance(s, ScopeStmt):
            out.append(replaced(s, body=tuple(self.block(s.body, ctx))))
        elif isinstance(s, YieldStmt | ReturnStmt):
            vals = tuple([substitute(v, ctx) for v in s.values])
            out.append(s if all(map(operator.is_, vals, s.values)) else replaced(s, values=vals))
        elif isinstance(s, IfStmt):
            self.if_stmt(s, ctx, out)
        elif isinstance(s, ForStmt):
            self.for_stmt(s, ctx, out)
        elif isinstance(s, WhileStmt):
            self.while_stmt(s, ctx, out)
        elif isinstance(s, BreakStmt | ContinueStmt):
            out.append(s)
        elif isinstance(s, AssertStmt):
            cond = substitute(s.condition, ctx)
            out.append(s if cond is s.condition else replaced(s, condition=cond))
        else:
            raise diag.internal(f"unknown statement {type(s).__name__}")

    def passthrough(self, s: AssignStmt | EvalStmt, value: Expr, ctx: Ctx, out: list[Stmt]) -> None:
        """Non-tile values and function calls: substituted; a changed value gets a new variable (B-026, B-027)."""
        new = substitute(value, ctx)
        if new is value:
            if (
                isinstance(value, Call)
                and value.op.startswith("tile.")
                and not value.is_function
                and self.rebuilt(value)
            ):
                out.append(self.without_attrs(s, value, ctx))
            else:
                if any(v.uid in self.renewed for v in free_vars(value)):
                    self.mark(s)
                out.append(s)
            return
        if isinstance(new, Call) and new.op.startswith("tile.") and not new.is_function:
            new = self.recreate(new, new.args, s)
        if isinstance(s, EvalStmt):
            out.append(EvalStmt(new, s.span))
            return
        v = Var(s.var.name, type_of(new), s.var.span)
        ctx[s.var.uid] = v
        out.append(AssignStmt(v, new, s.span))

    def if_stmt(self, s: IfStmt, ctx: Ctx, out: list[Stmt]) -> None:
        cond = substitute(s.condition, ctx)
        then_body = tuple(self.block(s.then_body, dict(ctx)))
        else_body = tuple(self.block(s.else_body, dict(ctx))) if s.else_body is not None else None
        rvs = if_results(s, then_body, else_body, ctx)
        out.append(IfStmt(cond, then_body, else_body, rvs, s.span))

    def iter_args(self, s: ForStmt | WhileStmt, ctx: Ctx, body_ctx: Ctx) -> tuple[IterArg, ...]:
        out = []
        for ia, rv in zip(s.iter_args, s.return_vars):
            if any(v.uid in self.renewed for v in free_vars(ia.init)):
                self.renewed |= {ia.var.uid, rv.uid}
        for ia in s.iter_args:
            init = substitute(ia.init, ctx)
            if init is ia.init:
                body_ctx.pop(ia.var.uid, None)
                out.append(ia)
            else:
                nv = Var(ia.var.name, type_of(init), ia.var.span)
                body_ctx[ia.var.uid] = nv
                out.append(IterArg(nv, init))
        return tuple(out)

    def for_stmt(self, s: ForStmt, ctx: Ctx, out: list[Stmt]) -> None:
        start, stop, step = (substitute(x, ctx) for x in (s.start, s.stop, s.step))
        body_ctx = dict(ctx)
        iter_args = self.iter_args(s, ctx, body_ctx)
        body = tuple(self.block(s.body, body_ctx))
        rvs = tuple(retyped(rv, ia.var.type, ctx) for rv, ia in zip(s.return_vars, iter_args))
        out.append(
            replaced(s, start=start, stop=stop, step=step, iter_args=iter_args, body=body, return_vars=rvs)
        )

    def while_stmt(self, s: WhileStmt, ctx: Ctx, out: list[Stmt]) -> None:
        body_ctx = dict(ctx)
        iter_args = self.iter_args(s, ctx, body_ctx)
        cond = substitute(s.condition, body_ctx)
        body = tuple(self.block(s.body, body_ctx))
        rvs = tuple(retyped(rv, ia.var.type, ctx) for rv, ia in zip(s.return_vars, iter_args))
        out.append(replaced(s, condition=cond, iter_args=iter_args, body=body, return_vars=rvs))

    # ------------------------------------------------------------ emission helpers

    def recreate(self, call: Call, args: tuple[Expr, ...], s: Stmt) -> Call:
        """Re-create a tile op through the registry (type re-deduced), carrying MemRef and memory space."""
        attrs = call.attrs if call.op == "tile.load" else ()  # the registry keeps a load's attrs only (B-040)
        try:
            deduced = deduce_type(call.op, args, dict(call.kwargs), call.type)
        except TypeDeductionError as e:
            raise diag.internal(f"re-deducing {call.op} on flattened operands failed: {e}") from None
        old = s.var.type if isinstance(s, AssignStmt) else call.type
        return Call(call.op, args, carry(deduced, old), call.kwargs, attrs, call.span)

    def bind(
        self,
        s: Stmt,
        value: Expr,
        ctx: Ctx,
        out: list[Stmt],
        name: str | None = None,
        hint: str | None = None,
    ) -> Var | None:
        """Emit `value` for statement `s` under the original name, mapping the original var; or under `hint`,
        still mapping it; or under `name`, a value of its own."""
        if isinstance(s, EvalStmt):
            out.append(EvalStmt(value, s.span))
            return None
        assert isinstance(s, AssignStmt)
        # a re-typed variable keeps its position; a new value (a name of its own) is positioned at its call
        own = (name or hint) is not None and type(value) is Call
        v = Var(name or hint or s.var.name, type_of(value), value.span if own else s.var.span)  # type: ignore[union-attr]
        if name is None:
            ctx[s.var.uid] = v
            self.renewed.add(s.var.uid)
        out.append(AssignStmt(v, value, s.span))
        return v

    def emit(self, name: str, value: Expr, span: Span | None, out: list[Stmt]) -> Var:
        """`name = value` at `span`; the new value is positioned at its call, as the C++ pass positions it."""
        v = Var(name, type_of(value), value.span if type(value) is Call else span)
        out.append(AssignStmt(v, value, span))
        return v

    def tuple_of(self, t: Term | Any, call: Call) -> MakeTuple:
        return MakeTuple(self.decode.dims(t, call.span), call.span)

    @staticmethod
    def var_name(s: Stmt) -> str | None:
        return s.var.name if isinstance(s, AssignStmt) else None

    # ------------------------------------------------------------ plans

    def keep(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        args = tuple([substitute(a, ctx) for a in call.args])
        if all(map(operator.is_, args, call.args)):
            out.append(self.without_attrs(s, call, ctx) if self.rebuilt(call) else s)
            return
        self.bind(s, self.recreate(call, args, s), ctx, out)

    def without_attrs(self, s: Stmt, call: Call, ctx: Ctx) -> Stmt:
        """A statement the reference re-creates although nothing in it changed: as it is, less the attrs
        the registry does not carry (its type is the one the reference deduced and printed already), and
        with the MemRef its deduction states (an in-place op writes its operand's buffer)."""
        self.mark(s)
        value = call if not call.attrs or call.op == "tile.load" else replaced(call, attrs=())
        self.rewrote |= value is not call
        if isinstance(s, EvalStmt):
            return s if value is call else EvalStmt(value, s.span)
        assert isinstance(s, AssignStmt)
        old = s.var.type
        memref = deduced_memref(call)
        if isinstance(old, TileType) and memref is not None and memref != old.memref:
            self.rewrote = True
            v = Var(s.var.name, retile(old, memref=memref), s.var.span)
            ctx[s.var.uid] = v
            return AssignStmt(v, replaced(value, type=v.type), s.span)
        return s if value is call else replaced(s, value=value)

    def rebuilt(self, call: Call) -> bool:
        """Would the reference re-create this call: a load or store always, any other op when it reads a
        rebuilt value."""
        if call.op in ("tile.load", "tile.store"):
            return True
        return any(v.uid in self.renewed for a in call.args for v in free_vars(a))

    def mark(self, s: Stmt) -> None:
        if isinstance(s, AssignStmt):
            self.renewed.add(s.var.uid)

    def retype(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        args = tuple([substitute(a, ctx) for a in call.args])
        new = self.recreate(call, args, s)
        want = self.decode.dims(plan.args[_RETYPE_SHAPE])
        got = new.type.shape if isinstance(new.type, TileType) else ()
        same = got is want or (len(got) == len(want) and all(map(exprs_equal, got, want)))
        # an N-D tile parameter is never retyped (B-006): its users stay N-D, and TileOps2D reports them
        if not same and not any(isinstance(t, TileType) and t.rank > 2 for t in map(type_of, args)):
            raise diag.internal(
                f"{call.op} re-deduced to shape {[str(g) for g in got]} on flattened operands, but the rules "
                f"merged it to {[str(w) for w in want]}; an operand was not flattened"
            )
        self.bind(s, new, ctx, out)

    def forward(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        target = self.vars.get(as_int(plan.field("var")))
        if target is None or not isinstance(s, AssignStmt):
            raise diag.internal(
                f"a Forward plan names variable id {plan.field('var')}, which this function lacks"
            )
        ctx[s.var.uid] = ctx.get(target.uid, target)

    def load_type(self, s: Stmt, call: Call, shape: Term | Any, valid: Term | Any) -> TileType:
        old = s.var.type if isinstance(s, AssignStmt) else call.type
        assert isinstance(old, TileType)
        flat, valid_dims = self.decode.dims(shape), self.decode.dims(valid)
        whole = valid_dims is flat or (
            len(valid_dims) == len(flat) and all(map(exprs_equal, valid_dims, flat))
        )
        if old.view is None and whole:  # the implicit view, which a type in canonical form omits
            return TileType(flat, old.dtype, old.memory, None, old.memref)
        # a view the N-D tile had keeps its layouts; without one the tile has the implicit view of its 2-D shape
        base = old.view or implicit_view(flat, old.memory)
        view = TileView(valid_shape=valid_dims, blayout=base.blayout, slayout=base.slayout,
                        fractal=base.fractal, pad=base.pad, compact=base.compact)  # fmt: skip
        return make_tile_type(flat, old.dtype, old.memory, view, old.memref)

    def load_flat(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        args = tuple([substitute(a, ctx) for a in call.args])
        if len(args) == 3:
            args = (*args, args[2])
        self.bind(
            s,
            with_operands(
                call, args, self.load_type(s, call, plan.args[_LOAD_SHAPE], plan.args[_LOAD_VALID])
            ),
            ctx,
            out,
        )

    def load_collapsed(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        shape, valid, view_shape, offsets, shapes, window_valid, src_valid = (
            plan.field(f)
            for f in ("shape", "valid", "view", "offsets", "window", "window_valid", "source_valid")
        )
        src = substitute(call.args[0], ctx)
        src_t = type_of(src)
        view_args: tuple[Expr, ...] = (src, self.tuple_of(view_shape, call))
        if getattr(src_t, "view", None) is not None and src_t.view.valid_shape:  # type: ignore[union-attr]
            view_args += (self.tuple_of(src_valid, call),)
        name = self.var_name(s) or "load"
        view = self.emit(f"{name}_view2d", make_call("tensor.view", view_args, span=call.span), s.span, out)
        args = (view, self.tuple_of(offsets, call), self.tuple_of(shapes, call),
                self.tuple_of(window_valid, call))  # fmt: skip
        self.bind(s, with_operands(call, args, self.load_type(s, call, shape, valid)), ctx, out)

    def store(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        args = [substitute(a, ctx) for a in call.args[:3]]
        tile_t = type_of(args[0])
        kept_nd = isinstance(tile_t, TileType) and tile_t.rank > 2
        if kept_nd != (plan.op == "StorePartitionFlat"):
            raise diag.internal(f"a {plan.op} plan for a store whose tile operand is {tile_t} after lowering")
        if kept_nd:  # the safety net (B-052)
            flat = self.tuple_of(plan.field("flat"), call)
            args[0] = self.emit(
                "flat_tile", make_call("tile.reshape", (args[0], flat), span=call.span), s.span, out
            )
        window = self.tuple_of(plan.args[_STORE_WINDOW], call)
        self.bind(s, with_operands(call, (*args, window), type_of(args[2])), ctx, out)

    def alloc(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        args = (self.tuple_of(plan.field("shape"), call), *(substitute(a, ctx) for a in call.args[1:]))
        self.bind(s, self.recreate(call, args, s), ctx, out)

    def assemble(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        args = (
            substitute(call.args[0], ctx),
            substitute(call.args[1], ctx),
            self.tuple_of(plan.field("offset"), call),
        )
        self.bind(s, self.recreate(call, args, s), ctx, out)

    def reshape(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        args = (substitute(call.args[0], ctx), self.tuple_of(plan.field("shape"), call))
        self.bind(s, self.recreate(call, args, s), ctx, out)

    def transpose_2d(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        x = substitute(call.args[0], ctx)
        xt = type_of(x)
        assert isinstance(xt, TileType)
        kw = {"dtype": xt.dtype, "target_memory": xt.memory or MemorySpace.Vec}
        scratch = self.emit("transpose_tmp", make_call("tile.create", (MakeTuple(xt.shape),), kw, span=call.span),
                            s.span, out)  # fmt: skip
        args = (x, call.args[1], call.args[2], scratch)
        self.bind(s, self.recreate(call, args, s), ctx, out)

    def as_view(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        """B-100: a legacy transpose read only by batched matmuls is the zero-copy view of its source."""
        view = make_call("tile.transpose_view", (substitute(call.args[0], ctx),), span=call.span)
        self.bind(s, view, ctx, out)

    def transpose_unroll(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        """nb pages of [A, B]: page i transposes rows [i*A, (i+1)*A) into rows [i*B, (i+1)*B) (the plan's
        progression, B-104)."""
        nb, a, b = (as_int(plan.field(f)) for f in ("pages", "rows", "cols"))
        x = substitute(call.args[0], ctx)
        xt = type_of(x)
        assert isinstance(xt, TileType)
        span = call.span
        if (xt.rank > 2) != (plan.op == "TransposeUnrollND"):
            raise diag.internal(f"a {plan.op} plan for a transpose whose input is {xt} after lowering")
        if plan.op == "TransposeUnrollND":
            x = self.emit(
                "trans_in_2d",
                make_call("tile.reshape", (x, int_tuple(nb * a, b, span=span)), span=span),
                s.span,
                out,
            )
        elif [d for d in xt.shape] != [ConstInt(nb * a), ConstInt(b)]:
            raise diag.internal(
                f"tile.transpose flattened input shape does not match expected [{nb * a}, {b}]"
            )
        kw = {"dtype": xt.dtype, "target_memory": xt.memory or MemorySpace.Vec}
        name = self.var_name(s) or "trans_out"
        acc = self.emit(
            name, make_call("tile.create", (int_tuple(nb * b, a, span=span),), kw, span=span), s.span, out
        )
        pool = self.emit(
            "trans_tmp_pool",
            make_call("tile.create", (int_tuple(nb * a, b, span=span),), kw, span=span),
            s.span,
            out,
        )
        page = PageCalls(span, s.span, out)  # every page is the same [A, B] box at another offset
        box = int_tuple(a, b, span=span)
        const = self.decode.const
        zero, one = const(0, span), const(1, span)
        for i in range(nb):
            at = MakeTuple((const(i * a, span), zero), span)
            x_page = page.bind(f"trans_page_{i}", "page", "tile.slice", (x, box, at))
            tmp = page.bind(f"trans_tmp_{i}", "tmp", "tile.slice", (pool, box, at))
            tr = page.bind(f"trans_{i}", "trans", "tile.transpose", (x_page, zero, one, tmp))
            # a square page is assembled where it was sliced: one literal for both
            to = at if a == b else MakeTuple((const(i * b, span), zero), span)
            acc = page.bind(name, "out", "tile.assemble", (acc, tr, to))
        if isinstance(s, AssignStmt):
            ctx[s.var.uid] = acc

    def rededuce(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        args = tuple([substitute(a, ctx) for a in call.args])
        self.bind(s, self.recreate(call, args, s), ctx, out)

    def fail(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        raise failure(s, call, plan)


def int_tuple(*values: int, span: Span | None = None) -> MakeTuple:
    return MakeTuple(tuple(ConstInt(v, span=span) for v in values), span)
