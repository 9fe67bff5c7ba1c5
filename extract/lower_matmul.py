"""Lowering of the batched matmul family's plans (behaviours.md §K-§O).

Pages, windows, re-loads and drains all come from the facts the rules derived (BPagesSame or BPage, BSliceSide,
BReloadSide with BReloadAt, BReloadStep or BReload, BRowWin, BColWin, BStore or BStoreOne, DrainPage, RowDrainPage);
this module only builds the statements they describe, stepping through the progressions some of them state.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from pypto_egg.diagnostics import internal, where
from pypto_egg.ir.expr import Call, ConstBool, Expr, MakeTuple, Var, type_of
from pypto_egg.ir.node import replaced
from pypto_egg.ir.ops import make_call
from pypto_egg.ir.rebuild import Ctx, carry, substitute, with_operands
from pypto_egg.ir.stmt import AssignStmt, Function, Stmt
from pypto_egg.ir.tiles import retile
from pypto_egg.ir.types import MemorySpace, TileType
from pypto_egg.rules import schema

from .decode import TermDecoder
from .lower import Lowerer, PageCalls, int_tuple
from .term import Term, as_int

if TYPE_CHECKING:
    from pypto_egg.egraph.encode import Encoding


class MatmulLowerer(Lowerer):
    """The pass's lowerer: the core plans plus the batched-matmul, packing and row-window ones."""

    def __init__(
        self,
        fn: Function,
        enc: Encoding,
        plans: dict[int, Term | None],
        facts: Callable[[str], list[tuple[Any, ...]]] | None = None,
        decode: TermDecoder | None = None,
    ) -> None:
        super().__init__(fn, enc, plans, facts, decode)
        self._by_stmt: dict[str, dict[Any, list[Any]]] = {}

    def rows_of(self, relation: str, sid: int) -> list[Any]:
        """A statement's rows of a relation, read by field name (each relation's rows are grouped by statement once:
        a program's batched matmuls each read some twenty relations)."""
        grouped = self._by_stmt.get(relation)
        if grouped is None:
            grouped = self._by_stmt[relation] = {}
            for r in schema.rows(relation, self.facts(relation)):
                grouped.setdefault(r.stmt, []).append(r)
        return grouped.get(sid, [])

    FACTS: ClassVar[frozenset[str]] = Lowerer.FACTS | {
        "DrainPage", "RowDrainPage", "BPage", "BPagesSame", "BSliceSide", "BRowWin", "BColWin", "BStore", "BStoreOne",
        "BReload", "BReloadAt", "BReloadStep", "BReloadSide", "BmmBase", "BmmPeeled", "ViewOperand", "BPageCast",
        "BmmGeom",
    }  # fmt: skip

    HANDLERS: ClassVar[dict[str, str]] = {
        **Lowerer.HANDLERS, "BatchMatmul": "batch_matmul", "ToMat": "to_mat", "Drop": "drop",
        "AllocAcc": "alloc_acc", "PackedDrain": "packed_drain", "Rewindow": "rewindow", "RowDrain": "row_drain",
        "StoreByPages": "store_by_pages",
    }  # fmt: skip

    def store_by_pages(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        """B-136: the batched matmul before it stored every page; the store's value is the last page's store."""
        sid = self.enc.stmt_ids[id(s)]
        if sid not in self.page_stores:
            raise internal(f"the store of statement {sid} is the pages' of batched matmul {as_int(plan.field('bmm_stmt'))}, "
                           f"which stored none")  # fmt: skip
        last = self.page_stores[sid]
        if isinstance(s, AssignStmt) and last is not None:
            ctx[s.var.uid] = last

    def to_mat(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        """B-043: the load states target_memory=Mat and its type lives in Mat; then the inner plan lowers it."""
        inner = plan.field("plan")
        assert isinstance(inner, Term) and isinstance(s, AssignStmt)
        kwargs = (*call.kwargs, ("target_memory", MemorySpace.Mat))
        var_t = s.var.type
        assert isinstance(var_t, TileType)
        mat_s = replaced(s, var=Var(s.var.name, retile(var_t, memory=MemorySpace.Mat), s.var.span, s.var.uid))
        before = len(out)
        self.handle(mat_s, replaced(call, kwargs=kwargs), inner, ctx, out)
        if isinstance(s, AssignStmt) and s.var.uid in ctx:
            ctx[s.var.uid] = next(x.var for x in reversed(out[before:]) if isinstance(x, AssignStmt))

    def alloc_acc(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        """The packed accumulator: one [M, B*N] tile in Acc (B-060, B-173)."""
        kwargs = {**dict(call.kwargs), "target_memory": MemorySpace.Acc}
        value = make_call(
            call.op, (self.tuple_of(plan.field("shape"), call), *call.args[1:]), kwargs, call.attrs, call.span
        )
        self.bind(s, replaced(value, type=carry(value.type, s.var.type if isinstance(s, AssignStmt) else value.type)),
                  ctx, out)  # fmt: skip

    def packed_drain(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        """A packed accumulator drains page by page straight out of L0C (B-175)."""
        sid = self.enc.request(s)
        pages = sorted((r.page, r.column, r.offsets, r.window) for r in self.rows_of("DrainPage", sid))
        acc = substitute(call.args[0], ctx)
        tensor = substitute(call.args[2], ctx)
        span = call.span
        name = self.var_name(s) or "drain"
        last: Var | None = None
        for i, col, offsets, window in pages:
            w = window
            m, n = self.decode.dims(w)[-2:]
            page = self.emit(f"acc_drain_{i}", make_call("tile.slice", (acc, MakeTuple((m, n), span),
                             int_tuple(0, as_int(col), span=span)), span=span), s.span, out)  # fmt: skip
            args = (page, self.tuple_of(offsets, call), tensor, self.tuple_of(window, call))
            last = self.emit(f"{name}_{i}", with_operands(call, args, type_of(tensor)), s.span, out)
            tensor = last
        if isinstance(s, AssignStmt) and last is not None:
            ctx[s.var.uid] = last

    def rewindow(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        """A window of (or writeback into) a row-packed accumulator at its packed offset (B-183)."""
        args = [substitute(a, ctx) for a in call.args]
        args[2] = self.tuple_of(plan.field("offset"), call)
        self.bind(s, self.recreate(call, tuple(args), s), ctx, out)

    def row_drain(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        """A row-packed accumulator drains one [R, C] window per store, at logical row o0 + b*R (B-184)."""
        sid = self.enc.request(s)
        rr, cc = (
            as_int(plan.field("rows")),
            as_int(plan.field("cols")),
        )
        pages = sorted((r.page, r.column, r.offsets) for r in self.rows_of("RowDrainPage", sid))
        acc, tensor = substitute(call.args[0], ctx), substitute(call.args[2], ctx)
        span, name = call.span, self.var_name(s) or "drain"
        for i, col, offsets in pages:
            window = make_call(
                "tile.slice",
                (acc, int_tuple(rr, cc, span=span), int_tuple(0, as_int(col), span=span)),
                span=span,
            )
            page = self.emit(f"acc_drain_{i}", window, s.span, out)
            args = (page, self.tuple_of(offsets, call), tensor)
            tensor = self.emit(f"{name}_{i}", with_operands(call, args, type_of(tensor)), s.span, out)
        if isinstance(s, AssignStmt):
            ctx[s.var.uid] = tensor

    def drop(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        """B-115: a whole load (or its view) that every consumer re-loads per batch is dead."""

    def batch_matmul(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        """Per-batch pages (B-134..B-137, B-153, B-154): every offset and window comes from the bmm facts."""
        pages = _BmmPages(self, s, call, plan, ctx, out)
        pages.check_accumulator()
        pages.lower()


_SIDES = ("lhs", "rhs")  # a batched matmul's operand sides, as its page variables are named
_LOAD_ROLE = tuple(f"{side}-load" for side in _SIDES)  # a side's page calls of one kind (PageCalls' roles)
_VIEW_ROLE = tuple(f"{side}-view" for side in _SIDES)


class _BmmPages:
    """One batched matmul's pages: the facts the rules derived for it, read once, and the statements each page
    takes in the plan's mode (fast, fused, general, acc-fast, acc-rows, acc-cols, packed-producer)."""

    def __init__(
        self, low: MatmulLowerer, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]
    ) -> None:
        self.low, self.s, self.call, self.ctx, self.out = low, s, call, ctx, out
        self.mode = str(plan.field("mode"))
        self.routes = (as_int(plan.field("lhs_route")), as_int(plan.field("rhs_route")))
        sid = self.sid = low.enc.request(s)
        self.info = low.enc.bmm[sid]
        self.span = call.span

        def rows(name: str) -> list[Any]:  # this statement's rows of a relation, read by field name
            return low.rows_of(name, sid)

        self.slice_sides = {
            as_int(r.side): tuple(as_int(x) for x in (r.row_step, r.col_step, r.rows, r.cols))
            for r in rows("BSliceSide")
        }
        self.row_step = next((as_int(r.step) for r in rows("BRowWin")), 0)  # page i's window: row i * step
        self.col_step = next((as_int(r.step) for r in rows("BColWin")), 0)  # ... or column i * step
        self.stores = {r.page: (r.offsets, r.window) for r in rows("BStore")}
        # one static batch axis: page i stores at batch offset o + i mod e
        self.store_one = next(
            (
                (as_int(r.batch_offset), as_int(r.extent), r.matrix_offsets, r.window)
                for r in rows("BStoreOne")
            ),
            None,
        )
        self.reloads = {(r.page, r.side): (r.view, r.offset, r.x, r.y) for r in rows("BReload")}
        self.static_at = {(r.page, r.side): (r.row, r.col) for r in rows("BReloadAt")}
        self.reload_steps = {
            as_int(r.side): tuple(as_int(x) for x in (r.row, r.row_stride, r.extent, r.col))
            for r in rows("BReloadStep")
        }
        self.reload_sides = {r.side: (r.view, r.x, r.y) for r in rows("BReloadSide")}
        self.bases = {r.side: r.load_stmt for r in rows("BmmBase")}
        # the level of each operand the matmul reads: through the reshapes the rules found safe (B-120)
        self.peeled = {as_int(r.side): as_int(r.level) for r in rows("BmmPeeled")}
        self.views = {as_int(r.side) for r in rows("ViewOperand")}
        self.cast = bool(
            rows("BPageCast")
        )  # B-135/B-136: the pages move to Vec and cast to the result's dtype
        geom = rows("BmmGeom")[0]
        self.nb, self.m, self.n = as_int(geom.batch_count), as_int(geom.m), as_int(geom.n)
        if rows("BPagesSame"):  # page i reads page i of both sides
            self.pages: list[tuple[int, int, int]] = [(i, i, i) for i in range(self.nb)]
        else:
            self.pages = sorted((r.page, r.lhs_page, r.rhs_page) for r in rows("BPage"))
        result_t = s.var.type if isinstance(s, AssignStmt) else call.type
        assert isinstance(result_t, TileType)
        self.result_t = result_t
        self.name = low.var_name(s) or "bmm"
        # re-loads, slices, matmuls, moves, casts, windows, assembles
        self.page = PageCalls(self.span, s.span, out)
        # a side re-loads every page through the same 2-D view of its tensor, with the same window
        self.reloaded: dict[tuple[int, int, int, int], tuple[Call, MakeTuple, Call, dict[str, Any]]] = {}
        self.windows: dict[int, tuple[Term, MakeTuple]] = {}  # the store windows made so far, by term
        self.pairs: dict[tuple[int, int], MakeTuple] = {}  # the pair literals made so far, by value
        self.acc: Expr | None = substitute(self.info.acc, ctx) if self.info.acc is not None else None
        self.init = substitute(self.info.init_cond, ctx) if self.info.init_cond is not None else None
        # an accumulator chain's values carry the accumulator operand's name, as the C++ pass names them
        self.acc_hint = self.acc.name if isinstance(self.acc, Var) else None
        self.store_args: list[Expr] = []
        self.last: Expr | None = None

    def pair(self, a: int, b: int) -> MakeTuple:
        """(a, b) as a tuple literal at the statement's span: one object for every use (a page's two operands load
        or slice at the same place), as a value's constant is."""
        hit = self.pairs.get((a, b))
        if hit is None:
            const, span = self.low.decode.const, self.span
            hit = self.pairs[(a, b)] = MakeTuple((const(a, span), const(b, span)), span)
        return hit

    @functools.cached_property
    def extent(self) -> MakeTuple:
        """A page's [M, N] box: one literal every accumulator window shares."""
        return self.pair(self.m, self.n)

    @functools.cached_property
    def slicing(self) -> dict[int, tuple[str, str, int, int, MakeTuple]]:
        """Each sliced side's variable name, role, row and column step a page, and its [rows, cols] extent: one
        literal every page's slice shares."""
        return {
            side: (f"{_SIDES[side]}_slice_", f"{_SIDES[side]}-slice", row_step, col_step, self.pair(r, c))
            for side, (row_step, col_step, r, c) in self.slice_sides.items()
        }

    def check_accumulator(self) -> None:
        """The rules refuse an accumulator that stays N-D (bmm-accumulator-stays-nd, B-150); one reaching here
        would be a gap in what they know of the buffer's aliases."""
        acc_t = type_of(self.acc) if self.acc is not None else None
        if self.acc is not None and not (isinstance(acc_t, TileType) and acc_t.rank == 2):
            raise internal(
                f"tile.batch_matmul_acc's accumulator is still rank {getattr(acc_t, 'rank', 0)} after lowering, "
                f"but no rule refused it (B-150){where(self.low.var_name(self.s), self.s.span)}"
            )

    def lower(self) -> None:
        mode, span, m, n, nb = self.mode, self.span, self.m, self.n, self.nb
        if mode in (
            "general",
            "packed-producer",
        ):  # the Vec staging tile (B-135), or the chain's Acc buffer (B-139)
            shape = int_tuple(nb * m, n, span=span) if mode == "general" else int_tuple(m, nb * n, span=span)
            memory = MemorySpace.Vec if mode == "general" else MemorySpace.Acc
            kw = {"dtype": self.result_t.dtype, "target_memory": memory}
            self.acc = self.page.emit(self.name, make_call("tile.create", (shape,), kw, span=span))
        if mode == "fused" and self.info.store is not None:
            sv = self.info.store.value
            assert isinstance(sv, Call)
            self.store_args = [substitute(a, self.ctx) for a in sv.args[:3]]
        lhs, rhs = (substitute(self.info.levels[side][self.peeled[side]], self.ctx) for side in (0, 1))
        for i, a, b in self.pages:
            lp, rp = self.operand(0, i, a, lhs), self.operand(1, i, b, rhs)
            if mode == "fast":
                # a new value under the statement's name, positioned at its call (as the C++ pass's)
                matmul = make_call("tile.matmul", (lp, rp), span=span)
                self.last = self.low.bind(self.s, matmul, self.ctx, self.out, hint=self.name)
            elif mode == "acc-fast":
                args = (self.acc, lp, rp) if self.init is None else (self.acc, lp, rp, self.init)
                value = self.low.recreate(replaced(self.call, op="tile.matmul_acc"), args, self.s)  # type: ignore[arg-type]
                self.last = self.low.bind(self.s, value, self.ctx, self.out, hint=self.acc_hint)
            elif mode in ("packed-producer", "acc-cols"):
                cond: Expr | None = ConstBool(True, span) if mode == "packed-producer" else self.init
                self.accumulate(i, self.pair(0, i * self.col_step), lp, rp, cond)  # B-139
            elif mode == "acc-rows":
                self.accumulate(i, self.pair(i * self.row_step, 0), lp, rp, self.init)
            else:
                self.matmul_page(i, lp, rp)
        s, acc = self.s, self.acc
        if (
            mode in ("general", "acc-rows", "acc-cols", "packed-producer")
            and isinstance(s, AssignStmt)
            and acc
        ):
            self.ctx[s.var.uid] = acc
        if mode == "fused" and self.info.store is not None:
            self.low.page_stores[self.low.enc.stmt_ids[id(self.info.store)]] = (
                self.last if isinstance(self.last, Var) else None
            )

    def operand(self, side: int, i: int, b: int, operand: Expr) -> Var:
        """Page b of one side: re-loaded from its tensor (B-138), or a slice of the whole operand (B-137)."""
        if self.routes[side] != 0:
            name, role, row_step, col_step, box = self.slicing[side]
            sliced = (operand, box, self.pair(b * row_step, b * col_step))
            return self.page.bind(f"{name}{b}", role, "tile.slice", sliced)
        label = _SIDES[side]
        at = self.static_at.get((i, side))
        step = self.reload_steps.get(side)
        if at is None and step is not None:  # over at most one batch axis: the page's digit moves the row
            row, stride, extent, col = step
            at = (row + (b % extent) * stride, col)
        if at is not None:  # a static window, in integers
            view_shape, x, y = self.reload_sides[side]
            pos: MakeTuple = self.pair(as_int(at[0]), as_int(at[1]))
        else:
            view_shape, pos_term, x, y = self.reloads[(i, side)]
            pos = self.low.tuple_of(pos_term, self.call)
        view_call, window, base, kwargs = self.reload_view(side, view_shape, x, y)
        page = self.page
        view = page.emit(f"{label}_pbview2d_{b}", view_call)
        loaded = page.bind(f"{label}_pbload_{b}", _LOAD_ROLE[side], "tile.load", (view, pos, window, window), kwargs,
                           base.attrs)  # fmt: skip
        if side in self.views:
            return page.bind(f"{label}_pbview_{b}", _VIEW_ROLE[side], "tile.transpose_view", (loaded,))
        return loaded

    def reload_view(
        self, side: int, view_shape: Any, x: Any, y: Any
    ) -> tuple[Call, MakeTuple, Call, dict[str, Any]]:
        """A side's 2-D view of its load's tensor, the window its pages re-load, and the load with its keyword
        arguments: the same for every page (made once per side and terms)."""
        key = (side, id(view_shape), id(x), id(y))
        hit = self.reloaded.get(key)
        if hit is None:
            _, base = self.low.enc.statements[as_int(self.bases[side])]
            src = substitute(base.args[0], self.ctx)
            span = self.span
            hit = self.reloaded[key] = (
                make_call("tensor.view", (src, self.low.tuple_of(view_shape, self.call)), span=span),
                MakeTuple((self.low.decode.dim(x, span), self.low.decode.dim(y, span)), span),
                base,
                dict(base.kwargs),
            )
        return hit

    def accumulate(self, i: int, offset: MakeTuple, lp: Var, rp: Var, cond: Expr | None) -> None:
        """A window of the accumulator at `offset`, its matmul_acc, and its writeback at the same offset."""
        assert self.acc is not None
        win = self.page.bind(f"acc_page_{i}", "acc-window", "tile.slice", (self.acc, self.extent, offset))
        args = (win, lp, rp) if cond is None else (win, lp, rp, cond)
        part = self.page.bind(f"matmul_acc_{i}", "matmul-acc", "tile.matmul_acc", args)
        # the reference's row chain names each writeback after the accumulator; the column-packed one, which only
        # the specification has, after the statement
        name = (self.acc_hint if self.mode == "acc-rows" else None) or self.name
        self.acc = self.page.bind(name, "assemble", "tile.assemble", (self.acc, part, offset))

    def store_window(self, window: Term, store: Call) -> MakeTuple:
        """The store's window as a tuple literal: one object for every page (the rules state one window a store)."""
        hit = self.windows.get(id(window))
        if hit is None or hit[0] is not window:
            hit = self.windows[id(window)] = (window, self.low.tuple_of(window, store))
        return hit[1]

    def store_at(self, i: int, store: Call) -> tuple[MakeTuple, Any]:
        """Page i's store offsets and its window term: over one static batch axis the batch offset is an integer
        before the matrix offsets every page shares (BStoreOne), else the offsets are a term (BStore)."""
        if self.store_one is None:
            offsets, window = self.stores[i]
            return self.low.tuple_of(offsets, store), window
        first, extent, tail, window = self.store_one
        decode, span = self.low.decode, store.span
        return MakeTuple((decode.const(first + i % extent, span), *decode.dims(tail, span)), span), window

    def matmul_page(self, i: int, lp: Var, rp: Var) -> None:
        """A page's matmul, moved to Vec (and cast) where the rules say so, then assembled into the staging tile
        (general, B-135) or stored through the consuming store's window (fused, B-136)."""
        page = self.page
        res: Var = page.bind(f"matmul_{i}", "matmul", "tile.matmul", (lp, rp))
        if self.mode == "general" or self.cast:
            to_vec = {"target_memory": MemorySpace.Vec}
            res = page.bind(f"matmul_vec_{i}", "move", "tile.move", (res,), to_vec)
        if self.cast:
            cast_kw = {"target_type": self.result_t.dtype, "mode": 2}
            res = page.bind(f"matmul_cast_{i}", "cast", "tile.cast", (res,), cast_kw)
        if self.mode == "general":
            assert self.acc is not None
            at = self.pair(i * self.row_step, 0)
            self.acc = page.bind(self.name, "assemble", "tile.assemble", (self.acc, res, at))
            return
        store = self.info.store
        assert store is not None and isinstance(store.value, Call)
        offsets, window = self.store_at(i, store.value)
        into = self.store_args[2]
        page_args: tuple[Expr, ...] = (res, offsets, into)
        if isinstance(window, Term) and window.op != "DNil":
            page_args += (self.store_window(window, store.value),)
        value = with_operands(store.value, page_args, type_of(into))
        self.store_args[2] = self.last = self.page.emit(f"{store.var.name}_{i}", value, at=store)
