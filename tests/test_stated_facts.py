"""What the encoder states of two static lists (ContigRow, OverflowRow, Off2DRow, BcastRow) is what the rules' walks
work out of the same lists (B-042, B-053, B-070, B-132), and so is a static batched matmul's geometry (BmmGeomRow): the walks still run for lists the encoder does not state,
and both must agree. A list the encoder states is never walked."""

from __future__ import annotations

from collections.abc import Iterator

import egglog.bindings as eb
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pypto_egg.language as pl
from pypto_egg.egraph import EGraphRun, shipped_rule_files
from pypto_egg.egraph.encode import Encoding, fold_offsets, non_contiguous, overflows
from pypto_egg.egraph.engine import load_rules, with_packed_tables
from pypto_egg.egraph.rules import run_text
from pypto_egg.errors import RuleError
from pypto_egg.extract.term import Term, as_int
from pypto_egg.ir.expr import ConstInt

from helpers import flatten

WALK = "(run-schedule (saturate (run queries)) (saturate (run arith) (run shape)) (saturate (run contiguity) (run overflow)))"


@pytest.fixture(scope="module")
def egraph() -> Iterator[eb.EGraph]:
    g = eb.EGraph()
    load_rules(g, with_packed_tables(shipped_rule_files()))
    yield g


def dims(values: list[int]) -> str:
    out = "(DNil)"
    for v in reversed(values):
        out = f"(DCons (DC {v}) {out})"
    return out


def walked(egraph: eb.EGraph, query: str, function: str, a: list[int], b: list[int]) -> bool:
    """The function's value the rules' walk gives for the two lists (asked as `query`)."""
    run_text(egraph, "(push)", "<test>")
    try:
        # (the constants 0 and 1 that negative guards compare against: every encoding states them)
        asked = f"({query} {dims(a)} {dims(b)}) (LenQuery {dims(a)}) (LenQuery {dims(b)}) (DC 0) (DC 1)"
        run_text(egraph, f"{asked} {WALK}", "<test>")
        for value in ("true", "false"):
            try:
                run_text(egraph, f"(check (= ({function} {dims(a)} {dims(b)}) {value}))", "<test>")
                return value == "true"
            except RuleError:
                continue
        raise AssertionError(f"the walk left {function} of {a} and {b} unknown")
    finally:
        run_text(egraph, "(pop)", "<test>")


def ints(t: Term) -> list[int]:
    """A dims term of constants as integers."""
    out = []
    while t.op == "DCons":
        head, t = t.args
        assert isinstance(head, Term) and head.op == "DC" and isinstance(t, Term)
        out.append(as_int(head.args[0]))
    return out


small = st.lists(st.integers(1, 4), min_size=1, max_size=4)


@settings(max_examples=40, deadline=None)
@given(valid=small, whole=small)
def test_the_encoder_states_the_contiguity_the_walk_finds(egraph, valid, whole):
    # a box inside dims, or of another rank
    box = [max(v, w) for v, w in zip(valid, whole)] + whole[len(valid) :]
    expected = non_contiguous(tuple(valid), tuple(box))
    assert expected == walked(egraph, "ContigQuery", "NonContig", valid, box)


@settings(max_examples=40, deadline=None)
@given(tile=small, tensor=small)
def test_the_encoder_states_the_overflow_the_walk_finds(egraph, tile, tensor):
    expected = overflows(tuple(tile), tuple(tensor))
    assert expected == walked(egraph, "OverflowQuery", "Overflows", tile[::-1], tensor[::-1])


@settings(max_examples=40, deadline=None)
@given(data=st.data(), shape=st.lists(st.integers(1, 6), min_size=2, max_size=5))
def test_the_encoder_states_the_offset_fold_the_walk_finds(egraph, data, shape):
    offsets = [data.draw(st.integers(0, d - 1)) for d in shape]
    row, col = fold_offsets(tuple(offsets), tuple(shape))
    run_text(egraph, "(push)", "<test>")
    try:
        fold = f"(Off2D {dims(offsets)} {dims(shape)})"
        fold_walk = "(run-schedule (saturate (run arith) (run shape) (run offsets)))"
        run_text(egraph, f"{fold} (DC 0) (DC 1) {fold_walk}", "<test>")
        run_text(egraph, f"(check (= {fold} {dims([row, col])}))", "<test>")
    finally:
        run_text(egraph, "(pop)", "<test>")


def stated_broadcast(lhs: list[int], rhs: list[int]) -> list[int] | None:
    """The broadcast batch shape the encoder states of two static batch shapes, or None."""
    enc = Encoding()
    enc.broadcast(tuple(map(ConstInt, lhs)), tuple(map(ConstInt, rhs)))
    if not enc.rows["BcastRow"]:
        return None
    [(_, _, out)] = enc.rows["BcastRow"]
    values = dict(enc.rows["DConstRow"])
    cells = {i: (h, t) for i, h, t in enc.rows["ConsRow"]}
    reversed_out = []
    while out:
        head, out = cells[out]
        reversed_out.append(values[head])
    return reversed_out[::-1]


