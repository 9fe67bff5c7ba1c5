"""tile.batch_matmul / tile.batch_matmul_acc per-batch unrolling (behaviours.md §L, §M: B-130..B-154)."""

from __future__ import annotations

import pytest

import pypto_egg.language as pl
from pypto_egg import passes
from pypto_egg.errors import PassError
from pypto_egg.ir import python_print
from pypto_egg.ir.expr import free_vars

from helpers import LEGACY_TRANSPOSE_BMM, NON_CONTIGUOUS_RHS_BMM, flatten


def assigns(program) -> list:
    return [s for s in program.functions[0].body if hasattr(s, "var")]


def ops(program) -> list[str]:
    return [s.value.op for s in assigns(program)]


def bmm_program(lhs: list[int], rhs: list[int], body: str, out: list[int], extra: str = "") -> pl.Program:
    fmt = lambda d: "[" + ", ".join(map(str, d)) + "]"  # noqa: E731
    zeros = lambda d: fmt([0] * len(d))  # noqa: E731
    lines = [
        f"ta = pl.load(a, {zeros(lhs)}, {fmt(lhs)})",
        f"tb = pl.load(b, {zeros(rhs)}, {fmt(rhs)})",
        *body.strip().splitlines(),
    ]
    text = "\n".join("        " + line for line in lines)
    return pl.parse(f"""
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[{fmt(lhs)}, pl.FP16], b: pl.Tensor[{fmt(rhs)}, pl.FP16], out: pl.Out[pl.Tensor[{fmt(out)}, pl.FP32]]{extra}) -> pl.Tensor[{fmt(out)}, pl.FP32]:
{text}
""")


def test_b135_pages_gather_in_a_vec_tile_when_no_store_follows():
    before = bmm_program(
        [2, 16, 32],
        [2, 32, 16],
        "c = pl.tile.batch_matmul(ta, tb)\ne = pl.tile.exp(c)\nout = pl.store(e, [0, 0, 0], out)\nreturn out",
        [2, 16, 16],
    )
    after = flatten(before)
    body = after.functions[0].body
    assert ops(after)[:4] == ["tensor.view", "tile.load", "tensor.view", "tile.load"]  # B-043: Mat loads
    assert ops(after)[4:] == ["tile.create", "tile.slice", "tile.slice", "tile.matmul", "tile.move", "tile.assemble",
                              "tile.slice", "tile.slice", "tile.matmul", "tile.move", "tile.assemble", "tile.exp",
                              "tile.store"]  # fmt: skip
    create = body[4]
    assert [d.value for d in create.value.args[0].elements] == [32, 16] and create.value.kwarg(
        "target_memory"
    ) is pl.Mem.Vec
    assembles = [s for s in assigns(after) if s.value.op == "tile.assemble"]
    assert [[d.value for d in s.value.args[2].elements] for s in assembles] == [[0, 0], [16, 0]]
    slices = [s for s in assigns(after) if s.value.op == "tile.slice"]
    assert [[d.value for d in s.value.args[2].elements] for s in slices] == [[0, 0], [0, 0], [16, 0], [32, 0]]
    assert all(s.var.type.memory is pl.Mem.Mat for s in slices)


def test_b136_a_following_store_becomes_one_store_per_page_with_its_kwargs():
    before = bmm_program(
        [3, 16, 32],
        [3, 32, 16],
        "c = pl.tile.batch_matmul(ta, tb)\nout = pl.store(c, [0, 0, 0], out, atomic=pl.AtomicType.Add)\nreturn out",
        [3, 16, 16],
    )
    after = flatten(before)
    stores = [s for s in assigns(after) if s.value.op == "tile.store"]
    assert len(stores) == 3 and "tile.move" not in ops(after)  # stores leave straight out of Acc
    assert [[d.value for d in s.value.args[1].elements] for s in stores] == [[0, 0, 0], [1, 0, 0], [2, 0, 0]]
    assert all([d.value for d in s.value.args[3].elements] == [1, 16, 16] for s in stores)
    assert all(s.value.kwarg("atomic") is pl.AtomicType.Add for s in stores)
    assert stores[1].value.args[2] is stores[0].var and stores[2].value.args[2] is stores[1].var
    assert after.functions[0].body[-1].values[0] is stores[-1].var


