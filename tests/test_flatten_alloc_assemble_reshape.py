"""tile.create / tile.full (§F), N-D tile.assemble (§G, B-012), rank-raising reshape (§H)."""

from __future__ import annotations

from dataclasses import replace

import pytest

import pypto_egg.language as pl
from pypto_egg import ir, passes
from pypto_egg.errors import PassError
from pypto_egg.ir import python_print

from helpers import flatten


def test_b060_create_and_full_are_recreated_flat():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
            a = pl.tile.create([2, 3, 4], dtype=pl.FP32)
            b = pl.tile.full([2, 3, 4], dtype=pl.FP32, value=1.5)
            c = pl.tile.add(a, b)
            out = pl.store(c, [0, 0, 0], out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
            a: pl.Tile[[6, 4], pl.FP32] = pl.tile.create([6, 4], dtype=pl.FP32)
            b: pl.Tile[[6, 4], pl.FP32] = pl.tile.full([6, 4], dtype=pl.FP32, value=1.5)
            c: pl.Tile[[6, 4], pl.FP32] = pl.tile.add(a, b)
            out_1: pl.Tensor[[2, 3, 4], pl.FP32] = pl.tile.store(c, [0, 0, 0], out, [2, 3, 4])
            return out_1

    flatten(Before, Expected)


def test_b061_low_rank_create_is_kept_verbatim():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            a = pl.tile.create([16, 16], dtype=pl.FP32, target_memory=pl.Mem.Vec)
            out = pl.store(a, [0, 0], out)
            return out

    after = flatten(Before, Before)
    assert after.functions[0].body[0] is Before.functions[0].body[0]


def nd_assemble(offset: str, target: str = "[4, 8, 16]", source: str = "[2, 8, 16]") -> ir.Program:
    return pl.parse(f"""
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[{source}, pl.FP32], out: pl.Out[pl.Tensor[{target}, pl.FP32]]) -> pl.Tensor[{target}, pl.FP32]:
        acc = pl.tile.full({target}, dtype=pl.FP32, value=0.0)
        t = pl.load(x, [{", ".join("0" for _ in source.split(","))}], {source})
        acc2 = pl.tile.assemble(acc, t, {offset})
        out = pl.store(acc2, [{", ".join("0" for _ in target.split(","))}], out)
        return out
""")


@pytest.mark.parametrize(
    ("offset", "folded"), [("[2, 0, 0]", [16, 0]), ("[0, 0, 0]", [0, 0]), ("[1, 0, 0]", [8, 0])]
)
def test_b070_nd_assemble_offset_folds_to_row_and_column(offset, folded):
    after = flatten(nd_assemble(offset))
    asm = after.functions[0].body[2].value
    assert asm.op == "tile.assemble"
    assert [d.value for d in asm.args[2].elements] == folded
    assert [d.value for d in after.functions[0].body[2].var.type.shape] == [32, 16]


def test_b070_partial_leading_page_folds_with_inner_offsets():
    after = flatten(nd_assemble("[2, 4, 0]", source="[1, 4, 16]"))
    assert [d.value for d in after.functions[0].body[2].value.args[2].elements] == [20, 0]


def test_b071_2d_assemble_is_unchanged():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[8, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            acc = pl.tile.create([16, 16], dtype=pl.FP32)
            t = pl.load(x, [0, 0], [8, 16])
            acc2 = pl.tile.assemble(acc, t, [8, 0])
            out = pl.store(acc2, [0, 0], out)
            return out

    flatten(Before, Before, meaning=False)


def test_b012_d05_offset_rank_must_match_target():
    with pytest.raises(PassError, match=r"tile.assemble into a 3D tile has a rank-2 offset"):
        passes.flatten_tile_nd_to_2d()(nd_assemble("[0, 0]"))


def test_b012_d06_source_rank_must_match_target():
    src = """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32]) -> pl.Tensor[[8, 16], pl.FP32]:
        acc = pl.tile.create([4, 8, 16], dtype=pl.FP32)
        t = pl.load(x, [0, 0], [8, 16])
        acc2 = pl.tile.assemble(acc, t, [1, 0, 0])
        return x
"""
    with pytest.raises(PassError, match=r"rank-2 source \[8, 16\].*pl.tile.reshape"):
        passes.flatten_tile_nd_to_2d()(pl.parse(src))


def test_b012_d07_written_region_must_be_a_contiguous_row_band():
    with pytest.raises(PassError, match=r"\[2, 2, 16\] region into a \[2, 4, 16\] tile.*contiguous row band"):
        passes.flatten_tile_nd_to_2d()(nd_assemble("[0, 0, 0]", target="[2, 4, 16]", source="[2, 2, 16]"))


def test_b012_d07_is_reported_before_a_later_lowering_error():
    src = """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[2, 2, 16], pl.FP32], y: pl.Tensor[[12, 8], pl.FP32],
             out: pl.Out[pl.Tensor[[2, 2, 4, 8], pl.FP32]]) -> pl.Tensor[[2, 2, 4, 8], pl.FP32]:
        r = pl.load(y, [0, 0], [12, 8])
        out = pl.store(r, [0, 0, 0, 0], out)
        acc = pl.tile.create([2, 4, 16], dtype=pl.FP32)
        t = pl.load(x, [0, 0, 0], [2, 2, 16])
        acc2 = pl.tile.assemble(acc, t, [0, 0, 0])
        return out
"""
    with pytest.raises(PassError, match="contiguous row band"):
        passes.flatten_tile_nd_to_2d()(pl.parse(src))


def test_b012_d04_offset_must_be_a_literal_tuple():
    before = nd_assemble("[2, 0, 0]")
    fn = before.functions[0]
    stmt = fn.body[2]
    scalar = ir.Var("off", ir.TupleType((ir.ScalarType(ir.DataType.INDEX),) * 3))
    bad_call = replace(stmt.value, args=(*stmt.value.args[:2], scalar))
    body = (*fn.body[:2], replace(stmt, value=bad_call), *fn.body[3:])
    bad = replace(before, functions=(replace(fn, body=body),))
    with pytest.raises(PassError, match="requires a tile source and a literal offset tuple"):
        passes.flatten_tile_nd_to_2d()(bad)


@pytest.mark.parametrize(
    ("src_shape", "target", "flat"),
    [([16, 128], [2, 8, 128], [16, 128]), ([16, 128], [16, 1, 128], [16, 128]), ([16, 128], [4, 4, 128], [16, 128]),
     ([128, 16], [16, 8, 16], [128, 16]), ([16, 128], [2, 2, 4, 128], [16, 128])],
)  # fmt: skip
def test_b081_rank_raising_reshape_gets_a_2d_target(src_shape, target, flat):
    s = ", ".join(map(str, src_shape))
    t = ", ".join(map(str, target))
    zeros = ", ".join("0" for _ in target)
    src = f"""
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[{s}], pl.FP32], out: pl.Out[pl.Tensor[[{t}], pl.FP32]]) -> pl.Tensor[[{t}], pl.FP32]:
        a = pl.load(x, [0, 0], [{s}])
        b = pl.tile.reshape(a, [{t}])
        out = pl.store(b, [{zeros}], out)
        return out
"""
    after = flatten(pl.parse(src))
    reshape = after.functions[0].body[1]
    assert [d.value for d in reshape.value.args[1].elements] == flat
    assert [d.value for d in reshape.var.type.shape] == flat


def test_b081_reinterpret_view_with_shape_gets_a_2d_target():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, x: pl.Tensor[[4, 16], pl.FP32]) -> pl.Tensor[[4, 16], pl.FP32]:
            a = pl.load(x, [0, 0], [4, 16])
            b = pl.tile.reinterpret_view(a, shape=[4, 1, 16])
            c = pl.tile.exp(b)
            return x

    after = flatten(Before, meaning=False)
    assert "pl.tile.reinterpret_view(a, shape=[4, 16])" in python_print(after)
    assert [d.value for d in after.functions[0].body[2].var.type.shape] == [4, 16]


def test_b082_reinterpret_view_without_shape_is_rededuced_from_the_flat_source():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, x: pl.Tensor[[2, 3, 4], pl.FP32]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
            a = pl.load(x, [0, 0, 0], [2, 3, 4])
            b = pl.tile.reinterpret_view(a, pl.INT16)
            return x

    after = flatten(Before, meaning=False)
    b = after.functions[0].body[1]
    assert [d.value for d in b.var.type.shape] == [6, 8] and b.var.type.dtype is pl.INT16
