"""tile.load (behaviours.md §D: B-040..B-045, without B-043)."""

from __future__ import annotations

import pypto_egg.language as pl
from pypto_egg.ir import python_print

from helpers import flatten

S = pl.dynamic("S")


def test_b004_low_rank_program_is_unchanged():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, a: pl.Tensor[[32, 64], pl.FP32], b: pl.Tensor[[64], pl.FP32],
                 out_a: pl.Out[pl.Tensor[[32, 64], pl.FP32]], out_b: pl.Out[pl.Tensor[[64], pl.FP32]]
                 ) -> tuple[pl.Tensor[[32, 64], pl.FP32], pl.Tensor[[64], pl.FP32]]:  # fmt: skip
            ta = pl.load(a, [0, 0], [32, 64])
            tb = pl.load(b, [0], [64])
            sa = pl.tile.add(ta, ta)
            sb = pl.tile.exp(tb)
            out_a = pl.store(sa, [0, 0], out_a)
            out_b = pl.store(sb, [0], out_b)
            return out_a, out_b

    flatten(Before, Before)


def test_b041_vec_load_result_is_2d_and_keeps_tensor_rank_window():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[4, 3, 8], pl.FP16], out: pl.Out[pl.Tensor[[4, 3, 8], pl.FP16]]
        ) -> pl.Tensor[[4, 3, 8], pl.FP16]:
            t: pl.Tile[[2, 3, 8], pl.FP16, pl.Mem.Vec] = pl.load(
                x, [2, 0, 0], [2, 3, 8], target_memory=pl.Mem.Vec
            )
            u = pl.tile.exp(t)
            out = pl.store(u, [0, 0, 0], out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[4, 3, 8], pl.FP16], out: pl.Out[pl.Tensor[[4, 3, 8], pl.FP16]]
        ) -> pl.Tensor[[4, 3, 8], pl.FP16]:
            t: pl.Tile[[6, 8], pl.FP16, pl.Mem.Vec] = pl.tile.load(
                x, [2, 0, 0], [2, 3, 8], [2, 3, 8], target_memory=pl.Mem.Vec
            )
            u: pl.Tile[[6, 8], pl.FP16, pl.Mem.Vec] = pl.tile.exp(t)
            out_1: pl.Tensor[[4, 3, 8], pl.FP16] = pl.tile.store(u, [0, 0, 0], out, [2, 3, 8])
            return out_1

    flatten(Before, Expected)


def test_b041_static_partial_valid_flattens_without_widening():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[4, 16, 512], pl.FP32], out: pl.Out[pl.Tensor[[4, 16, 512], pl.FP32]]
        ) -> pl.Tensor[[4, 16, 512], pl.FP32]:
            t = pl.load(x, [1, 0, 0], [1, 16, 512], valid_shape=[1, 10, 512])
            out = pl.store(t, [1, 0, 0], out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[4, 16, 512], pl.FP32], out: pl.Out[pl.Tensor[[4, 16, 512], pl.FP32]]
        ) -> pl.Tensor[[4, 16, 512], pl.FP32]:
            t: pl.Tile[[16, 512], pl.FP32, pl.TileView(valid_shape=[10, 512])] = pl.tile.load(
                x, [1, 0, 0], [1, 16, 512], [1, 10, 512]
            )
            out_1: pl.Tensor[[4, 16, 512], pl.FP32] = pl.tile.store(t, [1, 0, 0], out, [1, 10, 512])
            return out_1

    flatten(Before, Expected)


def test_b191_dynamic_valid_shape_survives_the_merge():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[1, S, 512], pl.BF16], out: pl.Out[pl.Tensor[[1, S, 512], pl.BF16]]
        ) -> pl.Tensor[[1, S, 512], pl.BF16]:
            t = pl.load(x, [0, 0, 0], [1, 16, 512], valid_shape=[1, S, 512])
            out = pl.store(t, [0, 0, 0], out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[1, S, 512], pl.BF16], out: pl.Out[pl.Tensor[[1, S, 512], pl.BF16]]
        ) -> pl.Tensor[[1, S, 512], pl.BF16]:
            t: pl.Tile[[16, 512], pl.BF16, pl.TileView(valid_shape=[S, 512])] = pl.tile.load(
                x, [0, 0, 0], [1, 16, 512], [1, S, 512]
            )
            out_1: pl.Tensor[[1, S, 512], pl.BF16] = pl.tile.store(t, [0, 0, 0], out, [1, S, 512])
            return out_1

    flatten(Before, Expected, dyn={"S": 11})


