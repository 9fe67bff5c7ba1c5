"""Op names across the bridge (B-001): every tile op PyPTO's IR registers is one pypto-egg knows, under the DSL's
spelling (`tile.and` is `pl.tile.and_`), and a program using the ops whose names differ reads, flattens and is
written back under PyPTO's names, as the C++ pass flattens it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import pypto_egg.language as pl
from pypto_egg.ir.ops import REGISTRY
from pypto_egg.pypto import flatten_pass, load_pypto
from pypto_egg.pypto.op_names import dsl_name, ir_name

from pypto_ref import requires_pypto, set_reference_backend

pytestmark = requires_pypto


def pyptos_tile_ops() -> list[str]:
    """The tile ops PyPTO's IR registers. Its registry has no listing call, so the candidates are the op-shaped
    strings of its core library, kept when the registry knows them."""
    core = load_pypto().core
    text = Path(core.__file__).read_bytes()
    candidates = {m.decode() for m in re.findall(rb"tile\.[a-z][a-z0-9_]*", text)}
    return sorted(n for n in candidates if load_pypto().core_ir.is_op_registered(n))


def test_every_tile_op_pypto_registers_is_known_under_the_dsls_spelling():
    ops = pyptos_tile_ops()
    assert len(ops) > 100 and {"tile.load", "tile.batch_matmul", "tile.and"} <= set(ops)
    unknown = [n for n in ops if dsl_name(n) not in REGISTRY]
    assert not unknown, f"tile ops PyPTO registers that pypto-egg does not know: {unknown}"
    assert all(ir_name(dsl_name(n)) == n for n in ops)


@pytest.mark.parametrize(("dsl", "ir"), [("tile.and_", "tile.and"), ("tile.or_", "tile.or"), ("tile.not_", "tile.not"),
                                         ("tile.add", "tile.add"), ("tile.xor", "tile.xor")])  # fmt: skip
def test_names_map_both_ways(dsl, ir):
    assert ir_name(dsl) == ir and dsl_name(ir) == dsl


TEXT = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[2, 8, 16], pl.INT16], y: pl.Tensor[[2, 8, 16], pl.INT16],
             out: pl.Out[pl.Tensor[[2, 8, 16], pl.INT16]]) -> pl.Tensor[[2, 8, 16], pl.INT16]:
        a: pl.Tile[[2, 8, 16], pl.INT16, pl.Mem.Vec] = pl.load(x, [0, 0, 0], [2, 8, 16])
        b: pl.Tile[[2, 8, 16], pl.INT16, pl.Mem.Vec] = pl.load(y, [0, 0, 0], [2, 8, 16])
        c: pl.Tile[[2, 8, 16], pl.INT16, pl.Mem.Vec] = pl.tile.and_(a, b)
        d: pl.Tile[[2, 8, 16], pl.INT16, pl.Mem.Vec] = pl.tile.or_(c, a)
        e: pl.Tile[[2, 8, 16], pl.INT16, pl.Mem.Vec] = pl.tile.not_(d)
        out = pl.store(e, [0, 0, 0], out)
        return out
"""


def test_the_keyword_named_ops_flatten_through_the_bridge_as_the_cxx_pass_flattens_them():
    pto = load_pypto()
    set_reference_backend()
    program = pto.language.parse(TEXT)
    ours = pto.ir.python_print(flatten_pass()(program))
    assert ours == pto.ir.python_print(pto.passes.flatten_tile_nd_to_2d()(program))
    assert "pl.Tile[[16, 16], pl.INT16, pl.Mem.Vec] = pl.tile.not_(d)" in ours
    ops = [s.value.op for s in pl.parse(pto.ir.python_print(program)).functions[0].body[2:5]]
    assert ops == ["tile.and_", "tile.or_", "tile.not_"]
