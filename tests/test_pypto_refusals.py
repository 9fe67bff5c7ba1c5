"""The type-deduction differential, extended to refusals: a static statement PyPTO's reader and deduction refuse is
refused by pypto-egg's, for PyPTO's reason and with its remedy; and the same statement made legal (a clamped read)
is read by both."""

from __future__ import annotations

import pytest

import pypto_egg.language as pl
from pypto_egg.errors import UserError
from pypto_egg.pypto import load_pypto

from pypto_ref import requires_pypto

pytestmark = requires_pypto

PROGRAM = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[2, 8, 16], pl.FP32], out: pl.Out[pl.Tensor[[2, 8, 32], pl.FP32]]) -> pl.Tensor[[2, 8, 32], pl.FP32]:
        t: pl.Tile[[2, 8, 32], pl.FP32, pl.Mem.Vec] = {load}
        out = pl.store(t, [0, 0, 0], out)
        return out
"""

REFUSED = {
    "a window past its tensor": (
        "pl.load(x, [0, 0, 0], [2, 8, 32])",
        "reads past the end of dimension 2: offset 0 + extent 32 exceeds the source extent 16. Pass clamp=True",
    ),
    "a window past its tensor by its offset": (
        "pl.load(x, [1, 0, 0], [2, 8, 32], valid_shape=[2, 8, 16])",
        "reads past the end of dimension 0: offset 1 + extent 2 exceeds the source extent 2",
    ),
    "a negative offset": (
        "pl.load(x, [0, -1, 0], [2, 8, 32], valid_shape=[2, 8, 16])",
        "offset 1 is provably negative",
    ),
    "a valid region larger than its window": (
        "pl.load(x, [0, 0, 0], [2, 8, 32], valid_shape=[2, 9, 16])",
        "valid_shape 1 is 9, which exceeds the window extent 8",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_statement_pypto_refuses_is_refused_here_for_its_reason(case):
    load, reason = REFUSED[case]
    text = PROGRAM.format(load=load)
    with pytest.raises(Exception) as theirs:
        load_pypto().language.parse(text)
    assert reason in str(theirs.value), str(theirs.value)
    with pytest.raises(UserError) as ours:
        pl.parse(text)
    assert reason in str(ours.value), str(ours.value)


def test_a_clamped_read_is_read_by_both_with_the_valid_region_at_the_source_edge():
    text = PROGRAM.format(load="pl.load(x, [0, 0, 0], [2, 8, 32], clamp=True)")
    printed = load_pypto().ir.python_print(load_pypto().language.parse(text))
    assert "valid_shape=[2, 8, 16]" in printed
    ours = pl.parse(text).functions[0].body[0].var.type
    assert [d.value for d in ours.valid_shape] == [2, 8, 16]


ELEMENTWISE = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[2, 8, 16], pl.{d}], y: pl.Tensor[[2, 8, 16], pl.{d}],
             out: pl.Out[pl.Tensor[[2, 8, 16], pl.{d}]]) -> pl.Tensor[[2, 8, 16], pl.{d}]:
        a: pl.Tile[[2, 8, 16], pl.{d}, pl.Mem.Vec] = pl.load(x, [0, 0, 0], [2, 8, 16])
        b: pl.Tile[[2, 8, 16], pl.{d}, pl.Mem.Vec] = pl.load(y, [0, 0, 0], [2, 8, 16])
        c = {call}
        return out
"""
DTYPES = ["FP32", "FP16", "BF16", "INT32", "INT16", "INT8", "UINT8", "UINT16", "UINT32"]


def _elementwise_calls() -> list[str]:
    """Every element-wise tile op PyPTO's DSL has (unary, binary, tile-scalar), called as its DSL calls it."""
    from pypto_egg.ir.ops import BINARY_OPS, MORE_BINARY_OPS, MORE_SCALAR_OPS, SCALAR_OPS, UNARY_OPS

    tile = load_pypto().language.tile
    calls = [f"pl.tile.{op[5:]}(a)" for op in UNARY_OPS]
    calls += [f"pl.tile.{op[5:]}(a, b)" for op in (*BINARY_OPS, *MORE_BINARY_OPS)]
    calls += [f"pl.tile.{op[5:]}(a, {{one}})" for op in (*SCALAR_OPS, *MORE_SCALAR_OPS)]
    return [c for c in calls if hasattr(tile, c[8 : c.index("(")])]  # (pypto-egg's own extras aside)


