"""Batched accumulators pack along columns (behaviours.md §N: B-139, B-155, B-170..B-175, D-30)."""

from __future__ import annotations

import pytest
from test_flatten_batch_matmul import assigns, bmm_program

from pypto_egg import passes
from pypto_egg.errors import PassError

from helpers import flatten


def acc_loop(
    b: int,
    m: int,
    n: int,
    k: int = 32,
    dtype: str = "pl.FP32",
    drain: str = "out = pl.store(r, [0, 0, 0], out)",
):
    return bmm_program([b, m, k], [b, k, n],
                       f"acc = pl.tile.create([{b}, {m}, {n}], dtype={dtype}, target_memory=pl.Mem.Acc)\n"
                       "for i, (c,) in pl.range(2, init_values=(acc,)):\n"
                       "    d = pl.tile.batch_matmul_acc(c, ta, tb, i == 0)\n"
                       "    r = pl.yield_(d)\n"
                       f"{drain}\nreturn out", [b, m, n])  # fmt: skip


def test_b155_b175_a_created_accumulator_packs_columns_and_drains_page_by_page():
    after = flatten(acc_loop(2, 16, 64))
    body = after.functions[0].body
    create = next(s for s in assigns(after) if s.value.op == "tile.create")
    assert [d.value for d in create.value.args[0].elements] == [16, 128] and create.value.kwarg(
        "target_memory"
    ).value == "Acc"
    loop = next(s for s in body if hasattr(s, "iter_args"))
    assert [d.value for d in loop.iter_args[0].var.type.shape] == [16, 128]  # one carry, packed (B-173)
    windows = [
        s.value
        for s in loop.body
        if getattr(s, "var", None) is not None and s.var.name.startswith("acc_page_")
    ]
    assert [[d.value for d in w.args[2].elements] for w in windows] == [[0, 0], [0, 64]]
    accs = [
        s.value for s in loop.body if getattr(s, "var", None) is not None and s.value.op == "tile.matmul_acc"
    ]
    assert all(len(c.args) == 4 for c in accs)  # every page carries the predicate
    asm = [
        s.value for s in loop.body if getattr(s, "var", None) is not None and s.value.op == "tile.assemble"
    ]
    assert all(
        a.args[2] is w.args[2] for a, w in zip(asm, windows)
    )  # one offset tuple for window and writeback
    drains = [s for s in assigns(after) if s.var.name.startswith("acc_drain_")]
    stores = [s.value for s in assigns(after) if s.value.op == "tile.store"]
    assert [[d.value for d in d.value.args[2].elements] for d in drains] == [[0, 0], [0, 64]]
    assert [[d.value for d in s.args[1].elements] for s in stores] == [[0, 0, 0], [1, 0, 0]]
    assert all([d.value for d in s.args[3].elements] == [1, 16, 64] for s in stores)
    assert "tile.move" not in [s.value.op for s in assigns(after)]


def test_b139_a_batch_matmul_root_writes_its_pages_into_one_acc_tile():
    before = bmm_program([2, 16, 32], [2, 32, 64],
                         "c = pl.tile.batch_matmul(ta, tb)\n"
                         "d = pl.tile.batch_matmul_acc(c, ta, tb)\n"
                         "out = pl.store(d, [0, 0, 0], out)\nreturn out", [2, 16, 64])  # fmt: skip
    after = flatten(before)
    ops = [s.value.op for s in assigns(after)]
    assert "tile.matmul" not in ops and "tile.move" not in ops
    create = next(s for s in assigns(after) if s.value.op == "tile.create")
    assert [d.value for d in create.value.args[0].elements] == [16, 128]
    first = [s.value for s in assigns(after) if s.value.op == "tile.matmul_acc"][:2]
    assert all(c.args[3].value is True for c in first)  # init_cond=True: a plain matmul into the window


def test_b174_narrow_unaligned_pages_stay_row_packed():
    after = flatten(acc_loop(2, 8, 16))
    create = next(s for s in assigns(after) if s.value.op == "tile.create")
    assert [d.value for d in create.value.args[0].elements] == [16, 16]
    loop = next(s for s in after.functions[0].body if hasattr(s, "iter_args"))
    windows = [
        s.value
        for s in loop.body
        if getattr(s, "var", None) is not None and s.var.name.startswith("acc_page_")
    ]
    assert [[d.value for d in w.args[2].elements] for w in windows] == [[0, 0], [8, 0]]