def test_b136_static_store_offsets_over_two_batch_axes_move_by_each_pages_digits():
    before = bmm_program(
        [2, 3, 16, 32],
        [2, 3, 32, 16],
        "c = pl.tile.batch_matmul(ta, tb)\nout = pl.store(c, [1, 2, 16, 0], out)\nreturn out",
        [3, 5, 32, 16],
    )
    after = flatten(before)
    stores = [s.value for s in assigns(after) if s.value.op == "tile.store"]
    offsets = [[d.value for d in c.args[1].elements] for c in stores]
    assert offsets == [[1 + i, 2 + j, 16, 0] for i in range(2) for j in range(3)]
    assert all([d.value for d in c.args[3].elements] == [1, 1, 16, 16] for c in stores)


def test_b136_a_dynamic_store_offset_moves_with_each_page_as_an_expression():
    before = bmm_program(
        [3, 16, 32],
        [3, 32, 16],
        "c = pl.tile.batch_matmul(ta, tb)\nout = pl.store(c, [k, 0, 0], out)\nreturn out",
        [6, 16, 16],
        extra=", k: pl.Scalar[pl.INDEX]",
    )
    after = flatten(before, scalars={"k": 2})
    stores = [s.value for s in assigns(after) if s.value.op == "tile.store"]
    firsts = [c.args[1].elements[0] for c in stores]
    assert [getattr(e, "name", None) for e in firsts[:1]] == ["k"]  # page 0 keeps the offset itself
    assert [(e.op, e.lhs.name, e.rhs.value) for e in firsts[1:]] == [("add", "k", 1), ("add", "k", 2)]
    assert all([d.value for d in c.args[1].elements[1:]] == [0, 0] for c in stores)


def test_b134_a_single_page_is_one_matmul_bound_to_the_result():
    before = bmm_program(
        [1, 16, 32],
        [1, 32, 16],
        "c = pl.tile.batch_matmul(ta, tb)\nd = pl.tile.move(c, target_memory=pl.Mem.Vec)\nout = pl.store(d, [0, 0, 0], out)\nreturn out",
        [1, 16, 16],
    )
    after = flatten(before)
    assert ops(after) == ["tensor.view", "tile.load", "tensor.view", "tile.load", "tile.slice", "tile.slice",
                          "tile.matmul", "tile.move", "tile.store"]  # fmt: skip
    mm = after.functions[0].body[6]
    assert mm.var.name == "c" and [d.value for d in mm.var.type.shape] == [16, 16]


def test_b137_a_broadcast_operand_reslices_its_single_page():
    before = bmm_program(
        [1, 16, 32],
        [2, 2, 32, 16],
        "c = pl.tile.batch_matmul(ta, tb)\nout = pl.store(c, [0, 0, 0, 0], out)\nreturn out",
        [2, 2, 16, 16],
    )
    after = flatten(before)
    slices = [s.value for s in assigns(after) if s.value.op == "tile.slice"]
    lhs = [[d.value for d in c.args[2].elements] for c in slices[0::2]]
    rhs = [[d.value for d in c.args[2].elements] for c in slices[1::2]]
    assert lhs == [[0, 0]] * 4 and rhs == [[0, 0], [32, 0], [64, 0], [96, 0]]
    stores = [s.value for s in assigns(after) if s.value.op == "tile.store"]
    assert [[d.value for d in c.args[1].elements] for c in stores] == [
        [0, 0, 0, 0],
        [0, 1, 0, 0],
        [1, 0, 0, 0],
        [1, 1, 0, 0],
    ]


def test_b137_a_transpose_view_operand_pages_by_columns():
    before = bmm_program(
        [2, 16, 32],
        [2, 16, 32],
        "bt = pl.tile.transpose_view(tb)\nc = pl.tile.batch_matmul(ta, bt)\nout = pl.store(c, [0, 0, 0], out)\nreturn out",
        [2, 16, 16],
    )
    after = flatten(before)
    view = next(s for s in assigns(after) if s.value.op == "tile.transpose_view")
    assert view.value.op == "tile.transpose_view" and [d.value for d in view.var.type.shape] == [32, 32]
    rhs_slices = [
        s.value for s in assigns(after) if s.value.op == "tile.slice" and s.value.args[0] is view.var
    ]
    assert [[d.value for d in c.args[2].elements] for c in rhs_slices] == [[0, 0], [0, 16]]
    assert all([d.value for d in c.args[1].elements] == [32, 16] for c in rhs_slices)


def test_b130_safe_batch_only_reshape_is_looked_through():
    before = bmm_program(
        [2, 16, 32],
        [1, 2, 32, 16],
        "r = pl.tile.reshape(ta, [1, 2, 16, 32])\nc = pl.tile.batch_matmul(r, tb)\nout = pl.store(c, [0, 0, 0, 0], out)\nreturn out",
        [1, 2, 16, 16],
    )
    after = flatten(before)
    lhs_slices = [s.value for s in assigns(after) if s.value.op == "tile.slice" and "lhs" in s.var.name]
    ta = next(s for s in assigns(after) if s.var.name == "ta")
    assert all(c.args[0] is ta.var for c in lhs_slices)
    assert "r" not in [s.var.name for s in assigns(after)]  # the batch-only reshape is dropped (B-080)
    assert ta.var.type.memory is pl.Mem.Mat  # and its source is a batch-matmul-only Mat load (B-113, B-043)


