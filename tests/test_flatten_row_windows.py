"""Logical 2-D accumulator row windows (behaviours.md §O: B-180..B-184, D-40, D-41)."""

from __future__ import annotations

import pytest

import pypto_egg.language as pl
from pypto_egg import passes
from pypto_egg.errors import PassError

from helpers import flatten


def windows(
    acc: list[int], win: list[int], off: list[int], back: list[int] | None = None, store: str = "[0, 0]"
):
    return pl.parse(_source(acc, win, off, back, store))


def _source(
    acc: list[int], win: list[int], off: list[int], back: list[int] | None = None, store: str = "[0, 0]"
) -> str:
    back = back or off
    return f"""
import pypto_egg.language as pl

@pl.program
class Before:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tile[[{win[0]}, 64], pl.FP16, pl.Mem.Mat], b: pl.Tile[[64, {win[1]}], pl.FP16, pl.Mem.Mat],
             out: pl.Out[pl.Tensor[{acc}, pl.FP32]]) -> pl.Tensor[{acc}, pl.FP32]:
        acc = pl.tile.create({acc}, pl.FP32)
        win = pl.tile.slice(acc, {win}, {off})
        part = pl.tile.matmul_acc(win, a, b, init_cond=True)
        acc_updated = pl.tile.assemble(acc, part, {back})
        result = pl.tile.store(acc_updated, {store}, out)
        return result
"""


def test_example4_row_windows_pack_columns_and_restore_store_rows():
    """behaviours.md §5.4 Example 4, verbatim."""

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, a: pl.Tile[[16, 64], pl.FP16, pl.Mem.Mat], b: pl.Tile[[64, 32], pl.FP16, pl.Mem.Mat],
                 out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:  # fmt: skip
            acc = pl.tile.create([16, 64], pl.FP32, target_memory=pl.Mem.Acc)
            win = pl.tile.slice(acc, [16, 32], [0, 32])
            part = pl.tile.matmul_acc(win, a, b, init_cond=True)
            acc_updated = pl.tile.assemble(acc, part, [0, 32])
            page0 = pl.tile.slice(acc_updated, [16, 32], [0, 0])
            out0 = pl.tile.store(page0, [0, 0], out)
            page1 = pl.tile.slice(acc_updated, [16, 32], [0, 32])
            out1 = pl.tile.store(page1, [16, 0], out0)
            return out1

    flatten(windows([32, 32], [16, 32], [16, 0]), Expected)


def test_b183_row_offsets_fold_into_packed_columns():
    after = flatten(windows([64, 32], [16, 32], [32, 0]))
    win = next(
        s.value
        for s in after.functions[0].body
        if getattr(s, "var", None) is not None and s.var.name == "win"
    )
    assert [d.value for d in win.args[2].elements] == [0, 64]
    stores = [
        s.value
        for s in after.functions[0].body
        if getattr(s, "var", None) is not None and s.value.op == "tile.store"
    ]
    assert [[d.value for d in c.args[1].elements] for c in stores] == [[0, 0], [16, 0], [32, 0], [48, 0]]


@pytest.mark.parametrize(("win", "off"), [([16, 16], [16, 0]), ([16, 8], [16, 8]), ([16, 16], [16, 16])])
def test_b180_windows_the_mad_can_address_are_left_alone(win, off):
    before = windows([32, 32], win, off)
    flatten(before, before)


def test_d40_window_rows_must_divide_the_parent():
    with pytest.raises(
        PassError, match=r"row windows must evenly divide the parent row extent; got 16 rows in a 40-row"
    ):
        passes.flatten_tile_nd_to_2d()(windows([40, 32], [16, 32], [16, 0]))


def test_d41_a_misaligned_window_is_rejected():
    with pytest.raises(
        PassError,
        match=r"(?s)cannot lower the shared accumulator's row slices because a row window does "
        r"not have the common static row extent and an aligned row offset.*equal-size",
    ):
        passes.flatten_tile_nd_to_2d()(windows([48, 32], [16, 32], [8, 0]))


def test_d41_a_writeback_to_another_window_is_rejected():
    with pytest.raises(PassError, match=r"does not write a matmul_acc result back to its original window"):
        passes.flatten_tile_nd_to_2d()(windows([32, 32], [16, 32], [16, 0], back=[0, 0]))


def test_d41_windows_of_different_heights_name_both_heights():
    before = pl.parse("""
import pypto_egg.language as pl

@pl.program
class Before:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tile[[16, 64], pl.FP16, pl.Mem.Mat], c: pl.Tile[[32, 64], pl.FP16, pl.Mem.Mat],
             b: pl.Tile[[64, 32], pl.FP16, pl.Mem.Mat], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        acc = pl.tile.create([64, 32], pl.FP32)
        w0 = pl.tile.slice(acc, [16, 32], [0, 0])
        p0 = pl.tile.matmul_acc(w0, a, b, init_cond=True)
        acc1 = pl.tile.assemble(acc, p0, [0, 0])
        w1 = pl.tile.slice(acc1, [32, 32], [32, 0])
        p1 = pl.tile.matmul_acc(w1, c, b, init_cond=True)
        acc2 = pl.tile.assemble(acc1, p1, [32, 0])
        result = pl.tile.store(acc2, [0, 0], out)
        return result
""")
    with pytest.raises(
        PassError, match=r"row windows of different heights \((16 rows here, 32|32 rows here, 16) rows in"
    ):
        passes.flatten_tile_nd_to_2d()(before)


def test_d41_packed_windows_over_the_l0c_budget_name_bytes_and_budget():
    with pytest.raises(
        PassError,
        match=r"the 4 packed 64x256 row windows need 262144 bytes of Acc \(L0C\), but this target's L0C holds 131072",
    ):
        passes.flatten_tile_nd_to_2d(backend="Ascend910B")(windows([256, 256], [64, 256], [64, 0]))


def test_d41_r12_an_explicit_memref_on_the_parent_is_rejected():
    before = pl.parse(
        _source([32, 32], [16, 32], [16, 0]).replace(
            "acc = pl.tile.create(",
            'acc: pl.Tile[[32, 32], pl.FP32, pl.MemRef("mem_acc_0", 0, 4096)] = pl.tile.create(',
        )
    )
    with pytest.raises(
        PassError, match=r"has an explicitly bound MemRef whose physical layout cannot be repacked"
    ):
        passes.flatten_tile_nd_to_2d()(before)


def test_d41_r15_a_parent_that_is_not_created_names_its_producer():
    before = pl.parse(
        _source([32, 32], [16, 32], [16, 0])
        .replace("out: pl.Out", "z: pl.Tensor[[32, 32], pl.FP32], out: pl.Out")
        .replace("acc = pl.tile.create([32, 32], pl.FP32)", "acc = pl.load(z, [0, 0], [32, 32])")
    )
    with pytest.raises(
        PassError, match=r"the parent accumulator is produced by tile.load; row-window packing"
    ):
        passes.flatten_tile_nd_to_2d()(before)


def test_d41_r9_a_parent_parameter_is_rejected():
    before = pl.parse(
        _source([32, 32], [16, 32], [16, 0])
        .replace("out: pl.Out", "acc: pl.Tile[[32, 32], pl.FP32], out: pl.Out")
        .replace("        acc = pl.tile.create([32, 32], pl.FP32)\n", "")
    )
    with pytest.raises(PassError, match=r"reaches a function parameter or a control-flow carry"):
        passes.flatten_tile_nd_to_2d()(before)
