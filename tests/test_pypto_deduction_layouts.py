"""D-10: a reshape in a space with a layout of its own keeps the layout where its view becomes explicit; PyPTO
e2d0f78ae's deduction writes Vec's defaults there instead (docs/differences.md). Every other tile op deduces the
layouts PyPTO does (tests/test_type_deduction.py)."""

from __future__ import annotations

import pypto_egg.language as pl
from pypto_egg.ir.tiles import tile_layouts
from pypto_egg.ir.types import MemorySpace, TileLayout
from pypto_egg.pypto import load_pypto

from pypto_ref import requires_pypto

PROGRAM = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[64, 256], pl.FP32], out: pl.Out[pl.Tensor[[64, 256], pl.FP32]]) -> pl.Tensor[[64, 256], pl.FP32]:
        a: pl.Tile[[64, 256], pl.FP32, pl.Mem.Acc] = pl.tile.create([64, 256], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        b: pl.Tile[[64, 256], pl.FP32, pl.Mem.Acc, pl.TileView(valid_shape=[37, 256])] = pl.tile.set_validshape(a, 37, 256)
        c = pl.tile.reshape(b, [64, 256])
        out = pl.store(c, [0, 0], out)
        return out
"""


def _reshaped(program: object) -> object:
    return next(
        s.var.type for s in program.functions[0].body if getattr(s, "var", None) and s.var.name == "c"
    )


def test_a_reshape_of_a_narrowed_acc_tile_keeps_the_acc_layout():
    typed = _reshaped(pl.parse(PROGRAM))
    assert typed.memory is MemorySpace.Acc
    assert tile_layouts(typed) == (TileLayout.col_major, TileLayout.row_major, 1024)


@requires_pypto
def test_pyptos_own_deduction_writes_vecs_defaults_there():
    pto = load_pypto()
    printed = pto.ir.python_print(pto.language.parse(PROGRAM))
    line = next(line for line in printed.splitlines() if line.strip().startswith("c:"))
    assert "blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.none_box, fractal=512" in line, line
