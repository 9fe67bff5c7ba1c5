"""The numpy interpreter against hand-written numpy, op by op (issue: foundation)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto_egg.language as pl
from pypto_egg import interp
from pypto_egg.errors import DSLError

from corpus import PROGRAMS, wrap

RNG = np.random.default_rng(7)
X = RNG.uniform(-2, 2, size=(2, 3, 4)).astype(np.float32)


def run_body(body: str, **inputs):
    program = pl.parse(wrap(body))
    args = {"x": X, "out": np.zeros((2, 3, 4), np.float32), **inputs}
    return interp.run(program, "main", args)["out"]


@pytest.mark.parametrize(
    ("expr", "expect"),
    [
        ("pl.tile.add(t, t)", X + X), ("pl.tile.sub(t, t)", X - X), ("pl.tile.mul(t, t)", X * X),
        ("pl.tile.div(t, t)", X / X), ("pl.tile.maximum(t, t)", X), ("pl.tile.exp(t)", np.exp(X)),
        ("pl.tile.neg(t)", -X), ("pl.tile.abs(t)", np.abs(X)), ("pl.tile.relu(t)", np.maximum(X, 0)),
        ("pl.tile.muls(t, 2.0)", 2 * X), ("pl.tile.adds(t, 1.5)", X + 1.5), ("pl.tile.subs(t, 1.0)", X - 1),
        ("pl.tile.divs(t, 4.0)", X / 4), ("pl.tile.maxs(t, 0.5)", np.maximum(X, 0.5)),
        ("pl.tile.mins(t, 0.5)", np.minimum(X, 0.5)), ("pl.tile.sqrt(pl.tile.abs(t))", np.sqrt(np.abs(X))),
    ],
)  # fmt: skip
def test_elementwise_ops(expr, expect):
    if "pl.tile.sqrt(" in expr:
        body = "t = pl.load(x, [0, 0, 0], [2, 3, 4])\na = pl.tile.abs(t)\nr = pl.tile.sqrt(a)\nout = pl.store(r, [0, 0, 0], out)\nreturn out"
    else:
        body = (
            f"t = pl.load(x, [0, 0, 0], [2, 3, 4])\nr = {expr}\nout = pl.store(r, [0, 0, 0], out)\nreturn out"
        )
    np.testing.assert_allclose(run_body(body), expect, rtol=1e-6)


def test_load_window_offsets_and_valid_region():
    body = ("t = pl.load(x, [1, 1, 0], [1, 2, 4], valid_shape=[1, 1, 4])\n"
            "out = pl.store(t, [0, 0, 0], out)\nreturn out")  # fmt: skip
    got = run_body(body)
    want = np.zeros_like(X)
    want[0, 0, :] = X[1, 1, :]
    np.testing.assert_array_equal(got, want)  # only the valid row is stored


def test_store_with_partition_writes_rows_as_the_window():
    body = "t: pl.Tile[[6, 4], pl.FP32] = pl.load(x, [0, 0, 0], [2, 3, 4])\nout = pl.store(t, [0, 0, 0], out, [2, 3, 4])\nreturn out"
    np.testing.assert_array_equal(run_body(body), X)


def test_store_of_lower_rank_tile_writes_consecutive_rows():
    program = pl.parse(wrap("t = pl.load(y, [0, 0], [3, 4])\nout = pl.store(t, [1, 0, 0], out)\nreturn out",
                            "y: pl.Tensor[[3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]"))  # fmt: skip
    y = RNG.uniform(size=(3, 4)).astype(np.float32)
    got = interp.run(program, "main", {"y": y, "out": np.zeros((2, 3, 4), np.float32)})["out"]
    np.testing.assert_array_equal(got[1], y)
    np.testing.assert_array_equal(got[0], 0)


def test_create_full_assemble_slice_reshape_transpose():
    body = """