def test_b191_constant_leading_valid_factors_multiply_the_dynamic_row():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[2, 16, 512], pl.BF16], n: pl.Scalar[pl.INDEX]
        ) -> pl.Tensor[[2, 16, 512], pl.BF16]:
            t = pl.load(x, [0, 0, 0], [2, 16, 512], valid_shape=[2, n, 512])
            u = pl.tile.exp(t)
            return x

    after = flatten(Before, meaning=False)
    t_type = after.functions[0].body[0].var.type
    assert pl.parse(python_print(after)) is not None
    assert "valid_shape=[pl.const(2, pl.INDEX) * n, 512]" in python_print(after)  # as PyPTO prints a type
    assert [d.value for d in t_type.shape] == [32, 512]


def test_b042_natural_mat_load_materialises_a_2d_tensor_view():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[2, 16, 128], pl.FP16], out: pl.Out[pl.Tensor[[16, 128], pl.FP16]]
        ) -> pl.Tensor[[16, 128], pl.FP16]:
            t = pl.tile.load(x, [1, 0, 0], [1, 16, 128], target_memory=pl.Mem.Mat)
            v = pl.tile.move(t, target_memory=pl.Mem.Vec)
            out = pl.store(v, [0, 0], out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[2, 16, 128], pl.FP16], out: pl.Out[pl.Tensor[[16, 128], pl.FP16]]
        ) -> pl.Tensor[[16, 128], pl.FP16]:
            x_2d: pl.Tensor[[32, 128], pl.FP16, pl.TensorView(stride=[128, 1], layout=pl.TensorLayout.ND)] = (
                pl.tensor.view(x, [32, 128])
            )
            t: pl.Tile[[16, 128], pl.FP16, pl.Mem.Mat] = pl.tile.load(
                x_2d, [16, 0], [16, 128], [16, 128], target_memory=pl.Mem.Mat
            )
            v: pl.Tile[[16, 128], pl.FP16, pl.Mem.Vec] = pl.tile.move(t, target_memory=pl.Mem.Vec)
            out_1: pl.Tensor[[16, 128], pl.FP16] = pl.tile.store(v, [0, 0], out)
            return out_1

    after = flatten(Before, Expected)
    assert after.functions[0].body[0].var.name == "t_view2d"  # B-030


def test_b041_transposed_mat_load_keeps_its_view_and_window():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, x: pl.Tensor[[2, 16, 128], pl.FP16]) -> pl.Tensor[[2, 16, 128], pl.FP16]:
            t: pl.Tile[
                [2, 16, 128],
                pl.FP16,
                pl.Mem.Mat,
                pl.TileView(blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.col_major),
            ] = pl.tile.load(x, [0, 0, 0], [2, 16, 128], target_memory=pl.Mem.Mat)
            return x

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, x: pl.Tensor[[2, 16, 128], pl.FP16]) -> pl.Tensor[[2, 16, 128], pl.FP16]:
            t: pl.Tile[
                [32, 128],
                pl.FP16,
                pl.Mem.Mat,
                pl.TileView(blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.col_major),
            ] = pl.tile.load(x, [0, 0, 0], [2, 16, 128], [2, 16, 128], target_memory=pl.Mem.Mat)
            return x

    flatten(Before, Expected)


def test_b042_nz_source_tensor_keeps_its_window():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self,
            x: pl.Tensor[
                [2, 16, 128], pl.FP16, pl.TensorView(stride=[2048, 128, 1], layout=pl.TensorLayout.NZ)
            ],
        ) -> pl.Tensor[[2, 16, 128], pl.FP16]:
            t = pl.tile.load(x, [0, 0, 0], [2, 16, 128], target_memory=pl.Mem.Mat)
            return x

    after = flatten(Before, meaning=False)
    load = after.functions[0].body[0]
    assert load.value.args[0] is after.functions[0].params[0].var  # no tensor.view
    assert [d.value for d in load.value.args[1].elements] == [0, 0, 0]
    assert [d.value for d in load.var.type.shape] == [32, 128]


