"""A natural NZ Mat load of one page of a rank-3 tensor: the source is read through a 2-D tensor.view."""

import pypto_egg.language as pl

INPUTS: dict = {}


@pl.program
class NaturalMatLoad:
    @pl.function(type=pl.FunctionType.AIC)
    def main(
        self,
        x: pl.Tensor[[2, 16, 128], pl.FP16],
        out: pl.Out[pl.Tensor[[16, 128], pl.FP16]],
    ) -> pl.Tensor[[16, 128], pl.FP16]:
        t = pl.tile.load(x, [1, 0, 0], [1, 16, 128], target_memory=pl.Mem.Mat)
        v = pl.tile.move(t, target_memory=pl.Mem.Vec)
        out = pl.store(v, [0, 0], out)
        return out