def test_d30_a_wide_unaligned_page_is_rejected_with_the_packing_rationale():
    with pytest.raises(PassError) as info:
        passes.flatten_tile_nd_to_2d()(acc_loop(2, 16, 24))
    text = str(info.value)
    assert text.startswith("tile.batch_matmul_acc: cannot lower a batch-2 accumulator of 16x24 FP32 pages, because "
                           "the page column extent N=24 is not a multiple of 16.")  # fmt: skip
    assert "one 16x48 Acc (L0C) tile with page b at tile.slice(acc, [16, 24], [0, b * 24])" in text
    assert "Workarounds: write the batch loop out in the kernel" in text


def test_d30_r20_a_move_drain_is_rejected_without_the_geometry_paragraph():
    before = acc_loop(
        2, 16, 64, drain="v = pl.tile.move(r, target_memory=pl.Mem.Vec)\nout = pl.store(v, [0, 0, 0], out)"
    )
    with pytest.raises(PassError) as info:
        passes.flatten_tile_nd_to_2d()(before)
    text = str(info.value)
    assert "drained by tile.move into a vector epilogue" in text and "packed along COLUMNS" not in text
    assert "Workaround: store each batch page to global memory" in text


def test_d30_a_batch_matmul_rooted_chain_is_rejected_even_when_narrow():
    before = bmm_program([2, 8, 32], [2, 32, 16],
                         "c = pl.tile.batch_matmul(ta, tb)\nd = pl.tile.batch_matmul_acc(c, ta, tb)\n"
                         "out = pl.store(d, [0, 0, 0], out)\nreturn out", [2, 8, 16])  # fmt: skip
    with pytest.raises(
        PassError, match=r"batch-2 accumulator of 8x16 FP32 pages, because the page row extent M=8"
    ):
        passes.flatten_tile_nd_to_2d()(before)


def test_d30_r16_an_accumulator_loaded_from_memory_is_rejected():
    src = """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[[2, 16, 32], pl.FP16], b: pl.Tensor[[2, 32, 64], pl.FP16], z: pl.Tensor[[2, 16, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[2, 16, 64], pl.FP32]]) -> pl.Tensor[[2, 16, 64], pl.FP32]:
        ta = pl.load(a, [0, 0, 0], [2, 16, 32])
        tb = pl.load(b, [0, 0, 0], [2, 32, 64])
        acc = pl.load(z, [0, 0, 0], [2, 16, 64])
        d = pl.tile.batch_matmul_acc(acc, ta, tb)
        out = pl.store(d, [0, 0, 0], out)
        return out
"""
    import pypto_egg.language as pl

    with pytest.raises(
        PassError,
        match=r"(?s)produced by tile.load, which cannot write Acc \(L0C\) at all.*Workaround: an accumulator has to "
        r"come from a matmul",
    ):
        passes.flatten_tile_nd_to_2d()(pl.parse(src))


def test_d30_r7_the_packed_tile_must_fit_the_backends_l0c():
    before = acc_loop(8, 64, 128, k=16)  # 8 * 64 * 128 * 4 = 262,144 bytes
    with pytest.raises(
        PassError, match=r"needs 262144 bytes of Acc \(L0C\), but this target's L0C holds 131072 bytes"
    ):
        passes.flatten_tile_nd_to_2d(backend="Ascend910B")(before)
    after = flatten(before, backend="Ascend950", seeds=(0,))  # 256 KiB of L0C
    create = next(s for s in assigns(after) if s.value.op == "tile.create")
    assert [d.value for d in create.value.args[0].elements] == [64, 1024]


def test_d30_r3_two_allocations_merged_by_control_flow_are_rejected():
    before = bmm_program([2, 16, 32], [2, 32, 64],
                         "if k == 0:\n"
                         "    a1 = pl.tile.create([2, 16, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)\n"
                         "    r = pl.yield_(a1)\n"
                         "else:\n"
                         "    a2 = pl.tile.create([2, 16, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)\n"
                         "    r = pl.yield_(a2)\n"
                         "d = pl.tile.batch_matmul_acc(r, ta, tb)\n"
                         "out = pl.store(d, [0, 0, 0], out)\nreturn out", [2, 16, 64], extra=", k: pl.Scalar[pl.INDEX]")  # fmt: skip
    with pytest.raises(
        PassError, match=r"(?s)allocated by several separate definitions.*hoist the tile.create"
    ):
        passes.flatten_tile_nd_to_2d()(before)