def test_b120_a_reshape_that_changes_the_inner_dims_is_not_looked_through():
    """B-120 is the rules' (operands.egg): [2, 32, 16] reshaped to [2, 16, 32] changes the matrix dims, so the matmul
    reads the reshape's (flattened) result, and the reshape stays."""
    before = bmm_program(
        [2, 32, 16],
        [2, 32, 16],
        "r = pl.tile.reshape(ta, [2, 16, 32])\nc = pl.tile.batch_matmul(r, tb)\nout = pl.store(c, [0, 0, 0], out)\nreturn out",
        [2, 16, 16],
    )
    after = flatten(before)
    r = next(s for s in assigns(after) if s.var.name == "r")
    lhs_slices = [s.value for s in assigns(after) if s.value.op == "tile.slice" and "lhs" in s.var.name]
    assert lhs_slices and all(c.args[0] is r.var for c in lhs_slices)
    assert r.value.op == "tile.reshape" and [d.value for d in r.var.type.shape] == [32, 32]


def test_b120_b130_a_chain_of_batch_regroupings_is_looked_through_to_its_source():
    """Two reshapes that only regroup batch axes, one after the other: the matmul reads the tile both were made
    from, and both reshapes are dropped."""
    before = bmm_program(
        [2, 16, 32],
        [1, 1, 2, 32, 16],
        "r1 = pl.tile.reshape(ta, [1, 2, 16, 32])\nr2 = pl.tile.reshape(r1, [1, 1, 2, 16, 32])\n"
        "c = pl.tile.batch_matmul(r2, tb)\nout = pl.store(c, [0, 0, 0, 0, 0], out)\nreturn out",
        [1, 1, 2, 16, 16],
    )
    after = flatten(before)
    ta = next(s for s in assigns(after) if s.var.name == "ta")
    lhs_slices = [s.value for s in assigns(after) if s.value.op == "tile.slice" and "lhs" in s.var.name]
    assert len(lhs_slices) == 2 and all(c.args[0] is ta.var for c in lhs_slices)
    assert not {"r1", "r2"} & {s.var.name for s in assigns(after)}


def test_b153_single_page_accumulator_forwards_init_cond():
    before = bmm_program([1, 16, 32], [1, 32, 16],
                         "acc = pl.tile.create([1, 16, 16], dtype=pl.FP32, target_memory=pl.Mem.Acc)\n"
                         "for k, (c,) in pl.range(2, init_values=(acc,)):\n"
                         "    d = pl.tile.batch_matmul_acc(c, ta, tb, k == 0)\n"
                         "    r = pl.yield_(d)\n"
                         "out = pl.store(r, [0, 0, 0], out)\nreturn out", [1, 16, 16])  # fmt: skip
    after = flatten(before)
    loop = next(s for s in after.functions[0].body if not hasattr(s, "var") and hasattr(s, "iter_args"))
    mm = loop.body[2].value
    assert mm.op == "tile.matmul_acc" and len(mm.args) == 4 and mm.args[0] is loop.iter_args[0].var
    assert [s.value.op for s in loop.body[:3]] == ["tile.slice", "tile.slice", "tile.matmul_acc"]


def test_b154_multi_page_accumulator_updates_row_windows():
    before = bmm_program([2, 8, 32], [2, 32, 16],
                         "acc = pl.tile.create([2, 8, 16], dtype=pl.FP32, target_memory=pl.Mem.Acc)\n"
                         "d = pl.tile.batch_matmul_acc(acc, ta, tb)\n"
                         "out = pl.store(d, [0, 0, 0], out)\nreturn out", [2, 8, 16])  # fmt: skip
    after = flatten(before)
    body = after.functions[0].body
    windows = [s.value for s in assigns(after) if s.var.name.startswith("acc_page_")]
    assert [[d.value for d in c.args[2].elements] for c in windows] == [[0, 0], [8, 0]]
    assert ops(after).count("tile.matmul_acc") == 2 and "tile.move" not in ops(after)
    assert [d.value for d in body[-2].value.args[3].elements] == [2, 8, 16]