batch = st.lists(st.integers(1, 3), max_size=3)


@settings(max_examples=60, deadline=None)
@given(lhs=batch, rhs=batch)
def test_the_encoder_states_the_broadcast_the_walk_finds(egraph, lhs, rhs):
    try:
        expected: list[int] | None = list(np.broadcast_shapes(tuple(lhs), tuple(rhs)))
    except ValueError:
        expected = None
    assert stated_broadcast(lhs, rhs) == expected
    run_text(egraph, "(push)", "<test>")
    try:
        query = f"(BcastRev {dims(lhs[::-1])} {dims(rhs[::-1])})"
        run_text(egraph, f"{query} (DC 0) (DC 1) (run-schedule (saturate (run arith) (run shape)))", "<test>")
        if expected is not None:
            run_text(egraph, f"(check (= {query} {dims(expected[::-1])}))", "<test>")
    finally:
        run_text(egraph, "(pop)", "<test>")


WALKS = ("rows-start", "last-end", "last-step", "init-end", "init-step", "prod-nil", "prod-cons", "vrow-start",
         "rev-empty", "rev-single", "rev-start", "len-query-tail", "len-nil", "len-cons", "unlisted", "uncounted",
         "bcast-unstated", "bcast-left-one", "bcast-right-one", "bcast-equal", "bcast-left-done", "bcast-right-done")  # fmt: skip


@pytest.mark.parametrize(
    "lhs, rhs", [([2, 16, 32], [2, 32, 16]), ([2, 1, 16, 32], [3, 32, 16]), ([16, 32], [4, 32, 16])]
)
def test_no_list_the_encoder_states_is_walked(lhs: list[int], rhs: list[int]) -> None:
    """A batched matmul's shapes, their batch dims, reversals, products and broadcast are all stated, so no walk
    runs: their gates (Unlisted, Uncounted, Unbcasted) stay empty, so egglog searches none of them."""
    src = bmm_program(lhs, rhs)
    with EGraphRun(pl.parse(src), "main", "Ascend910B") as eg:
        fired = eg.saturate().rules_fired
    assert not set(WALKS) & set(fired), fired
    assert fired.get("build-broadcast") == (1 if len(lhs) > 2 or len(rhs) > 2 else None)
    flatten(pl.parse(src))


def bmm_program(lhs: list[int], rhs: list[int]) -> str:
    out = [*np.broadcast_shapes(tuple(lhs[:-2]), tuple(rhs[:-2])), lhs[-2], rhs[-1]]
    return f"""
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[{lhs}, pl.FP16], b: pl.Tensor[{rhs}, pl.FP16],
             out: pl.Out[pl.Tensor[{out}, pl.FP32]]) -> pl.Tensor[{out}, pl.FP32]:
        x = pl.load(a, {[0] * len(lhs)}, {lhs}, target_memory=pl.Mem.Mat)
        y = pl.load(b, {[0] * len(rhs)}, {rhs}, target_memory=pl.Mem.Mat)
        c = pl.tile.batch_matmul(x, y)
        out = pl.store(c, {[0] * len(out)}, out)
        return out
"""


def geometry(src: str) -> tuple[list[tuple[object, ...]], dict[str, int], dict[int, Term | None]]:
    """A batched matmul's BmmGeom rows, the rules fired and the plans chosen."""
    with EGraphRun(pl.parse(src), "main", "Ascend910B") as eg:
        fired = eg.saturate().rules_fired
        return eg.facts("BmmGeom"), fired, eg.plan_terms()


@settings(max_examples=12, deadline=None)
@given(
    batches=st.tuples(
        st.lists(st.sampled_from([1, 2, 3]), max_size=2), st.lists(st.sampled_from([1, 2, 3]), max_size=2)
    )
    .filter(lambda b: len(b[0]) + len(b[1]) > 0)
    .filter(lambda b: all(x == y or 1 in (x, y) for x, y in zip(b[0][::-1], b[1][::-1], strict=False))),
    m=st.sampled_from([16, 32]),
    k=st.sampled_from([16, 64]),
    n=st.sampled_from([16, 32]),
)
def test_the_encoder_states_the_matmul_geometry_the_rules_find(
    batches: tuple[list[int], list[int]], m: int, k: int, n: int
) -> None:
    """The geometry the encoder states of a static batched matmul (BmmGeomRow: output batch dims, their product,
    M, N, K; B-132) is the one bmm.egg's rule works out of the operands' lists, and the plans are the same."""
    src = bmm_program([*batches[0], m, k], [*batches[1], k, n])
    stated, fired, plans = geometry(src)
    assert fired.get("build-bmm-geometry") == 1 and "bmm-geometry" not in fired
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            Encoding, "bmm_geometry", lambda self, sid, *_: self.rows["BmmUnmeasuredRow"].append((sid,))
        )
        derived, fired, derived_plans = geometry(src)
    assert fired.get("bmm-geometry") == 1 and "build-bmm-geometry" not in fired
    assert str(stated) == str(derived) and str(plans) == str(derived_plans)  # (terms compare by identity)
    [(_, out_batch, count, *mnk)] = stated
    expected = list(np.broadcast_shapes(tuple(batches[0]), tuple(batches[1])))
    assert isinstance(out_batch, Term) and ints(out_batch) == expected
    assert count == int(np.prod(expected)) and mnk == [m, n, k]


