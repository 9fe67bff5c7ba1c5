"""Pages loaded one by one and assembled into an N-D tile: each [1, 8, 16] page at [i, 0, 0] lands on row 8*i."""

import pypto_egg.language as pl

INPUTS: dict = {}


@pl.program
class NdAssemble:
    @pl.function(type=pl.FunctionType.InCore)
    def main(
        self,
        x: pl.Tensor[[4, 8, 16], pl.FP32],
        out: pl.Out[pl.Tensor[[4, 8, 16], pl.FP32]],
    ) -> pl.Tensor[[4, 8, 16], pl.FP32]:
        acc0 = pl.tile.full([4, 8, 16], dtype=pl.FP32, value=0.0)
        for i, (acc,) in pl.range(4, init_values=(acc0,)):
            page = pl.load(x, [i, 0, 0], [1, 8, 16])
            scaled = pl.tile.muls(page, 2.0)
            nxt = pl.tile.assemble(acc, scaled, [i, 0, 0])
            filled = pl.yield_(nxt)
        pages = pl.load(x, [0, 0, 0], [2, 8, 16])
        both = pl.tile.assemble(filled, pages, [0, 0, 0])
        out = pl.store(both, [0, 0, 0], out)
        return out