def test_b132_batch_dims_must_broadcast():
    """The DSL checks the operands it sees; peeling the reshape reveals batch dims [4] against [2, 2]."""
    before = bmm_program(
        [4, 16, 32],
        [2, 2, 32, 16],
        "r = pl.tile.reshape(ta, [2, 2, 16, 32])\nc = pl.tile.batch_matmul(r, tb)\nreturn out",
        [2, 2, 16, 16],
    )
    with pytest.raises(PassError, match=r"tile.batch_matmul batch dimensions must broadcast.*4 and 2"):
        passes.flatten_tile_nd_to_2d()(before)


def test_b043_a_load_used_only_by_batched_matmuls_becomes_a_natural_mat_load():
    before = bmm_program(
        [2, 16, 32],
        [2, 32, 16],
        "c = pl.tile.batch_matmul(ta, tb)\nout = pl.store(c, [0, 0, 0], out)\nreturn out",
        [2, 16, 16],
    )
    after = flatten(before)
    body = assigns(after)
    assert body[0].value.op == "tensor.view" and body[0].var.name == "ta_view2d"
    load = body[1].value
    assert load.kwarg("target_memory") is pl.Mem.Mat and body[1].var.type.memory is pl.Mem.Mat
    assert [d.value for d in load.args[1].elements] == [0, 0] and [
        d.value for d in load.args[2].elements
    ] == [32, 32]


def test_b043_a_load_with_another_use_keeps_its_space():
    before = bmm_program(
        [2, 16, 32],
        [2, 32, 16],
        "c = pl.tile.batch_matmul(ta, tb)\nx = pl.tile.exp(ta)\nout = pl.store(c, [0, 0, 0], out)\nreturn out",
        [2, 16, 16],
    )
    after = flatten(before)
    ta = next(s for s in assigns(after) if s.var.name == "ta")
    assert ta.var.type.memory is None and ta.value.kwarg("target_memory") is None


def test_b138_b115_a_non_contiguous_operand_is_reloaded_per_batch_and_its_whole_load_dropped():
    """[2, K0<K, N] of [2, K, N] has gaps between batches: each page is re-loaded from a 2-D view."""
    after = flatten(pl.parse(NON_CONTIGUOUS_RHS_BMM))
    names = [s.var.name for s in assigns(after)]
    assert "tb" not in names and "tb_view2d" not in names  # the whole rhs load is dead
    reloads = [s for s in assigns(after) if s.var.name.startswith("rhs_pbload_")]
    assert [[d.value for d in s.value.args[1].elements] for s in reloads] == [[8, 0], [56, 0]]
    assert all([d.value for d in s.value.args[2].elements] == [32, 16] for s in reloads)
    views = [s for s in assigns(after) if s.var.name.startswith("rhs_pbview2d_")]
    assert [[d.value for d in s.value.args[1].elements] for s in views] == [[96, 16]] * 2
    assert any(s.var.name.startswith("lhs_slice_") for s in assigns(after))  # the contiguous lhs stays whole


def test_b138_static_reload_windows_over_two_batch_axes_fold_each_page_to_its_row():
    """[2, 2, 32, 16] at [0, 1, 8, 0] of [2, 3, 48, 16]: page (j0, j1) re-loads row ((j0 * 3) + 1 + j1) * 48 + 8."""
    src = """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[[2, 2, 16, 32], pl.FP16], b: pl.Tensor[[2, 3, 48, 16], pl.FP16],
             out: pl.Out[pl.Tensor[[2, 2, 16, 16], pl.FP32]]) -> pl.Tensor[[2, 2, 16, 16], pl.FP32]:
        ta = pl.load(a, [0, 0, 0, 0], [2, 2, 16, 32])
        tb = pl.load(b, [0, 1, 8, 0], [2, 2, 32, 16])
        c = pl.tile.batch_matmul(ta, tb)
        out = pl.store(c, [0, 0, 0, 0], out)
        return out
"""
    after = flatten(pl.parse(src))
    reloads = [s for s in assigns(after) if s.var.name.startswith("rhs_pbload_")]
    assert [[d.value for d in s.value.args[1].elements] for s in reloads] == [
        [56, 0],
        [104, 0],
        [200, 0],
        [248, 0],
    ]
    views = [s for s in assigns(after) if s.var.name.startswith("rhs_pbview2d_")]
    assert [[d.value for d in s.value.args[1].elements] for s in views] == [[288, 16]] * 4


