"""Loop-carry valid-shape repair (§Q, B-200..B-202), run on every function the pass rewrites.

A loop carry is typed from its seed, so an Acc accumulator whose yields are row-narrowed keeps advertising
the seed's full box height, which no MAD wrote: a reader that believes it walks L0C at the wrong pitch.
This runs after the lowering, because the yields' types exist only then. For each loop, inner loops first, it
states what the types prove about each carry (`CarryFacts`: ranks, memory, the seed's definition, and per axis
which extents are provably equal, within or the box's); the rules of rules/narrow.egg decide which carries are
re-seeded, at which extents and in which form (`Reseed`); this module then emits the seeds the decisions name
and re-types the body through the ops' own deductions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pypto_egg import diagnostics as diag
from pypto_egg.errors import TypeDeductionError
from pypto_egg.ir.expr import Call, ConstInt, Expr, MakeTuple, Var, free_vars, static_int, type_of
from pypto_egg.ir.extents import Proof, prove_le
from pypto_egg.ir.node import replaced
from pypto_egg.ir.ops import REGISTRY, make_call
from pypto_egg.ir.rebuild import Ctx, if_results, retyped, substitute
from pypto_egg.ir.span import Span
from pypto_egg.ir.stmt import (
    AssertStmt,
    AssignStmt,
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
from pypto_egg.ir.types import MemorySpace, TileType, Type
from pypto_egg.ir.walk import NESTING, blocks, child_bodies


@dataclass(frozen=True)
class CarryAxis:
    """What the types prove about one axis of a carry's valid shape (each flag: provably so)."""

    equal: bool  # the seed's and the yield's extents are equal
    whole: bool  # the seed's extent is the box's
    within: bool  # the yield's extent is at most the seed's
    yield_whole: bool  # the yield's extent is the box's
    seed_static: int  # the seed's extent, -1 where it is not static
    yield_static: int
    seed_inside: bool  # the seed's extent names a variable the loop body defines
    yield_inside: bool


@dataclass(frozen=True)
class CarryFacts:
    seed_rank: int
    yield_rank: int
    acc: bool  # the yield is in Acc
    created: bool  # the seed is a variable tile.create defines
    box_rows: int  # the box's rows, -1 where not static
    axes: tuple[CarryAxis, ...]


@dataclass(frozen=True)
class Reseed:
    """A carry the rules re-seed: per axis whether the new valid extent is the yield's (else the seed's), and the
    seed's form: "create" (the box itself), "valid" or "compact" (a storage tile and its valid shape)."""

    from_yield: tuple[bool, ...]
    form: str


# the rules' decisions for the carries of one loop, one per fact (None: left alone)
Decide = Callable[[Sequence[CarryFacts]], Sequence[Reseed | None]]


def narrow_acc_carries(fn: Function, decide: Decide) -> Function:
    """The function with every carry the rules re-seed re-seeded (the same object when none is)."""
    if not _carries(fn.body):
        return fn  # no loop carries anything
    stmts = [s for block in blocks(fn.body) for s in block]
    creates = {
        s.var.uid
        for s in stmts
        if isinstance(s, AssignStmt) and isinstance(s.value, Call) and s.value.op == "tile.create"
    }
    narrower = _Narrower(creates, decide)
    body = narrower.block(fn.body, {})
    return replaced(fn, body=tuple(body)) if narrower.changed else fn


def _carries(body: tuple[Stmt, ...]) -> bool:
    """Whether a loop in the body carries anything. A body's statement classes are read in one pass at C speed,
    and only one holding a nested block is visited (a lowered batch is thousands of flat statements)."""
    if NESTING.isdisjoint(map(type, body)):
        return False
    for s in body:
        if type(s) in NESTING:
            if (type(s) is ForStmt or type(s) is WhileStmt) and s.iter_args:
                return True
            if any(_carries(inner) for inner in child_bodies(s)):
                return True
    return False


def provably_le(a: Expr, b: Expr) -> bool:
    return prove_le(a, b) is Proof.true


def provably_equal(a: Expr, b: Expr) -> bool:
    return provably_le(a, b) and provably_le(b, a)


def _static(e: Expr) -> int:
    v = static_int(e)
    return v if v is not None else -1


def carry_facts(ia: IterArg, yielded: Type, inside: set[int], creates: set[int]) -> CarryFacts | None:
    """What the types prove about a carry; None for a carry with nothing to state (not two tiles, or a yield of
    the seed's very valid shape, where every axis is equal and no rule could narrow it)."""
    init_t = ia.var.type
    if not (isinstance(init_t, TileType) and isinstance(yielded, TileType)):
        return None
    if len(init_t.valid_shape) == len(yielded.valid_shape) and all(
        a is b for a, b in zip(init_t.valid_shape, yielded.valid_shape)
    ):
        return None

    def names_inside(e: Expr) -> bool:
        return any(v.uid in inside for v in free_vars(e))

    axes = tuple(
        CarryAxis(
            provably_equal(vi, vy),
            provably_equal(vi, box),
            provably_le(vy, vi),
            provably_equal(vy, box),
            _static(vi),
            _static(vy),
            names_inside(vi),
            names_inside(vy),
        )
        for vi, vy, box in zip(init_t.valid_shape, yielded.valid_shape, init_t.shape)
    )
    created = isinstance(ia.init, Var) and ia.init.uid in creates
    rows = _static(init_t.shape[0]) if init_t.shape else -1
    return CarryFacts(init_t.rank, yielded.rank, yielded.memory is MemorySpace.Acc, created, rows, axes)


