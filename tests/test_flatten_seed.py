"""The specification's example and element-wise chains (issue: the egglog engine, proven end to end)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import pypto_egg.language as pl
from pypto_egg import ir, passes
from pypto_egg.ir import python_print

from helpers import check_meaning, flatten

ROOT = Path(__file__).resolve().parents[1]


def load_example(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_seed_example_after_is_the_specification_after():
    seed = load_example("seed_example")
    after = flatten(seed.Before, seed.After)
    store = after.functions[0].body[2].value
    assert [d.value for d in store.args[3].elements] == [2, 3, 4]  # the partition operand (B-053)


def test_seed_after_prints_in_dsl_form():
    seed = load_example("seed_example")
    text = python_print(passes.flatten_tile_nd_to_2d()(seed.Before))
    assert "x_tile: pl.Tile[[6, 4], pl.FP32] = pl.tile.load(x, [0, 0, 0], [2, 3, 4], [2, 3, 4])" in text
    assert (
        "y_tile: pl.Tile[[6, 4], pl.FP32, pl.Mem.Vec] = pl.tile.add(x_tile, x_tile)" in text
    )  # a vector op lives in Vec
    assert (
        "out_0_1: pl.Tensor[[2, 3, 4], pl.FP32] = pl.tile.store(y_tile, [0, 0, 0], out_0, [2, 3, 4])" in text
    )


def chain_program(shape: list[int], dtype: str, n_inputs: int) -> str:
    """load every input → a chain of binary, unary and scalar ops → store."""
    dims = ", ".join(map(str, shape))
    zeros = ", ".join("0" for _ in shape)
    tensor = f"pl.Tensor[[{dims}], pl.{dtype}]"
    params = ", ".join(f"x{i}: {tensor}" for i in range(n_inputs))
    lines = [f"t{i} = pl.load(x{i}, [{zeros}], [{dims}])" for i in range(n_inputs)]
    acc = "t0"
    for i in range(1, n_inputs):
        lines.append(f"s{i} = pl.tile.add({acc}, t{i})")
        acc = f"s{i}"
    lines.append(f"m = pl.tile.mul({acc}, t0)")
    lines.append("n = pl.tile.neg(m)")
    lines.append("a = pl.tile.abs(n)")
    scalar = "2.0" if dtype.startswith("FP") else "2"
    lines.append(f"k = pl.tile.adds(a, {scalar})")
    lines.append("d = pl.tile.sub(k, t0)")
    lines.append("mx = pl.tile.maximum(d, t0)")
    if dtype.startswith("FP"):
        lines.append("r = pl.tile.relu(mx)")
        lines.append("e = pl.tile.muls(r, 0.5)")
    else:
        lines.append("e = pl.tile.muls(mx, 3)")
    lines.append(f"out_0 = pl.store(e, [{zeros}], out_0)")
    lines.append("return out_0")
    body = "\n".join("        " + line for line in lines)
    return f"""
import pypto_egg.language as pl

@pl.program
class Chain:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, {params}, out_0: pl.Out[{tensor}]) -> {tensor}:
{body}
"""


@pytest.mark.parametrize("shape", [[2, 3, 4], [2, 2, 3, 8], [2, 1, 2, 3, 4]])
@pytest.mark.parametrize("dtype", ["FP32", "FP16", "INT32"])
@pytest.mark.parametrize("n_inputs", [1, 3])
def test_elementwise_chain_flattens_and_keeps_meaning(shape, dtype, n_inputs):
    before = pl.parse(chain_program(shape, dtype, n_inputs))
    after = flatten(before, seeds=(0, 1, 2))
    rows = 1
    for d in shape[:-1]:
        rows *= d
    for stmt in after.functions[0].body:
        ty = getattr(stmt, "var", None) and stmt.var.type
        if isinstance(ty, ir.TileType):
            assert [d.value for d in ty.shape] == [rows, shape[-1]]
    store = after.functions[0].body[-2].value
    assert store.op == "tile.store" and [d.value for d in store.args[3].elements] == shape


def test_user_rule_file_changes_the_result(tmp_path):
    """A user .egg file with one rule (`tile.muls(x, 1.0)` is `x`) removes the statement."""
    rules = tmp_path / "muls_one.egg"
    rules.write_text(
        ";; multiplying by one is the identity: the statement's value is its operand\n"
        '(rule ((GenericReq s "tile.muls" (OCons (OVar x) (OCons (OFloat 1.0) (ONil))) sh))\n'
        '      ((Chose s (Forward x))) :name "muls-one-is-identity")\n'
    )
    src = """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[2, 3, 4], pl.FP32], out_0: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
        t = pl.load(x, [0, 0, 0], [2, 3, 4])
        u = pl.tile.muls(t, 1.0)
        v = pl.tile.exp(u)
        out_0 = pl.store(v, [0, 0, 0], out_0)
        return out_0
"""
    before = pl.parse(src)
    plain = passes.flatten_tile_nd_to_2d()(before)
    assert [s.value.op for s in plain.functions[0].body[:-1]] == [
        "tile.load",
        "tile.muls",
        "tile.exp",
        "tile.store",
    ]
    flatten_pass = passes.flatten_tile_nd_to_2d(extra_rules=[rules])
    custom = flatten_pass(before)
    ops = [s.value.op for s in custom.functions[0].body[:-1]]
    assert ops == ["tile.load", "tile.exp", "tile.store"]
    exp = custom.functions[0].body[1].value
    assert exp.args[0] is custom.functions[0].body[0].var  # exp now reads the load directly
    assert flatten_pass.reports[0].rules_fired.get("muls-one-is-identity") == 1
    check_meaning(before, custom)