def test_b138_a_dynamic_reload_offset_moves_with_each_page():
    """A per-batch re-load at a loop-dependent offset keeps the loop variable in each page's row."""
    src = """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[[2, 16, 32], pl.FP16], b: pl.Tensor[[2, 96, 16], pl.FP16],
             out: pl.Out[pl.Tensor[[2, 16, 16], pl.FP32]]) -> pl.Tensor[[2, 16, 16], pl.FP32]:
        ta = pl.load(a, [0, 0, 0], [2, 16, 32])
        for i in pl.range(2):
            tb = pl.load(b, [0, i * 32 + 8, 0], [2, 32, 16])
            c = pl.tile.batch_matmul(ta, tb)
            out = pl.store(c, [0, 0, 0], out)
        return out
"""
    after = flatten(pl.parse(src))
    text = python_print(after)
    assert text.count("rhs_pbload_") >= 2
    loop = next(s for s in after.functions[0].body if not hasattr(s, "var"))
    reloads = [s for s in loop.body if hasattr(s, "var") and s.var.name.startswith("rhs_pbload_")]
    rows = [s.value.args[1].elements[0] for s in reloads]
    assert len(rows) == 2 and all([v.name for v in free_vars(r)] == ["i"] for r in rows)
    assert rows[0] != rows[1]


def test_b116_operands_over_the_mat_budget_are_reloaded_per_batch():
    src = """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[[4, 128, 256], pl.FP32], b: pl.Tensor[[4, 256, 128], pl.FP32],
             out: pl.Out[pl.Tensor[[4, 128, 128], pl.FP32]]) -> pl.Tensor[[4, 128, 128], pl.FP32]:
        ta = pl.load(a, [0, 0, 0], [4, 128, 256])
        tb = pl.load(b, [0, 0, 0], [4, 256, 128])
        c = pl.tile.batch_matmul(ta, tb)
        out = pl.store(c, [0, 0, 0], out)
        return out
"""
    before = pl.parse(src)
    whole = passes.flatten_tile_nd_to_2d()(before)  # no backend: the capacity gate reports fit
    assert not any("pbload" in s.var.name for s in assigns(whole))
    per_batch = flatten(before, backend="Ascend910B", seeds=(0,))  # 2 x 512 KiB > 512 KiB of Mat
    assert sum("pbload" in s.var.name for s in assigns(per_batch)) == 8
    assert not any(s.var.name in ("ta", "tb") for s in assigns(per_batch))