def kernel(out_shape: str, scalar: str, body: str) -> str:
    """A program of one InCore kernel over an [4, 6, 8] FP32 tensor `x`, an `out` tensor and an INDEX scalar."""
    lines = "\n".join("        " + line for line in body.strip().splitlines())
    return f"""
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[4, 6, 8], pl.FP32], out: pl.Out[pl.Tensor[{out_shape}, pl.FP32]], {scalar}: pl.Scalar[pl.INDEX]
             ) -> pl.Tensor[{out_shape}, pl.FP32]:
{lines}
"""


def test_static_lists_are_stated_and_dynamic_ones_walked():
    src = kernel("[4, 6, 8]", "n", """
a = pl.load(x, [0, 0, 0], [2, 6, 8])
b = pl.load(x, [0, 0, 0], [2, 6, 8], valid_shapes=[2, n, 8])
c = pl.tile.add(a, b)
out = pl.store(c, [0, 0, 0], out)
return out
""")  # fmt: skip
    program = pl.parse(src)
    with EGraphRun(program, "main", "Ascend910B") as eg:
        assert len(eg.encoding.rows["ContigRow"]) == 1 and len(eg.encoding.rows["OverflowRow"]) == 1
        # the load of a dynamic valid box: the encoder asks, and the rules walk; the static pairs ask nothing
        assert len(eg.encoding.rows["ContigAskRow"]) == 1 and not eg.encoding.rows["OverflowAskRow"]
        fired = eg.saturate().rules_fired
    assert fired.get("build-contiguous") == 1 and fired.get("build-fits") == 1
    assert fired.get("build-contig-query") == 1 and fired.get("contig-start") == 1
    assert "overflow-start" not in fired and "build-overflow-query" not in fired
    # a Vec load keeps its tensor-rank window: no rule folds its offsets, so neither does the encoder
    assert not eg.encoding.rows["Off2DRow"] and "off2d" not in fired
    flatten(program, scalars={"n": 5})  # the pass's output, its meaning held by the interpreter


def test_a_dynamic_tile_stored_is_asked_about_and_walked():
    """A store whose tile's valid shape is dynamic: the encoder cannot say whether the tile overflows its tensor, so
    it states the question (OverflowAskRow) and store.egg scans the pair (B-053); the static dims decide it."""
    src = kernel("[4, 6, 8]", "n", """
a = pl.load(x, [0, 0, 0], [4, 6, 8], valid_shapes=[n, 6, 8])
out = pl.store(a, [0, 0, 0], out)
return out
""")  # fmt: skip
    program = pl.parse(src)
    with EGraphRun(program, "main", "Ascend910B") as eg:
        assert len(eg.encoding.rows["OverflowAskRow"]) == 1 and not eg.encoding.rows["OverflowRow"]
        fired = eg.saturate().rules_fired
    assert fired.get("build-overflow-query") == 1 and fired.get("overflow-start") == 1
    flatten(program, scalars={"n": 3})


def test_static_offsets_are_folded_by_the_encoder_and_dynamic_ones_by_the_rules():
    src = kernel("[1, 6, 8]", "i", """
a = pl.load(x, [i, 0, 0], [1, 6, 8], target_memory=pl.Mem.Mat)
b = pl.load(x, [2, 0, 0], [1, 6, 8], target_memory=pl.Mem.Mat)
out = pl.store(a, [0, 0, 0], out)
out = pl.store(b, [0, 0, 0], out)
return out
""")  # fmt: skip
    with EGraphRun(pl.parse(src), "main", "Ascend910B") as eg:
        assert len(eg.encoding.rows["Off2DRow"]) == 1  # b's
        fired = eg.saturate().rules_fired
        plans = eg.plan_terms()
        a_plan, b_plan = (plans[sid] for sid in eg.encoding.function_sids["main"][:2])
    assert a_plan is not None and a_plan.op == "LoadCollapsed", a_plan
    assert b_plan is not None and b_plan.op == "LoadCollapsed", b_plan
    assert ints(b_plan.args[3]) == [12, 0]  # b's offsets [2, 0, 0] over [4, 6, 8]: row 2 * 6 + 0, column 0
    assert fired.get("build-offsets-2d") == 1 and fired.get("off2d") == 1 and fired.get("rowoff-start") == 1
    flatten(pl.parse(src), scalars={"i": 3})
