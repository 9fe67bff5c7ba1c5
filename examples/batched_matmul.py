"""Batched matmuls: a broadcast QK^T-style product stored page by page, and a K-loop accumulator that packs
its pages along columns of one [M, B*N] Acc tile.

FlattenTileNdTo2D unrolls each tile.batch_matmul into per-batch 2-D tile.matmul pages; loads used only by
batched matmuls become Mat loads read through 2-D tensor views.
"""

import pypto_egg.language as pl

INPUTS: dict = {}


@pl.program
class BatchedMatmul:
    @pl.function(type=pl.FunctionType.AIC)
    def main(
        self,
        q: pl.Tensor[[2, 16, 32], pl.FP16],
        k: pl.Tensor[[2, 64, 32], pl.FP16],
        w: pl.Tensor[[1, 32, 64], pl.FP16],
        scores: pl.Out[pl.Tensor[[2, 16, 64], pl.FP32]],
        out: pl.Out[pl.Tensor[[2, 16, 64], pl.FP32]],
    ) -> pl.Tensor[[2, 16, 64], pl.FP32]:
        tq = pl.load(q, [0, 0, 0], [2, 16, 32])
        tk = pl.load(k, [0, 0, 0], [2, 64, 32])
        kt = pl.tile.transpose_view(tk)
        s = pl.tile.batch_matmul(tq, kt)
        scores = pl.store(s, [0, 0, 0], scores)
        tw = pl.load(w, [0, 0, 0], [1, 32, 64])
        acc0 = pl.tile.batch_matmul(tq, tw)
        for step, (acc,) in pl.range(2, init_values=(acc0,)):
            nxt = pl.tile.batch_matmul_acc(acc, tq, tw)
            total = pl.yield_(nxt)
        out = pl.store(total, [0, 0, 0], out)
        return out