def defined_in(body: tuple[Stmt, ...]) -> set[int]:
    """Every variable a loop body defines (assignments, nested carries, loop variables, return variables)."""
    out: set[int] = set()
    for block in blocks(body):
        for s in block:
            if isinstance(s, AssignStmt):
                out.add(s.var.uid)
            if isinstance(s, ForStmt):
                out.add(s.loop_var.uid)
            if isinstance(s, ForStmt | WhileStmt):
                out |= {ia.var.uid for ia in s.iter_args}
            if isinstance(s, ForStmt | WhileStmt | IfStmt):
                out |= {v.uid for v in s.return_vars}
    return out


def same(a: tuple[object, ...] | None, b: tuple[object, ...] | None) -> bool:
    """The same objects, element by element (nothing was rebuilt)."""
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def trailing_yield(body: tuple[Stmt, ...]) -> YieldStmt | None:
    last = body[-1] if body else None
    if isinstance(last, SeqStmts | ScopeStmt):
        return trailing_yield(last.stmts if isinstance(last, SeqStmts) else last.body)
    return last if isinstance(last, YieldStmt) else None


class _Narrower:
    def __init__(self, creates: set[int], decide: Decide) -> None:
        self.creates = creates  # variables defined by tile.create
        self.decide = decide
        self.changed = False

    def block(self, body: tuple[Stmt, ...], ctx: Ctx) -> list[Stmt]:
        out: list[Stmt] = []
        for s in body:
            self.stmt(s, ctx, out)
        return out

    def stmt(self, s: Stmt, ctx: Ctx, out: list[Stmt]) -> None:
        if isinstance(s, AssignStmt):
            value = self.value(s.value, ctx)
            if value is s.value:
                out.append(s)
                return
            v = Var(s.var.name, type_of(value), s.var.span)
            ctx[s.var.uid] = v
            out.append(AssignStmt(v, value, s.span))
        elif isinstance(s, EvalStmt):
            value = self.value(s.expr, ctx)
            out.append(s if value is s.expr else EvalStmt(value, s.span))
        elif isinstance(s, SeqStmts):
            out.extend(self.block(s.stmts, ctx))
        elif isinstance(s, ScopeStmt):
            out.append(replaced(s, body=tuple(self.block(s.body, ctx))))
        elif isinstance(s, IfStmt):
            self.if_stmt(s, ctx, out)
        elif isinstance(s, ForStmt | WhileStmt):
            self.loop(s, ctx, out)
        elif isinstance(s, YieldStmt | ReturnStmt):
            values = tuple(substitute(v, ctx) for v in s.values)
            out.append(s if same(values, s.values) else replaced(s, values=values))
        elif isinstance(s, AssertStmt):
            cond = substitute(s.condition, ctx)
            out.append(s if cond is s.condition else replaced(s, condition=cond))
        else:
            out.append(s)

    def value(self, e: Expr, ctx: Ctx) -> Expr:
        """Substituted; a tile op whose operands moved is re-deduced (B-201)."""
        new = substitute(e, ctx)
        if new is e or not isinstance(new, Call) or new.is_function or not REGISTRY[new.op].deduces:
            return new
        try:
            made = make_call(new.op, new.args, dict(new.kwargs), new.attrs, new.span, annotation=new.type)
        except TypeDeductionError as err:
            raise diag.internal(f"re-typing {new.op} after narrowing a loop carry failed: {err}") from None
        return made

    def if_stmt(self, s: IfStmt, ctx: Ctx, out: list[Stmt]) -> None:
        cond = substitute(s.condition, ctx)
        then_body = tuple(self.block(s.then_body, dict(ctx)))
        else_body = tuple(self.block(s.else_body, dict(ctx))) if s.else_body is not None else None
        rvs = if_results(s, then_body, else_body, ctx)
        unchanged = cond is s.condition and same(then_body, s.then_body) and same(else_body, s.else_body)
        out.append(
            s if unchanged and same(rvs, s.return_vars) else IfStmt(cond, then_body, else_body, rvs, s.span)
        )

    # ------------------------------------------------------------ loops

    def loop(self, s: ForStmt | WhileStmt, ctx: Ctx, out: list[Stmt]) -> None:
        iter_args = self.iter_args(s.iter_args, ctx)
        body_ctx = self.body_ctx(s, iter_args, ctx)
        body = tuple(self.block(s.body, body_ctx))  # inner loops first (post-order)
        y = trailing_yield(body)
        seeds: list[IterArg] = []
        if y is not None and len(y.values) == len(iter_args):
            seeds = self.reseeded(s, iter_args, y, out)
        if seeds and any(a is not b for a, b in zip(seeds, iter_args)):
            self.changed = True
            iter_args = tuple(seeds)
            body_ctx = self.body_ctx(s, iter_args, ctx)
            body = tuple(self.block(s.body, body_ctx))
            y = trailing_yield(body)
        rv_types = (
            [type_of(v) for v in y.values] if y is not None and len(y.values) == len(iter_args) else None
        )
        rvs = tuple(
            retyped(rv, rv_types[i] if rv_types is not None else ia.var.type, ctx)
            for i, (rv, ia) in enumerate(zip(s.return_vars, iter_args))
        )
        if (
            same(iter_args, s.iter_args)
            and same(body, s.body)
            and same(rvs, s.return_vars)
            and isinstance(s, ForStmt)
        ):
            bounds = tuple(substitute(x, ctx) for x in (s.start, s.stop, s.step))
            if all(a is b for a, b in zip(bounds, (s.start, s.stop, s.step))):
                out.append(s)
                return
        if isinstance(s, ForStmt):
            start, stop, step = (substitute(x, ctx) for x in (s.start, s.stop, s.step))
            out.append(
                replaced(
                    s, start=start, stop=stop, step=step, iter_args=iter_args, body=body, return_vars=rvs
                )
            )
        else:
            cond = substitute(s.condition, body_ctx)
            out.append(replaced(s, condition=cond, iter_args=iter_args, body=body, return_vars=rvs))

    def iter_args(self, iter_args: tuple[IterArg, ...], ctx: Ctx) -> tuple[IterArg, ...]:
        """A carry whose init was re-typed (an earlier loop's narrowed result) is re-minted at the new type."""
        out = []
        for ia in iter_args:
            init = substitute(ia.init, ctx)
            out.append(ia if init is ia.init else IterArg(Var(ia.var.name, type_of(init), ia.var.span), init))
        return tuple(out)

    @staticmethod
    def body_ctx(s: ForStmt | WhileStmt, iter_args: tuple[IterArg, ...], ctx: Ctx) -> Ctx:
        body_ctx = dict(ctx)
        for orig, ia in zip(s.iter_args, iter_args):
            if ia is orig:
                body_ctx.pop(orig.var.uid, None)
            else:
                body_ctx[orig.var.uid] = ia.var
        return body_ctx

    def reseeded(self, s: ForStmt | WhileStmt, iter_args: tuple[IterArg, ...], y: YieldStmt,
                 out: list[Stmt]) -> list[IterArg]:  # fmt: skip
        """The loop's carries, each the rules re-seed (B-200) replaced by its re-declared seed, which is emitted
        before the loop (B-201)."""
        inside = defined_in(s.body) | ({s.loop_var.uid} if isinstance(s, ForStmt) else set())
        stated = [
            (i, carry_facts(ia, type_of(v), inside, self.creates))
            for i, (ia, v) in enumerate(zip(iter_args, y.values))
        ]
        asked = [(i, f) for i, f in stated if f is not None]
        seeds = list(iter_args)
        if not asked:
            return seeds
        for (i, _), decision in zip(asked, self.decide([f for _, f in asked])):
            if decision is not None:
                seeds[i] = self.reseed(
                    s.iter_args[i], iter_args[i], type_of(y.values[i]), decision, s.span, out
                )
        return seeds

    @staticmethod
    def reseed(orig: IterArg, ia: IterArg, yielded: Type, decision: Reseed, span: Span | None,
               out: list[Stmt]) -> IterArg:  # fmt: skip
        """The seed the decision names, at the extents it takes from the seed or the yield (B-201)."""
        init_t = ia.var.type
        assert isinstance(init_t, TileType) and isinstance(yielded, TileType) and isinstance(orig.init, Var)
        valid = [
            vy if take else vi
            for take, vi, vy in zip(decision.from_yield, init_t.valid_shape, yielded.valid_shape)
        ]
        seed_name = orig.init.name
        box = init_t.shape
        kw: dict[str, object] = {"dtype": init_t.dtype, "target_memory": MemorySpace.Acc}
        if decision.form == "create":
            value: Expr = make_call("tile.create", (_dims(box, span),), kw, span=span)
            seed = Var(f"{seed_name}_narrowed", type_of(value), span)
            out.append(AssignStmt(seed, value, span))
        else:
            if decision.form == "compact":
                kw["compact"] = True
            storage_value = make_call("tile.create", (_dims(box, span),), kw, span=span)
            storage = Var(f"{seed_name}_narrowed_storage", type_of(storage_value), span)
            out.append(AssignStmt(storage, storage_value, span))
            value = make_call("tile.set_validshape", (storage, valid[0], valid[1]), span=span)
            seed = Var(f"{seed_name}_narrowed", type_of(value), span)
            out.append(AssignStmt(seed, value, span))
        return IterArg(Var(ia.var.name, seed.type, ia.var.span), seed)


def _dims(shape: tuple[Expr, ...], span: Span | None) -> Expr:
    return MakeTuple(
        tuple(ConstInt(d.value, span=span) if isinstance(d, ConstInt) else d for d in shape), span
    )