a = pl.tile.full([2, 3, 4], dtype=pl.FP32, value=3.0)
t = pl.load(x, [1, 0, 0], [1, 3, 4])
b = pl.tile.assemble(a, t, [0, 0, 0])
r = pl.tile.reshape(b, [6, 4])
s = pl.tile.slice(r, [3, 4], [3, 0])
tt = pl.transpose(s, axis1=0, axis2=1)
tv = pl.tile.transpose_view(tt)
back = pl.tile.reshape(tv, [1, 3, 4])
out = pl.store(back, [1, 0, 0], out)
return out
"""
    got = run_body(body)
    np.testing.assert_array_equal(got[1], np.full((3, 4), 3.0))
    np.testing.assert_array_equal(got[0], 0)


def test_matmul_matmul_acc_and_init_cond():
    program = pl.parse(PROGRAMS["matmul_acc_cond"])
    a = RNG.uniform(-1, 1, size=(16, 32)).astype(np.float16)
    b = RNG.uniform(-1, 1, size=(32, 16)).astype(np.float16)
    got = interp.run(program, "main", {"a": a, "b": b, "out": np.zeros((16, 16), np.float32)})["out"]
    want = 3 * (a.astype(np.float64) @ b.astype(np.float64))  # k == 0 overwrites, then two accumulations
    np.testing.assert_allclose(got, want, rtol=1e-4)


def test_batch_matmul_broadcasts_like_numpy():
    program = pl.parse(PROGRAMS["batch_matmul_broadcast"])
    a = RNG.uniform(-1, 1, size=(2, 16, 32)).astype(np.float16)
    b = RNG.uniform(-1, 1, size=(2, 32, 16)).astype(np.float16)
    got = interp.run(program, "main", {"a": a, "b": b, "out": np.zeros((2, 16, 16), np.float32)})["out"]
    want = np.matmul(a[:1].astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-4)


def test_cast_modes_and_row_reductions():
    body = """