def test_example3_single_page_matmul_and_matmul_acc_forward_init_cond():
    """behaviours.md §5.4 Example 3 (the reference's fully pinned output), from its tile-level Before."""

    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore, level=pl.Level.CHIP_DIE, role=pl.Role.SubWorker)
        def main_incore_0(
            h0: pl.Tensor[[16, 256], pl.BF16],
            w0: pl.Tensor[[1, 64, 256], pl.BF16],
            h1: pl.Tensor[[16, 256], pl.BF16],
            w1: pl.Tensor[[1, 64, 256], pl.BF16],
            k: pl.Scalar[pl.INDEX],
            out_0: pl.Out[pl.Tensor[[1, 16, 64], pl.FP32]],
        ) -> pl.Tensor[[1, 16, 64], pl.FP32]:
            h0_mat = pl.tile.load(
                h0,
                [0, 0],
                [16, 256],
                target_memory=pl.Mem.Mat,
                attrs={"__compiler_tensor_to_tile_mat_bridge": True},
            )
            w0_mat = pl.tile.load(
                w0,
                [0, 0, 0],
                [1, 64, 256],
                target_memory=pl.Mem.Mat,
                attrs={"__compiler_tensor_to_tile_mat_bridge": True},
            )
            w0_mat_t = pl.tile.transpose_view(w0_mat)
            acc__tile = pl.tile.batch_matmul(h0_mat, w0_mat_t)
            h1_mat = pl.tile.load(
                h1,
                [0, 0],
                [16, 256],
                target_memory=pl.Mem.Mat,
                attrs={"__compiler_tensor_to_tile_mat_bridge": True},
            )
            w1_mat = pl.tile.load(
                w1,
                [0, 0, 0],
                [1, 64, 256],
                target_memory=pl.Mem.Mat,
                attrs={"__compiler_tensor_to_tile_mat_bridge": True},
            )
            w1_mat_t = pl.tile.transpose_view(w1_mat)
            acc__tile_1 = pl.tile.batch_matmul_acc(acc__tile, h1_mat, w1_mat_t, k == 0)
            out_0__tile = pl.tile.store(acc__tile_1, [0, 0, 0], out_0)
            return out_0__tile

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore, level=pl.Level.CHIP_DIE, role=pl.Role.SubWorker)
        def main_incore_0(
            h0: pl.Tensor[[16, 256], pl.BF16],
            w0: pl.Tensor[[1, 64, 256], pl.BF16],
            h1: pl.Tensor[[16, 256], pl.BF16],
            w1: pl.Tensor[[1, 64, 256], pl.BF16],
            k: pl.Scalar[pl.INDEX],
            out_0: pl.Out[pl.Tensor[[1, 16, 64], pl.FP32]],
        ) -> pl.Tensor[[1, 16, 64], pl.FP32]:
            h0_mat: pl.Tile[[16, 256], pl.BF16, pl.Mem.Mat] = pl.tile.load(
                h0,
                [0, 0],
                [16, 256],
                [16, 256],
                target_memory=pl.Mem.Mat,
                attrs={"__compiler_tensor_to_tile_mat_bridge": True},
            )
            w0_mat_view2d: pl.Tensor[
                [64, 256], pl.BF16, pl.TensorView(stride=[256, 1], layout=pl.TensorLayout.ND)
            ] = pl.tensor.view(w0, [64, 256])
            w0_mat: pl.Tile[[64, 256], pl.BF16, pl.Mem.Mat] = pl.tile.load(
                w0_mat_view2d,
                [0, 0],
                [64, 256],
                [64, 256],
                target_memory=pl.Mem.Mat,
                attrs={"__compiler_tensor_to_tile_mat_bridge": True},
            )
            w0_mat_t: pl.Tile[
                [256, 64],
                pl.BF16,
                pl.Mem.Mat,
                pl.TileView(blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.col_major),
            ] = pl.tile.transpose_view(w0_mat)
            lhs_slice_0: pl.Tile[[16, 256], pl.BF16, pl.Mem.Mat] = pl.tile.slice(h0_mat, [16, 256], [0, 0])
            rhs_slice_0: pl.Tile[
                [256, 64],
                pl.BF16,
                pl.Mem.Mat,
                pl.TileView(blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.col_major),
            ] = pl.tile.slice(w0_mat_t, [256, 64], [0, 0])
            acc__tile: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(lhs_slice_0, rhs_slice_0)
            h1_mat: pl.Tile[[16, 256], pl.BF16, pl.Mem.Mat] = pl.tile.load(
                h1,
                [0, 0],
                [16, 256],
                [16, 256],
                target_memory=pl.Mem.Mat,
                attrs={"__compiler_tensor_to_tile_mat_bridge": True},
            )
            w1_mat_view2d: pl.Tensor[
                [64, 256], pl.BF16, pl.TensorView(stride=[256, 1], layout=pl.TensorLayout.ND)
            ] = pl.tensor.view(w1, [64, 256])
            w1_mat: pl.Tile[[64, 256], pl.BF16, pl.Mem.Mat] = pl.tile.load(
                w1_mat_view2d,
                [0, 0],
                [64, 256],
                [64, 256],
                target_memory=pl.Mem.Mat,
                attrs={"__compiler_tensor_to_tile_mat_bridge": True},
            )
            w1_mat_t: pl.Tile[
                [256, 64],
                pl.BF16,
                pl.Mem.Mat,
                pl.TileView(blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.col_major),
            ] = pl.tile.transpose_view(w1_mat)
            lhs_slice_0_1: pl.Tile[[16, 256], pl.BF16, pl.Mem.Mat] = pl.tile.slice(h1_mat, [16, 256], [0, 0])
            rhs_slice_0_1: pl.Tile[
                [256, 64],
                pl.BF16,
                pl.Mem.Mat,
                pl.TileView(blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.col_major),
            ] = pl.tile.slice(w1_mat_t, [256, 64], [0, 0])
            acc__tile_1: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(
                acc__tile, lhs_slice_0_1, rhs_slice_0_1, k == 0
            )
            out_0__tile: pl.Tensor[[1, 16, 64], pl.FP32] = pl.tile.store(
                acc__tile_1, [0, 0, 0], out_0, [1, 16, 64]
            )
            return out_0__tile

    flatten(Before, Expected, scalars={"k": 0})
    flatten(Before, scalars={"k": 1})


B150_BODIES = {
    "parameter": """
        d = pl.tile.batch_matmul_acc(acc, ta, tb)
        out = pl.store(d, [0, 0, 0], out)""",
    # the carry seeded by the parameter names its buffer, so it is never retyped either (rules/bmm.egg)
    "carried-through-a-loop": """
        for i, (c,) in pl.range(4, init_values=(acc,)):
            d = pl.tile.batch_matmul_acc(c, ta, tb)
            e = pl.yield_(d)
        out = pl.store(e, [0, 0, 0], out)""",
}