def test_d30_r21_an_accumulator_read_as_one_flat_tile_is_rejected():
    before = bmm_program([2, 16, 32], [2, 32, 64],
                         "acc = pl.tile.create([2, 16, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)\n"
                         "d = pl.tile.batch_matmul_acc(acc, ta, tb)\n"
                         "e = pl.tile.exp(d)\n"
                         "out = pl.store(e, [0, 0, 0], out)\nreturn out", [2, 16, 64])  # fmt: skip
    with pytest.raises(PassError, match=r"consumed by an op that reads it as one flat tile"):
        passes.flatten_tile_nd_to_2d()(before)


def _one_call(
    acc_def: str, after: str = "out = pl.store(d, [0, 0, 0], out)", extra: str = "", out=(2, 16, 64)
):
    return bmm_program([2, 16, 32], [2, 32, 64], f"{acc_def}\nd = pl.tile.batch_matmul_acc(acc, ta, tb)\n{after}\n"
                       "return out", list(out), extra=extra)  # fmt: skip


CREATE = "acc = pl.tile.create([2, 16, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)"
ACC_T = "pl.Tile[[2, 16, 64], pl.FP32, pl.Mem.Acc]"


@pytest.mark.parametrize(
    ("case", "before", "reason"),
    [
        (
            "R2",
            lambda: bmm_program(
                [2, 16, 32],
                [2, 32, 64],
                f"{CREATE}\nd = pl.tile.batch_matmul_acc(acc, ta, tb)\n"
                "e: pl.Tile[[4, 8, 64], pl.FP32, pl.Mem.Acc] = d\n"
                "f = pl.tile.batch_matmul_acc(e, xa, xb)\nout = pl.store(f, [0, 0, 0], out)\nreturn out",
                [4, 8, 64],
                extra=", xa: pl.Tile[[4, 8, 32], pl.FP16], xb: pl.Tile[[4, 32, 64], pl.FP16]",
            ),
            "the same accumulator is written by two tile.batch_matmul_acc calls with different batch geometries",
        ),
        (
            "R9",
            lambda: _one_call("", extra=f", acc: {ACC_T}"),
            "the accumulator reaches a function parameter or a control-flow carry this pass cannot retype",
        ),
        (
            "R10",
            lambda: _one_call(
                CREATE,
                "e: pl.Tile[[32, 64], pl.FP32, pl.Mem.Acc] = d\nout = pl.store(e, [0, 0], out)",
                out=(32, 64),
            ),
            "an SSA name for the accumulator does not carry its 3-D shape, so the chain is not one buffer",
        ),
        (
            "R11",
            lambda: _one_call(
                CREATE,
                "e: pl.Tile[[2, 16, 64], pl.FP32, pl.Mem.Acc, pl.TileView(valid_shape=[2, 8, 64])]"
                " = d\nout = pl.store(e, [0, 0, 0], out)",
            ),
            "the accumulator carries a partial valid_shape",
        ),
        (
            "R13",
            lambda: _one_call("acc = pl.tile.create([2, 16, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)"),
            "the accumulator is annotated to live in Vec memory, but only the matrix unit writes Acc (L0C)",
        ),
        (
            "R19",
            lambda: _one_call(CREATE, "out = pl.store(d, [0, 0, 0], out, [2, 16, 64])"),
            "stored through a tile.store whose window this pass cannot split into one store per batch page",
        ),
    ],
)
def test_d30_each_chain_rejection_names_its_reason_and_the_packing_rationale(case, before, reason):
    """behaviours.md §3.5 D-30, R2 and R9..R19: a 64-column chain cannot fall back to row packing, so every
    failing check is fatal; the message names the page geometry, the reason and the column-packing rationale."""
    with pytest.raises(PassError) as info:
        passes.flatten_tile_nd_to_2d()(before())
    text = str(info.value)
    assert text.startswith(
        "tile.batch_matmul_acc: cannot lower a batch-2 accumulator of 16x64 FP32 pages, because "
    )
    assert reason in text and "one 16x128 Acc (L0C) tile" in text
    assert "variable 'd'" in text