t = pl.load(x, [0, 0, 0], [2, 3, 4])
m = pl.tile.muls(t, 10.0)
i = pl.cast(m, target_type=pl.INT32, mode='floor')
f = pl.cast(i, target_type=pl.FP32)
s = pl.tile.row_sum(f)
b = pl.tile.sub(f, f)
c = pl.tile.add(b, s)
out = pl.store(c, [0, 0, 0], out)
return out
"""
    floor = np.floor(X * 10)
    np.testing.assert_allclose(run_body(body), np.broadcast_to(floor.sum(-1, keepdims=True), X.shape))


def test_loops_ifs_while_and_calls():
    program = pl.parse(PROGRAMS["while"])
    got = interp.run(program, "main", {"x": X, "out": np.zeros_like(X)})["out"]
    np.testing.assert_allclose(got, 4 * X, rtol=1e-6)
    program = pl.parse(PROGRAMS["if_else"])
    for k, want in ((3, np.exp(X)), (1, -X)):
        got = interp.run(program, "main", {"x": X, "k": k, "out": np.zeros_like(X)})["out"]
        np.testing.assert_allclose(got, want, rtol=1e-6)
    program = pl.parse(PROGRAMS["calls"])
    res = interp.run(program, "main", {"x": X, "out": np.zeros_like(X)})
    np.testing.assert_array_equal(res["return"][0], X)
    np.testing.assert_array_equal(res["out"], X)


def test_dynamic_dims_bind_from_inputs_and_tails_are_clamped():
    program = pl.parse(PROGRAMS["dynamic_valid"])
    x = RNG.uniform(size=(1, 37, 64)).astype(np.float32)
    got = interp.run(program, "main", {"x": x, "s": 37, "out": np.zeros_like(x)})["out"]
    np.testing.assert_array_equal(got, x)


def test_read_write_set_validshape_and_tensor_view():
    program = pl.parse(PROGRAMS["read_write"])
    x = RNG.uniform(size=(8, 16)).astype(np.float32)
    got = interp.run(program, "main", {"x": x, "out": np.zeros_like(x)})["out"]
    want = x.copy()
    want[0, 0] = x[1, 2]
    np.testing.assert_array_equal(got, want)
    program = pl.parse(PROGRAMS["set_validshape"])
    got = interp.run(program, "main", {"x": x, "out": np.zeros_like(x)})["out"]
    np.testing.assert_array_equal(got[:4], x[:4])
    np.testing.assert_array_equal(got[4:], 0)


def test_inputs_are_not_written_and_errors_are_clear():
    program = pl.parse(PROGRAMS["seed"])
    out = np.zeros_like(X)
    interp.run(program, "main", {"x": X, "out": out})
    assert not out.any()
    with pytest.raises(interp.InterpError, match="missing input 'out'"):
        interp.run(program, "main", {"x": X})
    with pytest.raises(
        DSLError, match="reads past the end of dimension 0"
    ):  # a constant offset: refused on reading
        pl.parse(wrap("t = pl.load(x, [1, 0, 0], [2, 3, 4])\nreturn out"))
    params = (
        "x: pl.Tensor[[2, 3, 4], pl.FP32], k: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]"
    )
    bad = pl.parse(
        wrap("t = pl.load(x, [k, 0, 0], [2, 3, 4])\nreturn out", params)
    )  # a dynamic one: when run
    with pytest.raises(interp.InterpError, match="runs past tensor"):
        interp.run(bad, "main", {"x": X, "k": 1, "out": out})


def test_output_differences_are_exact_for_integers_and_tight_for_floats():
    a = {"return": [], "o": np.array([1, 2], np.int32)}
    b = {"return": [], "o": np.array([1, 3], np.int32)}
    assert interp.output_differences(a, b) == ["o[0]: 1 elements differ"]
    f = {"return": [], "o": np.array([1.0], np.float32)}
    g = {"return": [], "o": np.array([1.0 + 1e-7], np.float32)}
    assert interp.outputs_equal(f, g)


@pytest.mark.parametrize(
    ("expr", "expect"),
    [
        ("pl.tile.minimum(t, pl.tile.neg(t))", -np.abs(X)),
        ("pl.tile.log(pl.tile.adds(pl.tile.abs(t), 1.0))", np.log(np.abs(X) + 1)),
        ("pl.tile.recip(pl.tile.adds(pl.tile.abs(t), 1.0))", 1 / (np.abs(X) + 1)),
        ("pl.tile.rsqrt(pl.tile.adds(pl.tile.abs(t), 1.0))", 1 / np.sqrt(np.abs(X) + 1)),
        ("pl.tile.move(t, target_memory=pl.Mem.Mat)", X),
        ("pl.tile.sub(t, pl.tile.row_max(t))", X - X.max(-1, keepdims=True)),
        ("pl.tile.sub(t, pl.tile.row_min(t))", X - X.min(-1, keepdims=True)),
    ],
    ids=["minimum", "log", "recip", "rsqrt", "move", "row_max", "row_min"],
)
def test_more_ops(expr, expect):
    # nested calls are spelled out one op per statement
    import re

    parts: list[str] = []

    def flatten_call(text: str) -> str:
        m = re.search(r"pl\.tile\.\w+\([^()]*\)", text)
        while m:
            name = f"v{len(parts)}"
            parts.append(f"{name} = {m.group(0)}")
            text = text[: m.start()] + name + text[m.end() :]
            m = re.search(r"pl\.tile\.\w+\([^()]*\)", text)
        return text

    result = flatten_call(expr)
    body = (
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\n"
        + "\n".join(parts)
        + f"\nout = pl.store({result}, [0, 0, 0], out)\nreturn out"
    )
    np.testing.assert_allclose(run_body(body), expect, rtol=1e-5, atol=1e-6)


def test_reinterpret_view_reads_the_same_bytes():
    body = "t = pl.load(x, [0, 0, 0], [2, 3, 4])\na = pl.tile.reinterpret_view(t, pl.INT32)\nb = pl.tile.reinterpret_view(a, dtype=pl.FP32, shape=[2, 3, 4])\nout = pl.store(b, [0, 0, 0], out)\nreturn out"
    np.testing.assert_array_equal(run_body(body), X)


def test_batch_matmul_acc_accumulates_per_batch():
    program = pl.parse(PROGRAMS["batch_matmul"])
    a = RNG.uniform(-1, 1, size=(2, 16, 32)).astype(np.float16)
    b = RNG.uniform(-1, 1, size=(2, 32, 16)).astype(np.float16)
    got = interp.run(program, "main", {"a": a, "b": b, "out": np.zeros((2, 16, 16), np.float32)})["out"]
    np.testing.assert_allclose(got, 2 * np.matmul(a.astype(np.float64), b.astype(np.float64)), rtol=1e-4)


def test_tensor_view_and_tensor_create():
    program = pl.parse(
        wrap(
            "v = pl.tensor.view(x, [6, 4])\nt = pl.load(v, [3, 0], [3, 4])\nc = pl.create_tensor([3, 4], dtype=pl.FP32)\nc2 = pl.store(t, [0, 0], c)\nr = pl.tile.reshape(t, [1, 3, 4])\nout = pl.store(r, [0, 0, 0], out)\nreturn out"
        )
    )
    got = interp.run(program, "main", {"x": X, "out": np.zeros_like(X)})["out"]
    np.testing.assert_array_equal(got[0], X[1])