@pytest.mark.parametrize("body", B150_BODIES.values(), ids=B150_BODIES.keys())
def test_b150_an_nd_accumulator_parameter_is_refused(body):
    src = (
        """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, acc: pl.Tile[[2, 8, 16], pl.FP32, pl.Mem.Acc], a: pl.Tensor[[2, 8, 32], pl.FP16],
             b: pl.Tensor[[2, 32, 16], pl.FP16], out: pl.Out[pl.Tensor[[2, 8, 16], pl.FP32]]) -> pl.Tensor[[2, 8, 16], pl.FP32]:
        ta = pl.load(a, [0, 0, 0], [2, 8, 32])
        tb = pl.load(b, [0, 0, 0], [2, 32, 16])"""
        + body
        + """
        return out
"""
    )
    with pytest.raises(
        PassError, match=r"tile.batch_matmul_acc expects acc to be 2D after flatten, got rank 3.*variable 'd'"
    ):
        passes.flatten_tile_nd_to_2d()(pl.parse(src))


def _printed(program: pl.Program) -> str:
    from pypto_egg.ir.printer import python_print

    return python_print(program)


@pytest.mark.parametrize("axes", ["1, 2", "2, 1", "-1, -2", "-2, -1"])
def test_b100_a_legacy_transpose_feeding_only_batched_matmuls_is_dropped_for_its_view(axes: str):
    """B-100 (D-7 of docs/differences.md): the 3-operand tile.transpose is not materialised; the batched
    matmul reads its source through the zero-copy view, exactly as the canonical transpose_view form."""
    body = "c = pl.tile.batch_matmul(ta, bt)\nout = pl.store(c, [0, 0, 0], out)\nreturn out"
    legacy = bmm_program(
        [2, 16, 32], [2, 16, 32], f"bt = pl.tile.transpose(tb, {axes})\n" + body, [2, 16, 16]
    )
    view = bmm_program([2, 16, 32], [2, 16, 32], "bt = pl.tile.transpose_view(tb)\n" + body, [2, 16, 16])
    after = flatten(legacy)
    assert "tile.transpose" not in ops(after)  # no copy, no scratch
    assert _printed(after) == _printed(flatten(view))


def test_b100_a_legacy_transpose_with_another_use_is_materialised_and_paged_by_rows():
    """Not batch-matmul-only: the transpose is lowered per page (B-104) and the result is a plain operand."""
    before = bmm_program([2, 16, 32], [2, 16, 32],
                         "bt = pl.tile.transpose(tb, 1, 2)\nc = pl.tile.batch_matmul(ta, bt)\n"
                         "e = pl.tile.exp(bt)\nout = pl.store(c, [0, 0, 0], out)\nreturn out", [2, 16, 16])  # fmt: skip
    after = flatten(before)
    assert ops(after).count("tile.transpose") == 2 and "tile.transpose_view" not in ops(after)
    rhs = [s.value for s in assigns(after) if s.var.name.startswith("rhs_slice_")]
    assert [[d.value for d in c.args[2].elements] for c in rhs] == [[0, 0], [32, 0]]


def test_b100_a_legacy_transpose_of_a_2d_operand_is_its_view_broadcast_to_every_page():
    before = bmm_program([2, 16, 32], [16, 32],
                         "bt = pl.tile.transpose(tb, 0, 1)\nc = pl.tile.batch_matmul(ta, bt)\n"
                         "out = pl.store(c, [0, 0, 0], out)\nreturn out", [2, 16, 16])  # fmt: skip
    after = flatten(before)
    bt = next(s for s in assigns(after) if s.var.name == "bt")
    assert bt.value.op == "tile.transpose_view" and "tile.transpose" not in ops(after)
    rhs = [s.value for s in assigns(after) if s.var.name.startswith("rhs_slice_")]
    assert all(c.args[0] is bt.var and [d.value for d in c.args[2].elements] == [0, 0] for c in rhs)


def test_b100_b138_a_legacy_transpose_over_the_mat_budget_is_reloaded_with_a_view_per_batch():
    after = flatten(pl.parse(LEGACY_TRANSPOSE_BMM), backend="Ascend910B", seeds=(0,))
    names = [s.var.name for s in assigns(after)]
    assert not {"ta", "tb", "bt"} & set(names)  # the whole loads and the transpose are dead (B-115)
    assert sum(n.startswith("rhs_pbview_") for n in names) == 4 and "tile.transpose" not in ops(after)
    view_src = "bt = pl.tile.transpose_view(tb)"
    assert _printed(after) == _printed(
        flatten(
            pl.parse(LEGACY_TRANSPOSE_BMM.replace("bt = pl.tile.transpose(tb, 1, 2)", view_src)),
            backend="Ascend910B",
            seeds=(0,),
        )
    )


