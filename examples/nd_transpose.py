"""A batched transpose of the last two axes: unrolled into one 2-D transpose per page with a scratch pool."""

import pypto_egg.language as pl

INPUTS: dict = {}


@pl.program
class NdTranspose:
    @pl.function(type=pl.FunctionType.InCore)
    def main(
        self,
        x: pl.Tensor[[2, 3, 4, 8], pl.FP32],
        out: pl.Out[pl.Tensor[[2, 3, 8, 4], pl.FP32]],
    ) -> pl.Tensor[[2, 3, 8, 4], pl.FP32]:
        t = pl.load(x, [0, 0, 0, 0], [2, 3, 4, 8])
        r = pl.tile.relu(t)
        rt = pl.transpose(r, axis1=2, axis2=3)
        out = pl.store(rt, [0, 0, 0, 0], out)
        return out