def test_b044_user_memref_is_carried_onto_the_flat_type():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]
        ) -> pl.Tensor[[2, 3, 4], pl.FP32]:
            t: pl.Tile[[2, 3, 4], pl.FP32, pl.MemRef("ping"), pl.Mem.Vec] = pl.load(
                x, [0, 0, 0], [2, 3, 4], target_memory=pl.Mem.Vec
            )
            out = pl.store(t, [0, 0, 0], out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]
        ) -> pl.Tensor[[2, 3, 4], pl.FP32]:
            t: pl.Tile[[6, 4], pl.FP32, pl.MemRef("ping"), pl.Mem.Vec] = pl.tile.load(
                x, [0, 0, 0], [2, 3, 4], [2, 3, 4], target_memory=pl.Mem.Vec
            )
            out_1: pl.Tensor[[2, 3, 4], pl.FP32] = pl.tile.store(t, [0, 0, 0], out, [2, 3, 4])
            return out_1

    flatten(Before, Expected)


def test_b045_partial_source_view_collapses_its_valid_shape():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self,
            x: pl.Tensor[
                [2, 16, 128],
                pl.FP16,
                pl.TensorView(stride=[2048, 128, 1], layout=pl.TensorLayout.ND, valid_shape=[1, 16, 128]),
            ],
        ) -> pl.Tensor[[2, 16, 128], pl.FP16]:
            t = pl.tile.load(x, [0, 0, 0], [1, 16, 128], target_memory=pl.Mem.Mat)
            return x

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self,
            x: pl.Tensor[
                [2, 16, 128],
                pl.FP16,
                pl.TensorView(stride=[2048, 128, 1], layout=pl.TensorLayout.ND, valid_shape=[1, 16, 128]),
            ],
        ) -> pl.Tensor[[2, 16, 128], pl.FP16]:
            v: pl.Tensor[
                [32, 128],
                pl.FP16,
                pl.TensorView(stride=[128, 1], layout=pl.TensorLayout.ND, valid_shape=[16, 128]),
            ] = pl.tensor.view(x, [32, 128], [16, 128])
            t: pl.Tile[[16, 128], pl.FP16, pl.Mem.Mat] = pl.tile.load(
                v, [0, 0], [16, 128], [16, 128], target_memory=pl.Mem.Mat
            )
            return x

    flatten(Before, Expected)


def test_b040_attrs_and_kwargs_survive_the_rewrite():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, x: pl.Tensor[[2, 16, 128], pl.FP16]) -> pl.Tensor[[2, 16, 128], pl.FP16]:
            t = pl.tile.load(
                x,
                [0, 0, 0],
                [2, 16, 128],
                target_memory=pl.Mem.Mat,
                attrs={"__compiler_tensor_to_tile_mat_bridge": True},
            )
            return x

    after = flatten(Before, meaning=False)
    load = after.functions[0].body[1].value
    assert dict(load.attrs) == {"__compiler_tensor_to_tile_mat_bridge": True}
    assert load.kwarg("target_memory") is pl.Mem.Mat
    assert [d.value for d in load.args[1].elements] == [0, 0]


def test_b042_natural_mat_load_of_a_non_contiguous_window_is_an_internal_error():
    from pypto_egg import passes
    from pypto_egg.errors import InternalError

    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, x: pl.Tensor[[2, 4, 8], pl.FP16]) -> pl.Tensor[[2, 4, 8], pl.FP16]:
            t = pl.tile.load(x, [0, 0, 0], [2, 2, 8], target_memory=pl.Mem.Mat)
            return x

    import pytest

    with pytest.raises(
        InternalError, match="valid sub-box of the leading dims to be contiguous in row-major order"
    ):
        passes.flatten_tile_nd_to_2d()(Before)
