"""Lowering of the batched matmul family's plans (behaviours.md §K-§O).

Pages, windows, re-loads and drains all come from the facts the rules derived (BPage, BSlice, BReloadSide with
BReloadAt or BReload, BRowWin, BColWin, BStore, DrainPage, RowDrainPage); this module only builds the
statements they describe.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

from pypto_egg.diagnostics import where
from pypto_egg.errors import PassError
from pypto_egg.ir.expr import Call, ConstBool, Expr, MakeTuple, Var, type_of
from pypto_egg.ir.ops import make_call
from pypto_egg.ir.rebuild import Ctx, carry, substitute, with_operands
from pypto_egg.ir.stmt import AssignStmt, Function, Stmt
from pypto_egg.ir.tiles import retile
from pypto_egg.ir.types import MemorySpace, TileType

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
    ) -> None:
        super().__init__(fn, enc, plans, facts)

    HANDLERS: ClassVar[dict[str, str]] = {
        **Lowerer.HANDLERS, "BatchMatmul": "batch_matmul", "ToMat": "to_mat", "Drop": "drop",
        "AllocAcc": "alloc_acc", "PackedDrain": "packed_drain", "Rewindow": "rewindow", "RowDrain": "row_drain",
    }  # fmt: skip

    def to_mat(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        """B-043: the load states target_memory=Mat and its type lives in Mat; then the inner plan lowers it."""
        inner = plan.args[0]
        assert isinstance(inner, Term) and isinstance(s, AssignStmt)
        kwargs = (*call.kwargs, ("target_memory", MemorySpace.Mat))
        var_t = s.var.type
        assert isinstance(var_t, TileType)
        mat_s = replace(s, var=Var(s.var.name, retile(var_t, memory=MemorySpace.Mat), s.var.span, s.var.uid))
        before = len(out)
        self.handle(mat_s, replace(call, kwargs=kwargs), inner, ctx, out)
        if isinstance(s, AssignStmt) and s.var.uid in ctx:
            ctx[s.var.uid] = next(x.var for x in reversed(out[before:]) if isinstance(x, AssignStmt))

    def alloc_acc(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        """The packed accumulator: one [M, B*N] tile in Acc (B-060, B-173)."""
        kwargs = {**dict(call.kwargs), "target_memory": MemorySpace.Acc}
        value = make_call(
            call.op, (self.tuple_of(plan.args[0], call), *call.args[1:]), kwargs, call.attrs, call.span
        )
        self.bind(s, replace(value, type=carry(value.type, s.var.type if isinstance(s, AssignStmt) else value.type)),
                  ctx, out)  # fmt: skip

    def packed_drain(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        """A packed accumulator drains page by page straight out of L0C (B-175)."""
        sid = self.enc.stmt_ids[id(s)]
        pages = sorted((r[1], r[2], r[3], r[4]) for r in self.facts("DrainPage") if r[0] == sid)
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
        args[2] = self.tuple_of(plan.args[0], call)
        self.bind(s, self.recreate(call, tuple(args), s), ctx, out)

    def row_drain(self, s: Stmt, call: Call, plan: Term, ctx: Ctx, out: list[Stmt]) -> None:
        """A row-packed accumulator drains one [R, C] window per store, at logical row o0 + b*R (B-184)."""
        sid = self.enc.stmt_ids[id(s)]
        rr, cc = as_int(plan.args[0]), as_int(plan.args[1])
        pages = sorted((r[1], r[2], r[3]) for r in self.facts("RowDrainPage") if r[0] == sid)
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
        mode, routes = str(plan.args[0]), (as_int(plan.args[1]), as_int(plan.args[2]))
        sid = self.enc.stmt_ids[id(s)]
        info = self.enc.bmm[sid]
        span = call.span
        pages = sorted((r[1], r[2], r[3]) for r in self.facts("BPage") if r[0] == sid)
        slices = {(r[1], r[2]): r[3:] for r in self.facts("BSlice") if r[0] == sid}
        rows = {r[1]: r[2] for r in self.facts("BRowWin") if r[0] == sid}
        cols = {r[1]: r[2] for r in self.facts("BColWin") if r[0] == sid}
        stores = {r[1]: (r[2], r[3]) for r in self.facts("BStore") if r[0] == sid}
        lhs, rhs = substitute(info.lhs, ctx), substitute(info.rhs, ctx)
        result_t = s.var.type if isinstance(s, AssignStmt) else call.type
        assert isinstance(result_t, TileType)
        name = self.var_name(s) or "bmm"
        geom = next(r for r in self.facts("BmmGeom") if r[0] == sid)
        nb, m, n = as_int(geom[2]), as_int(geom[3]), as_int(geom[4])

        reloads = {(r[1], r[2]): r[3:] for r in self.facts("BReload") if r[0] == sid}
        static_at = {(r[1], r[2]): (r[3], r[4]) for r in self.facts("BReloadAt") if r[0] == sid}
        reload_sides = {r[1]: r[2:] for r in self.facts("BReloadSide") if r[0] == sid}
        bases = {r[1]: r[2] for r in self.facts("BmmBaseRow") if r[0] == sid}
        views = {as_int(r[1]) for r in self.facts("ViewOperand") if r[0] == sid}

        page_call = PageCalls(span)  # re-loads, slices, matmuls, moves, casts, windows, assembles

        # a side re-loads every page through the same 2-D view of its tensor, with the same window
        reloaded: dict[tuple[int, int, int, int], tuple[Call, MakeTuple]] = {}

        def page(side: int, i: int, b: int, operand: Expr) -> Var:
            label = "lhs" if side == 0 else "rhs"
            if routes[side] == 0:  # re-load page b of the operand's tensor (B-138)
                at = static_at.get((i, side))
                if at is not None:  # a static window, in integers
                    view_shape, x, y = reload_sides[side]
                    pos: MakeTuple = int_tuple(as_int(at[0]), as_int(at[1]), span=span)
                else:
                    view_shape, pos_term, x, y = reloads[(i, side)]
                    pos = self.tuple_of(pos_term, call)
                _, base = self.enc.statements[as_int(bases[side])]
                key = (side, id(view_shape), id(x), id(y))
                if key not in reloaded:
                    src = substitute(base.args[0], ctx)
                    reloaded[key] = (
                        make_call("tensor.view", (src, self.tuple_of(view_shape, call)), span=span),
                        MakeTuple((self.decode.dim(x, span), self.decode.dim(y, span)), span),
                    )
                view_call, window = reloaded[key]
                view = self.emit(f"{label}_pbview2d_{b}", view_call, s.span, out)
                load = page_call(f"{label}-load", "tile.load", (view, pos, window, window),
                                 dict(base.kwargs), base.attrs)  # fmt: skip
                loaded = self.emit(f"{label}_pbload_{b}", load, s.span, out)
                if side in views:
                    view_of = page_call(f"{label}-view", "tile.transpose_view", (loaded,))
                    return self.emit(f"{label}_pbview_{b}", view_of, s.span, out)
                return loaded
            row, col, r, c = (as_int(x) for x in slices[(i, side)])
            value = page_call(f"{label}-slice", "tile.slice", (operand, int_tuple(r, c, span=span),
                              int_tuple(row, col, span=span)))  # fmt: skip
            return self.emit(f"{label}_slice_{b}", value, s.span, out)

        acc: Expr | None = substitute(info.acc, ctx) if info.acc is not None else None
        acc_t = type_of(acc) if acc is not None else None
        if acc is not None and not (isinstance(acc_t, TileType) and acc_t.rank == 2):  # B-150
            rank = acc_t.rank if isinstance(acc_t, TileType) else 0
            raise PassError(
                f"FlattenTileNdTo2D: tile.batch_matmul_acc expects acc to be 2D after flatten, got rank {rank} "
                f"(an N-D accumulator parameter is never retyped; allocate the accumulator inside the kernel with "
                f"pl.tile.create){where(self.var_name(s), s.span)}"
            )
        init = substitute(info.init_cond, ctx) if info.init_cond is not None else None
        store_args: list[Expr] = []
        if mode == "general":
            kw = {"dtype": result_t.dtype, "target_memory": MemorySpace.Vec}
            acc = self.emit(
                name, make_call("tile.create", (int_tuple(nb * m, n, span=span),), kw, span=span), s.span, out
            )
        if mode == "packed-producer":  # the chain's one Acc buffer, allocated here (B-139)
            kw = {"dtype": result_t.dtype, "target_memory": MemorySpace.Acc}
            packed = make_call("tile.create", (int_tuple(m, nb * n, span=span),), kw, span=span)
            acc = self.emit(name, packed, s.span, out)
        if mode == "fused" and info.store is not None:
            sv = info.store.value
            assert isinstance(sv, Call)
            store_args = [substitute(a, ctx) for a in sv.args[:3]]
        last: Expr | None = None
        for i, a, b in pages:
            lp, rp = page(0, i, a, lhs), page(1, i, b, rhs)
            if mode == "fast":
                last = self.bind(s, make_call("tile.matmul", (lp, rp), span=span), ctx, out)
            elif mode == "acc-fast":
                args = (acc, lp, rp) if init is None else (acc, lp, rp, init)
                last = self.bind(s, self.recreate(replace(call, op="tile.matmul_acc"), args, s), ctx, out)  # type: ignore[arg-type]
            elif mode in ("packed-producer", "acc-cols"):
                assert acc is not None
                offset = int_tuple(
                    0, cols[i], span=span
                )  # one tuple for the window and its writeback (B-139)
                win = self.emit(f"acc_page_{i}", page_call("acc-window", "tile.slice", (acc, int_tuple(m, n, span=span),
                                offset)), s.span, out)  # fmt: skip
                cond: Expr | None = ConstBool(True, span) if mode == "packed-producer" else init
                args = (win, lp, rp) if cond is None else (win, lp, rp, cond)
                part = self.emit(
                    f"matmul_acc_{i}", page_call("matmul-acc", "tile.matmul_acc", args), s.span, out
                )
                acc = self.emit(
                    name, page_call("assemble", "tile.assemble", (acc, part, offset)), s.span, out
                )
            elif mode == "acc-rows":
                assert acc is not None
                win = self.emit(f"acc_page_{i}", page_call("acc-window", "tile.slice", (acc, int_tuple(m, n, span=span),
                                int_tuple(rows[i], 0, span=span))), s.span, out)  # fmt: skip
                args = (win, lp, rp) if init is None else (win, lp, rp, init)
                part = self.emit(
                    f"matmul_acc_{i}", page_call("matmul-acc", "tile.matmul_acc", args), s.span, out
                )
                acc = self.emit(name, page_call("assemble", "tile.assemble", (acc, part, int_tuple(rows[i], 0, span=span))),
                                s.span, out)  # fmt: skip
            else:
                res: Expr = self.emit(
                    f"matmul_{i}", page_call("matmul", "tile.matmul", (lp, rp)), s.span, out
                )
                differs = type_of(res).dtype != result_t.dtype  # type: ignore[union-attr]
                if mode == "general" or differs:
                    res = self.emit(f"matmul_vec_{i}", page_call("move", "tile.move", (res,),
                                    {"target_memory": MemorySpace.Vec}), s.span, out)  # fmt: skip
                if differs:
                    res = self.emit(f"matmul_cast_{i}", page_call("cast", "tile.cast", (res,),
                                    {"target_type": result_t.dtype, "mode": 2}), s.span, out)  # fmt: skip
                if mode == "general":
                    assert acc is not None
                    acc = self.emit(name, page_call("assemble", "tile.assemble", (acc, res,
                                    int_tuple(rows[i], 0, span=span))), s.span, out)  # fmt: skip
                else:
                    assert info.store is not None
                    offsets, window = stores[i]
                    sv = info.store.value
                    assert isinstance(sv, Call)
                    page_args: list[Expr] = [res, self.tuple_of(offsets, sv), store_args[2]]
                    if isinstance(window, Term) and window.op != "DNil":
                        page_args.append(self.tuple_of(window, sv))
                    value = with_operands(sv, tuple(page_args), type_of(store_args[2]))
                    store_args[2] = self.emit(f"{info.store.var.name}_{i}", value, info.store.span, out)
                    last = store_args[2]
        if (
            mode in ("general", "acc-rows", "acc-cols", "packed-producer")
            and isinstance(s, AssignStmt)
            and acc is not None
        ):
            ctx[s.var.uid] = acc
        if mode == "fused" and info.store is not None:
            self.consumed[id(info.store)] = last if isinstance(last, Var) else None
