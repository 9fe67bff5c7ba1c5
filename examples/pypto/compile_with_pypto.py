"""pypto-egg inside PyPTO: the three entry points on one PyPTO program (needs PyPTO, built from source).

python examples/pypto/compile_with_pypto.py [OUTDIR]
"""

import sys
import tempfile

import pypto.language as pl
from pypto import ir, passes
from pypto.pypto_core import backend

import pypto_egg.pypto as egg


@pl.program
class AddNd:
    @pl.function(type=pl.FunctionType.InCore)
    def add_incore(
        self, x: pl.Tensor[[2, 3, 16], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 16], pl.FP32]]
    ) -> pl.Tensor[[2, 3, 16], pl.FP32]:
        t: pl.Tile[[2, 3, 16], pl.FP32] = pl.load(x, [0, 0, 0], [2, 3, 16])
        u: pl.Tile[[2, 3, 16], pl.FP32] = pl.add(t, t)
        out = pl.store(u, [0, 0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def add(
        self, x: pl.Tensor[[2, 3, 16], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 16], pl.FP32]]
    ) -> pl.Tensor[[2, 3, 16], pl.FP32]:
        out = self.add_incore(x, out)
        return out


# the same code byte for byte (with source locations on, a rewritten statement's ops carry its line's first
# column rather than each expression's own: docs/differences.md, D-9)
OPTIONS = {"skip_ptoas": True, "emit_source_loc": False, "dump_passes": False}


def main(out_dir: str) -> None:
    backend.set_backend_type(backend.BackendType.Ascend910B)

    # 1. the pass itself, a PyPTO Pass named FlattenTileNdTo2D with the C++ pass's properties
    flatten = egg.flatten_pass(strategy="reference")
    flat = flatten(AddNd)
    ir.assert_structural_equal(flat, passes.flatten_tile_nd_to_2d()(AddNd))
    print(flatten.get_name(), "gives the C++ pass's answer:")
    print(ir.python_print(flat))

    # 2. PyPTO's whole pipeline, with pypto-egg's pass in the C++ pass's place
    ir.compile(AddNd, output_dir=f"{out_dir}/reference", **OPTIONS)
    egg.compile(AddNd, output_dir=f"{out_dir}/pypto-egg", **OPTIONS)

    # 3. every compilation inside the block (ir.compile, PassManager.get_strategy(), @pl.jit) uses it
    with egg.replacing_flatten(strategy="optimal"):
        ir.compile(AddNd, output_dir=f"{out_dir}/optimal", **OPTIONS)
    print("generated code written under", out_dir)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="pypto-egg-"))
