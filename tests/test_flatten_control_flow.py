"""Traversal (behaviours.md §C: B-020..B-030): control flow, scopes, calls, spans and names."""

from __future__ import annotations

import pypto_egg.language as pl
from pypto_egg import ir
from pypto_egg.ir.stmt import AssignStmt, ForStmt, IfStmt, ScopeStmt, WhileStmt

from helpers import flatten


def test_b023_if_return_vars_are_retyped_from_the_then_yield():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, x: pl.Tensor[[2, 3, 4], pl.FP32], flag: pl.Scalar[pl.INDEX],
                 out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]) -> pl.Tensor[[2, 3, 4], pl.FP32]:  # fmt: skip
            t = pl.load(x, [0, 0, 0], [2, 3, 4])
            if flag > 0:
                a = pl.tile.exp(t)
                r = pl.yield_(a)
            else:
                b = pl.tile.neg(t)
                r = pl.yield_(b)
            out = pl.store(r, [0, 0, 0], out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, x: pl.Tensor[[2, 3, 4], pl.FP32], flag: pl.Scalar[pl.INDEX],
                 out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]) -> pl.Tensor[[2, 3, 4], pl.FP32]:  # fmt: skip
            t: pl.Tile[[6, 4], pl.FP32] = pl.tile.load(x, [0, 0, 0], [2, 3, 4], [2, 3, 4])
            if flag > 0:
                a: pl.Tile[[6, 4], pl.FP32] = pl.tile.exp(t)
                r = pl.yield_(a)
            else:
                b: pl.Tile[[6, 4], pl.FP32] = pl.tile.neg(t)
                r = pl.yield_(b)
            out_1: pl.Tensor[[2, 3, 4], pl.FP32] = pl.tile.store(r, [0, 0, 0], out, [2, 3, 4])
            return out_1

    after = flatten(Before, Expected, scalars={"flag": 1})
    flatten(Before, scalars={"flag": 0})
    rv = next(s for s in after.functions[0].body if isinstance(s, IfStmt)).return_vars[0]
    assert [d.value for d in rv.type.shape] == [6, 4]


def test_b024_for_iter_args_are_retyped_from_their_new_inits():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[4, 2, 8], pl.FP32], out: pl.Out[pl.Tensor[[2, 8], pl.FP32]]
        ) -> pl.Tensor[[2, 8], pl.FP32]:
            acc0 = pl.tile.full([1, 2, 8], dtype=pl.FP32, value=0.0)
            for i, (acc,) in pl.range(4, init_values=(acc0,)):
                t = pl.load(x, [i, 0, 0], [1, 2, 8])
                nxt = pl.tile.add(acc, t)
                total = pl.yield_(nxt)
            out = pl.store(total, [0, 0], out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[4, 2, 8], pl.FP32], out: pl.Out[pl.Tensor[[2, 8], pl.FP32]]
        ) -> pl.Tensor[[2, 8], pl.FP32]:
            acc0: pl.Tile[[2, 8], pl.FP32] = pl.tile.full([2, 8], dtype=pl.FP32, value=0.0)
            for i, (acc,) in pl.range(4, init_values=(acc0,)):
                t: pl.Tile[[2, 8], pl.FP32] = pl.tile.load(x, [i, 0, 0], [1, 2, 8], [1, 2, 8])
                nxt: pl.Tile[[2, 8], pl.FP32] = pl.tile.add(acc, t)
                total = pl.yield_(nxt)
            out_1: pl.Tensor[[2, 8], pl.FP32] = pl.tile.store(total, [0, 0], out)
            return out_1

    after = flatten(Before, Expected)
    loop = next(s for s in after.functions[0].body if isinstance(s, ForStmt))
    assert [d.value for d in loop.iter_args[0].var.type.shape] == [2, 8]
    assert [d.value for d in loop.return_vars[0].type.shape] == [2, 8]


def test_b025_while_iter_args_and_scalar_carriers():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]
        ) -> pl.Tensor[[2, 3, 4], pl.FP32]:
            t = pl.load(x, [0, 0, 0], [2, 3, 4])
            for acc, count in pl.while_(init_values=(t, 0)):
                pl.cond(count < 3)
                nxt = pl.tile.add(acc, t)
                acc_out, count_out = pl.yield_(nxt, count + 1)
            out = pl.store(acc_out, [0, 0, 0], out)
            return out

    after = flatten(Before)
    loop = next(s for s in after.functions[0].body if isinstance(s, WhileStmt))
    assert [d.value for d in loop.iter_args[0].var.type.shape] == [6, 4]
    assert loop.iter_args[1] is Before.functions[0].body[1].iter_args[1]  # the scalar carrier is untouched
    assert [d.value for d in loop.return_vars[0].type.shape] == [6, 4]


