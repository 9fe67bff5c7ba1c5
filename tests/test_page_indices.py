"""Page indices on demand: the facts state the first page indices (`PageIndexRow`), and a rule that enumerates more
pages than that asks for them (`PagesWanted`), which the engine then states before running the schedule again.
Every case here needs more pages than are stated up front, and must lower exactly as with every index stated
from the start (behaviours.md §L-§O: B-132, B-136, B-175, B-184)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_flatten_batch_matmul import assigns, bmm_program
from test_flatten_packing import acc_loop
from test_flatten_row_windows import windows

from pypto_egg.egraph import engine
from pypto_egg.egraph.engine import PAGE_ROWS_UP_FRONT, EGraphRun
from pypto_egg.extract.lower_matmul import MatmulLowerer
from pypto_egg.ir import assert_structural_equal, python_print

from helpers import flatten

PAGES = PAGE_ROWS_UP_FRONT + 4  # more pages than the facts state up front


def _store(rank: int) -> str:
    return (
        "c = pl.tile.batch_matmul(ta, tb)\nout = pl.store(c, ["
        + ", ".join(["0"] * rank)
        + "], out)\nreturn out"
    )


CASES = {
    # a broadcast operand: each page's operand pages are worked out page by page (B-132)
    "broadcast": lambda: bmm_program([1, 16, 32], [PAGES, 32, 16], _store(3), [PAGES, 16, 16]),
    # two batch axes: each page's store offsets are walked page by page (B-136)
    "two-batch-axes": lambda: bmm_program(
        [2, PAGES // 2, 16, 32], [2, PAGES // 2, 32, 16], _store(4), [2, PAGES // 2, 16, 16]
    ),
    # a packed accumulator drains one page a store (B-175)
    "packed-drain": lambda: acc_loop(PAGES, 16, 16),
    # a row-packed accumulator drains one row window a store (B-184)
    "row-drain": lambda: windows([16 * PAGES, 32], [16, 32], [32, 0]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_pages_past_those_stated_up_front_lower_as_with_every_index_stated(case, monkeypatch):
    after = flatten(CASES[case]())  # (the interpreter runs both sides)
    monkeypatch.setattr(engine, "PAGE_ROWS_UP_FRONT", 1_000_000)
    every_index = flatten(CASES[case]())
    assert_structural_equal(after, every_index)
    assert python_print(after) == python_print(every_index)


def test_the_broadcast_pages_are_all_there():
    after = flatten(CASES["broadcast"]())
    stores = [s.value for s in assigns(after) if s.value.op == "tile.store"]
    assert [[d.value for d in c.args[1].elements] for c in stores] == [[i, 0, 0] for i in range(PAGES)]


def test_indices_are_stated_only_when_a_rule_asks_for_them():
    # the same batch on both sides: one fact states every page, and no index past the first ones is stated
    with EGraphRun(bmm_program([PAGES, 16, 32], [PAGES, 32, 16], _store(3), [PAGES, 16, 16]), "main",
                   "Ascend910B", reads=MatmulLowerer.FACTS) as eg:  # fmt: skip
        eg.saturate()
        assert len(eg.encoding.rows["PageIndexRow"]) == PAGE_ROWS_UP_FRONT
    # a broadcast operand asks for every page's index
    with EGraphRun(CASES["broadcast"](), "main", "Ascend910B", reads=MatmulLowerer.FACTS) as eg:
        eg.saturate()
        assert len(eg.encoding.rows["PageIndexRow"]) == PAGES
        assert {r[1] for r in eg.facts("BPage")} == set(range(PAGES))


@st.composite
def many_page_batched_matmuls(draw: st.DrawFn) -> tuple[list[int], list[int], list[int], str]:
    """Batched matmuls of more pages than the facts state up front: one or two batch axes, either operand
    broadcast or neither, the result stored straight (fused) or after an elementwise op (gathered)."""
    if draw(st.booleans()):
        out_batch = [draw(st.integers(PAGE_ROWS_UP_FRONT + 1, 2 * PAGE_ROWS_UP_FRONT))]
    else:
        out_batch = [
            draw(st.integers(2, 4)),
            draw(st.integers(PAGE_ROWS_UP_FRONT // 2 + 1, PAGE_ROWS_UP_FRONT)),
        ]
    broadcast = draw(st.sampled_from(["none", "lhs", "rhs"]))
    lhs_batch = [1] * len(out_batch) if broadcast == "lhs" else out_batch
    rhs_batch = [1] * len(out_batch) if broadcast == "rhs" else out_batch
    zeros = ", ".join(["0"] * (len(out_batch) + 2))
    if draw(st.booleans()):
        body = f"c = pl.tile.batch_matmul(ta, tb)\nout = pl.store(c, [{zeros}], out)\nreturn out"
    else:
        body = f"c = pl.tile.batch_matmul(ta, tb)\ne = pl.tile.exp(c)\nout = pl.store(e, [{zeros}], out)\nreturn out"
    return [*lhs_batch, 16, 16], [*rhs_batch, 16, 16], [*out_batch, 16, 16], body


@settings(max_examples=12, deadline=None)
@given(many_page_batched_matmuls())
def test_generated_many_page_batched_matmuls_lower_as_with_every_index_stated(case):
    lhs, rhs, out, body = case
    after = flatten(bmm_program(lhs, rhs, body, out))  # (the interpreter runs both sides)
    engine.PAGE_ROWS_UP_FRONT, up_front = 1_000_000, engine.PAGE_ROWS_UP_FRONT
    try:
        every_index = flatten(bmm_program(lhs, rhs, body, out), meaning=False)
    finally:
        engine.PAGE_ROWS_UP_FRONT = up_front
    assert python_print(after) == python_print(every_index)