def _acc_program(lhs: list[int], rhs: list[int], acc: list[int], view: str = "tb") -> pl.Program:
    zeros = ", ".join("0" for _ in acc)
    body = ("bt = pl.tile.transpose_view(tb)\n" if view == "bt" else "") + (
        f"acc = pl.tile.create({acc}, dtype=pl.FP32, target_memory=pl.Mem.Acc)\n"
        f"d = pl.tile.batch_matmul_acc(acc, ta, {view})\nout = pl.store(d, [{zeros}], out)\nreturn out"
    )
    return bmm_program(lhs, rhs, body, acc)


def test_b151_accumulator_operands_page_a_transpose_view_by_columns():
    after = flatten(_acc_program([2, 16, 32], [2, 16, 32], [2, 16, 16], view="bt"))
    rhs = [s.value for s in assigns(after) if s.var.name.startswith("rhs_slice_")]
    assert [[d.value for d in c.args[2].elements] for c in rhs] == [[0, 0], [0, 16]]
    assert all(c.args[0].name == "bt" for c in rhs)


def test_b151_accumulator_operands_over_the_mat_budget_are_reloaded_per_batch():
    before = _acc_program([2, 64, 2048], [2, 2048, 64], [2, 64, 64])  # 2 x 512 KiB of FP16 > 512 KiB of Mat
    after = flatten(before, backend="Ascend910B", seeds=(0,))
    names = [s.var.name for s in assigns(after)]
    assert sum(n.startswith(("lhs_pbload_", "rhs_pbload_")) for n in names) == 4
    assert not {"ta", "tb"} & set(names)  # the whole loads are dead (B-115)


@pytest.mark.parametrize("side", ["lhs", "rhs"])
def test_b132_b151_d02_a_dynamic_operand_dim_names_the_operand_and_the_axis(side: str):
    src = """
import pypto_egg.language as pl
S = pl.dynamic("S")

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[[LHS], pl.FP16], b: pl.Tensor[[RHS], pl.FP16],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        ta = pl.load(a, [0, 0], [LHS])
        tb = pl.load(b, [0, 0], [RHS])
        acc = pl.tile.create([16, 16], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        d = pl.tile.batch_matmul_acc(acc, ta, tb)
        out = pl.store(d, [0, 0], out)
        return out
"""
    lhs, rhs = ("16, S", "S, 16") if side == "lhs" else ("16, 32", "32, S")
    before = pl.parse(src.replace("LHS", lhs).replace("RHS", rhs))
    with pytest.raises(
        PassError, match=rf"dynamic \(non-constant\) dimension in tile.batch_matmul_acc {side} dim 1.*'d'"
    ):
        passes.flatten_tile_nd_to_2d()(before)


def test_b152_a_dynamic_accumulator_is_rejected_with_its_shape():
    src = """
import pypto_egg.language as pl
S = pl.dynamic("S")

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16],
             out: pl.Out[pl.Tensor[[S, 16], pl.FP32]]) -> pl.Tensor[[S, 16], pl.FP32]:
        ta = pl.load(a, [0, 0], [16, 32])
        tb = pl.load(b, [0, 0], [32, 16])
        acc = pl.tile.create([S, 16], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        d = pl.tile.batch_matmul_acc(acc, ta, tb)
        out = pl.store(d, [0, 0], out)
        return out
"""
    with pytest.raises(
        PassError, match=r"batch_matmul_acc expects static acc dims after flatten.*\[S, 16\].*'d'"
    ):
        passes.flatten_tile_nd_to_2d()(pl.parse(src))


def test_b152_the_accumulator_is_the_broadcast_result_in_the_dsl():
    """The row / column checks of B-152 are guaranteed by the op's type deduction (the accumulator is written
    in place), so a mismatch is reported where the program is written."""
    with pytest.raises(
        pl.DSLError, match=r"acc \[2, 8, 16\] differs from the broadcast result \[4, 8, 16\] at axis 0"
    ):
        bmm_program([4, 8, 32], [4, 32, 16],
                    "acc = pl.tile.create([2, 8, 16], dtype=pl.FP32, target_memory=pl.Mem.Acc)\n"
                    "d = pl.tile.batch_matmul_acc(acc, ta, tb)\nout = pl.store(d, [0, 0, 0], out)\nreturn out",
                    [2, 8, 16])  # fmt: skip


def test_b134_two_dimensional_operands_are_one_page():
    after = flatten(_acc_program([16, 32], [32, 16], [16, 16]))
    mm = next(s.value for s in assigns(after) if s.value.op == "tile.matmul_acc")
    assert mm.args[0].name == "acc" and len(mm.args) == 3
