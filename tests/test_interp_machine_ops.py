"""The interpreter's ops beyond tile arithmetic (synchronisation, handles, queries, scalar tensor access,
column and index reductions, extracts, generated tiles), against numpy; and what it refuses, by name."""

from __future__ import annotations

import numpy as np
import pytest

import pypto_egg.language as pl
from pypto_egg import interp, passes

X = np.random.default_rng(3).uniform(-2, 2, size=(16, 32)).astype(np.float32)


def kernel(body: str, out: str = "[16, 32]", dtype: str = "pl.FP32", extra: str = "") -> str:
    lines = "\n".join("        " + line for line in body.splitlines())
    return f"""
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],{extra} out: pl.Out[pl.Tensor[{out}, {dtype}]]) -> pl.Tensor[{out}, {dtype}]:
{lines}
        return out
"""


def run(text: str, **inputs) -> np.ndarray:
    program = pl.parse(text)
    fn = program.function("main")
    args = {**interp.random_inputs(fn, 0), "x": X, **inputs}
    return interp.run(program, "main", args)["out"]


@pytest.mark.parametrize(
    ("op", "shape", "expect"),
    [
        ("pl.tile.col_sum(t)", "[1, 32]", X.sum(axis=0, keepdims=True)),
        ("pl.tile.col_max(t)", "[1, 32]", X.max(axis=0, keepdims=True)),
        ("pl.tile.col_min(t)", "[1, 32]", X.min(axis=0, keepdims=True)),
    ],
)
def test_column_reductions(op, shape, expect):
    got = run(
        kernel(
            f"t = pl.load(x, [0, 0], [16, 32])\nr: pl.Tile[{shape}, pl.FP32] = {op}\nout = pl.store(r, [0, 0], out)",
            out=shape,
        )
    )
    np.testing.assert_allclose(got, expect, rtol=1e-5)


def test_extract_takes_the_sub_tile_at_its_row_and_column():
    body = (
        "t = pl.load(x, [0, 0], [16, 32], target_memory=pl.Mem.Mat)\n"
        "e: pl.Tile[[8, 16], pl.FP32, pl.Mem.Left] = pl.tile.extract(t, 4, 8, [8, 16], target_memory=pl.Mem.Left)\n"
        "v = pl.tile.move(e, target_memory=pl.Mem.Vec)\n"
        "out = pl.store(v, [0, 0], out)"
    )
    np.testing.assert_array_equal(run(kernel(body, out="[8, 16]")), X[4:12, 8:24])


def test_synchronisation_is_a_no_op_and_the_function_runs_as_block_0_of_1():
    body = (
        "pl.system.syncall()\n"
        "b: pl.Scalar[pl.INDEX] = pl.tile.get_block_idx()\n"
        "n: pl.Scalar[pl.INDEX] = pl.tile.get_block_num()\n"
        "t = pl.load(x, [b * 8 + (n - 1) * 4, 0], [8, 32])\n"
        "out = pl.store(t, [0, 0], out)"
    )
    np.testing.assert_allclose(run(kernel(body, out="[8, 32]")), X[:8])


def test_tensor_read_and_dim_give_scalars():
    body = (
        "k: pl.Scalar[pl.INDEX] = pl.tensor.read(idx, [1])\n"
        "d: pl.Scalar[pl.INDEX] = pl.tensor.dim(x, 0)\n"
        "t = pl.load(x, [k, 0], [d - 12, 32])\n"
        "out = pl.store(t, [0, 0], out)"
    )
    text = kernel(body, out="[4, 32]", extra=" idx: pl.Tensor[[4], pl.INT32],")
    got = run(text, idx=np.array([0, 5, 0, 0], np.int32))
    np.testing.assert_array_equal(got, X[5:9])


def test_ci_and_tri_generate_their_tiles():
    ci = kernel(
        "s: pl.Tile[[1, 16], pl.INT32] = pl.tile.ci(3, [1, 16], dtype=pl.INT32)\nout = pl.store(s, [0, 0], out)",
        "[1, 16]",
        "pl.INT32",
    )
    np.testing.assert_array_equal(run(ci), (3 + np.arange(16))[None, :])
    tri = kernel(
        "m: pl.Tile[[8, 8], pl.FP32] = pl.tile.tri(0, [8, 8], dtype=pl.FP32)\nout = pl.store(m, [0, 0], out)",
        "[8, 8]",
    )
    np.testing.assert_array_equal(run(tri), np.tril(np.ones((8, 8), np.float32)))


def test_an_op_that_needs_another_core_is_not_interpretable_by_name():
    body = "t: pl.Tile[[16, 32], pl.FP32] = pl.tile.tpop_from_aic(shape=[16, 32], dtype=pl.FP32)\nout = pl.store(t, [0, 0], out)"
    with pytest.raises(
        interp.NotInterpretable, match=r"not interpretable: tile.tpop_from_aic \(.*another core"
    ):
        run(kernel(body))


def test_validation_reports_an_uninterpretable_function_and_the_dims_it_chose():
    """A function the interpreter cannot run is listed with the op; dynamic dims take a value large enough for
    every static window, and the report says which."""
    text = """
import pypto_egg.language as pl

N = pl.dynamic("N")

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[N, 3, 32], pl.FP32], out: pl.Out[pl.Tensor[[N, 3, 32], pl.FP32]]) -> pl.Tensor[[N, 3, 32], pl.FP32]:
        t = pl.load(x, [20, 0, 0], [2, 3, 32])
        u = pl.tile.exp(t)
        out = pl.store(u, [20, 0, 0], out)
        return out
"""
    p = passes.flatten_tile_nd_to_2d(validate=True)
    p(pl.parse(text))
    report = p.validation
    assert report is not None and report.checked == ["main"]
    assert report.sizes == {"main": {"N": 22}}
    assert "N=22" in str(report) and "block 0 of 1" in str(report)
    pulled = text.replace(
        "u = pl.tile.exp(t)",
        "u = pl.tile.exp(t)\n        v: pl.Tile[[16, 32], pl.FP32] = pl.tile.tpop_from_aic()",
    )
    p(pl.parse(pulled))
    assert p.validation is not None and p.validation.checked == []
    assert "not interpretable: tile.tpop_from_aic" in p.validation.skipped["main"]
