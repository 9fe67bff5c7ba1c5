"""The TileOps2D verifier (behaviours.md §R: B-210..B-213), on its own and after the pass."""

from __future__ import annotations

from dataclasses import replace

import pytest

import pypto_egg.language as pl
from pypto_egg import ir, passes
from pypto_egg.errors import VerificationError
from pypto_egg.passes import IRProperty


def program(body: str, ftype: str = "InCore"):
    lines = "\n".join("        " + line for line in body.strip().splitlines())
    return pl.parse(f"""
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.{ftype})
    def main(self, x: pl.Tensor[[2, 3, 4], pl.FP32], y: pl.Tensor[[3, 8], pl.FP32]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
{lines}
        return x
""")


def test_b210_b213_nd_results_and_arguments_are_reported():
    p = program("t = pl.load(x, [0, 0, 0], [2, 3, 4])\nu = pl.tile.exp(t)")
    diags = passes.tile_ops_2d_diagnostics(p)
    messages = [d.message for d in diags]
    assert (
        "Tile op 'tile.exp' in InCore function 'main' produces >2D tile (should have been flattened to 2D)"
        in messages
    )
    assert (
        "Tile op 'tile.exp' in InCore function 'main' has >2D tile argument (should have been flattened to 2D)"
        in messages
    )
    assert len(diags) == 2  # the load is exempt
    with pytest.raises(VerificationError, match="TileOps2D"):
        passes.verify_tile_ops_2d(p)


def test_b211_transpose_must_have_four_operands():
    p = program("t = pl.load(y, [0, 0], [3, 8])\nu = pl.transpose(t, axis1=0, axis2=1)")
    (d,) = passes.tile_ops_2d_diagnostics(p)
    assert d.message == ("tile.transpose in InCore function 'main' has 3 arguments (expected 4: input, axis1, axis2, "
                         "scratch after FlattenTileNdTo2D)")  # fmt: skip
    assert d.rule == "TileOps2D" and d.span is not None


def test_b212_assemble_offsets_must_be_literal_pairs():
    p = program(
        "a = pl.tile.create([3, 8], dtype=pl.FP32)\nt = pl.load(y, [0, 0], [3, 8])\nb = pl.tile.assemble(a, t, [0, 0])"
    )
    assert passes.tile_ops_2d_diagnostics(p) == []
    fn = p.functions[0]
    stmt = fn.body[2]
    three = replace(stmt.value, args=(*stmt.value.args[:2], ir.MakeTuple((ir.ConstInt(0),) * 3)))
    var = ir.Var("off", ir.TupleType((ir.ScalarType(ir.DataType.INDEX),) * 2))
    loose = replace(stmt.value, args=(*stmt.value.args[:2], var))
    for call, text in ((three, "has a rank-3 offset (expected 2: row, col after FlattenTileNdTo2D)"),
                       (loose, "has a non-literal offset (expected a 2-element (row, col) tuple")):  # fmt: skip
        bad = replace(
            p, functions=(replace(fn, body=(*fn.body[:2], replace(stmt, value=call), *fn.body[3:])),)
        )
        (d,) = passes.tile_ops_2d_diagnostics(bad)
        assert text in d.message


def test_non_incore_functions_are_not_verified():
    p = program("t = pl.load(x, [0, 0, 0], [2, 3, 4])\nu = pl.tile.exp(t)", ftype="Orchestration")
    passes.verify_tile_ops_2d(p)
    passes.verify_properties({IRProperty.TileOps2D}, p, "FlattenTileNdTo2D")


def test_the_pass_output_satisfies_the_verifier():
    p = program(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\nu = pl.tile.exp(t)\nv = pl.transpose(u, axis1=1, axis2=2)"
    )
    out = passes.flatten_tile_nd_to_2d(verify=False)(p)
    passes.verify_properties(passes.flatten_tile_nd_to_2d().produced, out, "FlattenTileNdTo2D")


def test_b006_users_of_an_nd_tile_parameter_stay_nd_and_the_verifier_names_them():
    src = """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, t: pl.Tile[[2, 3, 4], pl.FP32], x: pl.Tensor[[2, 3, 4], pl.FP32]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
        u = pl.tile.exp(t)
        return x
"""
    before = pl.parse(src)
    with pytest.raises(
        VerificationError,
        match=r"(?s)TileOps2D.*Tile op 'tile.exp' in InCore function 'main' produces >2D tile",
    ):
        passes.flatten_tile_nd_to_2d()(before)
    out = passes.flatten_tile_nd_to_2d(verify=False)(before)
    assert [d.value for d in out.functions[0].body[0].var.type.shape] == [2, 3, 4]


def test_b212_a_function_the_pass_keeps_as_it_is_is_still_verified():
    """The pass skips the verifier's walk only on functions its own walk saw hold TileOps2D: a 2-D function it
    returns as it is, whose assemble offset has three elements, is still reported (beside an N-D function the pass
    rewrites, so the result is a new program)."""
    src = """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def nd(self, x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
        t = pl.load(x, [0, 0, 0], [2, 3, 4])
        out = pl.store(t, [0, 0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def flat(self, y: pl.Tensor[[3, 8], pl.FP32]) -> pl.Tensor[[3, 8], pl.FP32]:
        a = pl.load(y, [0, 0], [3, 8], target_memory=pl.Mem.Vec)
        t = pl.load(y, [0, 0], [3, 8], target_memory=pl.Mem.Vec)
        b = pl.tile.assemble(a, t, [0, 0])
        return y
"""
    p = pl.parse(src)
    flatten = passes.flatten_tile_nd_to_2d()
    assert flatten(p).functions[1] is p.functions[1]  # kept as it is, and it holds TileOps2D
    fn = p.functions[1]
    stmt = fn.body[2]
    three = replace(stmt.value, args=(*stmt.value.args[:2], ir.MakeTuple((ir.ConstInt(0),) * 3)))
    bad = replace(
        p,
        functions=(
            p.functions[0],
            replace(fn, body=(*fn.body[:2], replace(stmt, value=three), *fn.body[3:])),
        ),
    )
    with pytest.raises(
        VerificationError, match="tile.assemble in InCore function 'flat' has a rank-3 offset"
    ):
        flatten(bad)
