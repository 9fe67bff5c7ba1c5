"""A dynamic sequence dim, chunked by the user: static [1, CHUNK, 64] tiles, the runtime tail in valid_shape.

FlattenTileNdTo2D lowers each chunk to a [CHUNK, 64] tile and keeps `min(CHUNK, s - c)` as its valid rows.
"""

import pypto_egg.language as pl

S = pl.dynamic("S")
CHUNK = 16
INPUTS = {"dyn": {"S": 37}, "scalars": {"s_dim": 37}}


@pl.program
class DynamicChunk:
    @pl.function(type=pl.FunctionType.InCore)
    def main(
        self,
        x: pl.Tensor[[2, S, 64], pl.FP32],
        out: pl.Out[pl.Tensor[[2, S, 64], pl.FP32]],
        s_dim: pl.Scalar[pl.INDEX],
    ) -> pl.Tensor[[2, S, 64], pl.FP32]:
        for b, (ob,) in pl.range(2, init_values=(out,)):
            for c, (o,) in pl.range(0, s_dim, CHUNK, init_values=(ob,)):
                valid = pl.min(CHUNK, s_dim - c)
                t = pl.load(x, [b, c, 0], [1, CHUNK, 64], valid_shape=[1, valid, 64])
                h = pl.cast(t, target_type=pl.FP16)
                f = pl.cast(h, target_type=pl.FP32)
                e = pl.tile.exp(f)
                o = pl.store(e, [b, c, 0], o)
                inner = pl.yield_(o)
            outer = pl.yield_(inner)
        return outer
