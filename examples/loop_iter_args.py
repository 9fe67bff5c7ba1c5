"""A reduction over a loop whose carried value is an N-D tile, followed by an if that picks an epilogue."""

import pypto_egg.language as pl

INPUTS = {"scalars": {"mode": 1}}


@pl.program
class LoopIterArgs:
    @pl.function(type=pl.FunctionType.AIV)
    def main(
        self,
        x: pl.Tensor[[6, 2, 4, 16], pl.FP32],
        mode: pl.Scalar[pl.INDEX],
        out: pl.Out[pl.Tensor[[1, 2, 4, 16], pl.FP32]],
    ) -> pl.Tensor[[1, 2, 4, 16], pl.FP32]:
        zero = pl.tile.full([1, 2, 4, 16], dtype=pl.FP32, value=0.0)
        for k, (acc,) in pl.range(6, init_values=(zero,)):
            t = pl.load(x, [k, 0, 0, 0], [1, 2, 4, 16])
            nxt = pl.tile.add(acc, t)
            total = pl.yield_(nxt)
        if mode > 0:
            scaled = pl.tile.muls(total, 0.5)
            result = pl.yield_(scaled)
        else:
            result = pl.yield_(total)
        out = pl.store(result, [0, 0, 0, 0], out)
        return out