def disagreement(text: str) -> tuple[str | None, str | None] | None:
    """PyPTO's reason and pypto-egg's error where the two readers disagree on a program (one reads it and the other
    refuses it, or pypto-egg refuses it for another reason); None where they agree."""
    try:
        load_pypto().language.parse(text)
        theirs = None
    except Exception as e:  # PyPTO's reader raises its own error types
        theirs = str(e).splitlines()[0].split("': ", 1)[-1]
    try:
        pl.parse(text)
        ours = None
    except UserError as e:
        ours = str(e)
    if (theirs is None) != (ours is None) or (theirs is not None and theirs not in str(ours)):
        return theirs, ours
    return None


@pytest.mark.parametrize("dtype", DTYPES)
def test_an_element_wise_op_on_a_dtype_pypto_refuses_is_refused_here_for_its_reason(dtype):
    """The type-deduction differential over element types: each element-wise op on each dtype is read by both
    readers or refused by both, with PyPTO's reason."""
    calls = _elementwise_calls()
    assert len(calls) >= 30
    texts = {
        c: ELEMENTWISE.format(d=dtype, call=c.format(one="1.0" if dtype[0] in "FB" else "1")) for c in calls
    }
    differ = [(call, *why) for call, text in texts.items() if (why := disagreement(text))]
    assert not differ, differ


MIXED = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[8, 32], pl.{d}], y: pl.Tensor[[8, 32], pl.{d}], z: pl.Tensor[[8, 32], pl.UINT32],
             w: pl.Tensor[[8, 32], pl.INT32], out: pl.Out[pl.Tensor[[8, 32], pl.{d}]]) -> pl.Tensor[[8, 32], pl.{d}]:
        a: pl.Tile[[8, 32], pl.{d}, pl.Mem.Vec] = pl.load(x, [0, 0], [8, 32])
        b: pl.Tile[[8, 32], pl.{d}, pl.Mem.Vec] = pl.load(y, [0, 0], [8, 32])
        i: pl.Tile[[8, 32], pl.UINT32, pl.Mem.Vec] = pl.load(z, [0, 0], [8, 32])
        j: pl.Tile[[8, 32], pl.INT32, pl.Mem.Vec] = pl.load(w, [0, 0], [8, 32])
        r: pl.Tile[[8, 1], pl.{d}, pl.Mem.Vec] = pl.load(y, [0, 0], [8, 1])
        c = {call}
        return out
"""
OTHER_CALLS = [
    "pl.tile.cast(a, pl.FP32)",
    "pl.tile.prelu(a, b, b)",
    "pl.tile.row_min(a, b)",
    "pl.tile.sort32(a, i)",
    "pl.tile.mrgsort_format1(a, 64)",
    "pl.tile.recip(a, high_precision=True)",
    "pl.tile.div(a, b, high_precision=True)",
    "pl.tile.row_expand_add(a, r, a)",
    "pl.tile.gather(a, j, b)",
    "pl.tile.mscatter(a, j, out)",
    "pl.tile.mscatter(a, i, out)",
]


@pytest.mark.parametrize("call", OTHER_CALLS)
def test_an_op_whose_deduction_takes_some_dtypes_refuses_the_others_as_pypto_does(call):
    """The same differential for ops beyond the element-wise ones whose deduction PyPTO restricts to some dtypes
    (a cast, a reduction, PReLU, the sorts, high precision, a row broadcast, a gather and a scatter)."""
    differ = [(dtype, *why) for dtype in DTYPES if (why := disagreement(MIXED.format(d=dtype, call=call)))]
    assert not differ, differ