def test_b022_scope_body_is_rewritten_with_the_same_context():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]
        ) -> pl.Tensor[[2, 3, 4], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="inner"):
                t = pl.load(x, [0, 0, 0], [2, 3, 4])
            u = pl.tile.exp(t)
            out = pl.store(u, [0, 0, 0], out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]
        ) -> pl.Tensor[[2, 3, 4], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="inner"):
                t: pl.Tile[[6, 4], pl.FP32] = pl.tile.load(x, [0, 0, 0], [2, 3, 4], [2, 3, 4])
            u: pl.Tile[[6, 4], pl.FP32] = pl.tile.exp(t)
            out_1: pl.Tensor[[2, 3, 4], pl.FP32] = pl.tile.store(u, [0, 0, 0], out, [2, 3, 4])
            return out_1

    after = flatten(Before, Expected)
    assert isinstance(after.functions[0].body[0], ScopeStmt)


def test_b026_eval_statement_is_rewritten():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]
        ) -> pl.Tensor[[2, 3, 4], pl.FP32]:
            t = pl.load(x, [0, 0, 0], [2, 3, 4])
            pl.store(t, [0, 0, 0], out)
            return out

    after = flatten(Before, meaning=False)
    ev = after.functions[0].body[1]
    # substituted and re-deduced only: an evaluated store gets no partition operand (B-026)
    assert isinstance(ev, ir.EvalStmt) and len(ev.expr.args) == 3
    assert ev.expr.args[0] is after.functions[0].body[0].var


def test_b027_b005_calls_between_functions_and_independent_incore_functions():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k1(
            self, x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]
        ) -> pl.Tensor[[2, 3, 4], pl.FP32]:
            t = pl.load(x, [0, 0, 0], [2, 3, 4])
            out = pl.store(t, [0, 0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.AIV)
        def k2(
            self, x: pl.Tensor[[2, 2, 2, 8], pl.FP32], out: pl.Out[pl.Tensor[[2, 2, 2, 8], pl.FP32]]
        ) -> pl.Tensor[[2, 2, 2, 8], pl.FP32]:
            t = pl.load(x, [0, 0, 0, 0], [2, 2, 2, 8])
            u = pl.tile.exp(t)
            out = pl.store(u, [0, 0, 0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]
        ) -> pl.Tensor[[2, 3, 4], pl.FP32]:
            r = self.k1(x, out)
            return r

    after = flatten(Before)
    assert after.functions[2] is Before.functions[2]
    assert [d.value for d in after.function("k2").body[0].var.type.shape] == [8, 8]
    assert [d.value for d in after.function("k1").body[0].var.type.shape] == [6, 4]


def test_b029_synthesized_statements_take_the_original_statement_span():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, x: pl.Tensor[[2, 16, 128], pl.FP16]) -> pl.Tensor[[2, 16, 128], pl.FP16]:
            t = pl.tile.load(x, [1, 0, 0], [1, 16, 128], target_memory=pl.Mem.Mat)
            return x

    after = flatten(Before, meaning=False)
    original = Before.functions[0].body[0]
    view, load = after.functions[0].body[0], after.functions[0].body[1]
    assert isinstance(view, AssignStmt) and view.span == original.span and load.span == original.span
    assert load.value.span == original.value.span
    assert view.span is not None and view.span.line > 0


def test_b030_names_are_kept_and_synthesized_names_derive_from_the_originals():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, x: pl.Tensor[[2, 16, 128], pl.FP16]) -> pl.Tensor[[2, 16, 128], pl.FP16]:
            lhs_tile = pl.tile.load(x, [0, 0, 0], [2, 16, 128], target_memory=pl.Mem.Mat)
            return x

    after = flatten(Before, meaning=False)
    assert [s.var.name for s in after.functions[0].body[:2]] == ["lhs_tile_view2d", "lhs_tile"]


def test_b020_nested_loops_and_ifs_thread_flattened_values():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[4, 2, 8], pl.FP32], out: pl.Out[pl.Tensor[[4, 2, 8], pl.FP32]]
        ) -> pl.Tensor[[4, 2, 8], pl.FP32]:
            for i, (o,) in pl.range(0, 4, 1, init_values=(out,)):
                t = pl.load(x, [i, 0, 0], [1, 2, 8])
                if i > 1:
                    u = pl.tile.muls(t, 2.0)
                    v = pl.yield_(u)
                else:
                    w = pl.tile.neg(t)
                    v = pl.yield_(w)
                o2 = pl.store(v, [i, 0, 0], o)
                res = pl.yield_(o2)
            return res

    flatten(Before)


def test_b029_synthesized_operands_carry_the_call_span():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[2, 3, 8], pl.FP32], out: pl.Out[pl.Tensor[[2, 8, 3], pl.FP32]]
        ) -> pl.Tensor[[2, 8, 3], pl.FP32]:
            t = pl.load(x, [0, 0, 0], [2, 3, 8])
            tt = pl.transpose(t, axis1=1, axis2=2)
            out = pl.store(tt, [0, 0, 0], out)
            return out

    after = flatten(Before, meaning=False)
    body = after.functions[0].body
    store = body[-2]
    original_store = Before.functions[0].body[2]
    assert store.span == original_store.span and store.value.span == original_store.value.span
    window = store.value.args[3]
    assert window.span == original_store.value.span and all(e.span == window.span for e in window.elements)
    transpose_call = Before.functions[0].body[1]
    for s in body[1:-2]:
        assert s.span == transpose_call.span and s.value.span == transpose_call.value.span
