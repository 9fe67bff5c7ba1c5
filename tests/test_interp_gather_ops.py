"""The interpreter's gathers and scatters against the golden computations of PyPTO's own op tests
(tests/st/runtime/ops at e2d0f78ae: test_gather.py, test_scatter.py, test_mscatter.py, test_mgather.py,
test_gatherb.py, test_gather_row_dynamic_valid_shape.py, test_gemv.py), each transcribed from torch to numpy and
run on the inputs those tests make."""

from __future__ import annotations

import numpy as np
import pytest

import pypto_egg.language as pl
from pypto_egg import interp

HEAD = "import pypto_egg.language as pl\n\n@pl.program\nclass P:\n    @pl.function(type=pl.FunctionType.InCore)\n"


def run(body: str, inputs: dict[str, np.ndarray]) -> np.ndarray:
    program = pl.parse(HEAD + body)
    return interp.run(program, "main", inputs)["out"]


def test_gather_by_index_reads_each_rows_elements_as_torch_gather_does():
    # test_gather.py, rank 2, dim=-1 on A2A3: one tile.gather a row, its column index the flat index in the row
    rng = np.random.default_rng(0)
    inp = rng.standard_normal((4, 16)).astype(np.float32)
    idx = rng.integers(0, 16, (4, 8)).astype(np.int32)
    body = """    def main(self, inp: pl.Tensor[[4, 16], pl.FP32], idx: pl.Tensor[[4, 8], pl.INT32],
             out: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        for r, (o,) in pl.range(4, init_values=(out,)):
            row = pl.load(inp, [r, 0], [1, 16])
            ix = pl.load(idx, [r, 0], [1, 8])
            tmp = pl.tile.create([1, 8], dtype=pl.INT32, target_memory=pl.Mem.Vec)
            g: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.gather(row, ix, tmp)
            o2 = pl.store(g, [r, 0], o)
            res = pl.yield_(o2)
        return res
"""
    program = pl.parse(HEAD + body)
    got = interp.run(program, "main", {"inp": inp, "idx": idx, "out": np.zeros((4, 8), np.float32)})[
        "return"
    ][0]
    np.testing.assert_array_equal(got, np.take_along_axis(inp, idx.astype(np.int64), axis=-1))


def test_scatter_writes_each_element_at_its_flat_index_the_last_write_winning():
    # test_scatter.py: base -(j + 1 + i), index (m // 2 + i) % S repeated, values i*K + m + 1, ascending m wins
    s, k = 16, 8
    base = (-(np.arange(s) + 1)).astype(np.float32).reshape(1, s)
    index = ((np.arange(k) // 2) % s).astype(np.int32).reshape(1, k)
    values = (np.arange(k) + 1).astype(np.float32).reshape(1, k)
    want = base.copy()
    for m in range(k):
        want[0, int(index[0, m])] = values[0, m]
    body = f"""    def main(self, dst: pl.Tensor[[1, {s}], pl.FP32], val: pl.Tensor[[1, {k}], pl.FP32],
             idx: pl.Tensor[[1, {k}], pl.INT32], out: pl.Out[pl.Tensor[[1, {s}], pl.FP32]]) -> pl.Tensor[[1, {s}], pl.FP32]:
        d = pl.load(dst, [0, 0], [1, {s}])
        v = pl.load(val, [0, 0], [1, {k}])
        i = pl.load(idx, [0, 0], [1, {k}])
        r: pl.Tile[[1, {s}], pl.FP32, pl.Mem.Vec] = pl.tile.scatter(d, v, i)
        out = pl.store(r, [0, 0], out)
        return out
"""
    got = run(body, {"dst": base, "val": values, "idx": index, "out": np.zeros((1, s), np.float32)})
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("order", ["sequential", "reversed", "permuted"])
def test_mscatter_writes_the_tensor_at_each_elements_index(order):
    # test_mscatter.py: out = zeros(256); out[idx.flatten()] = src.flatten()
    src = np.random.default_rng(1).standard_normal((8, 32)).astype(np.float32)
    idx = {"sequential": np.arange(256), "reversed": np.arange(255, -1, -1),
           "permuted": np.random.default_rng(2).permutation(256)}[order].astype(np.int32).reshape(8, 32)  # fmt: skip
    want = np.zeros(256, np.float32)
    want[idx.reshape(-1)] = src.reshape(-1)
    body = """    def main(self, src: pl.Tensor[[8, 32], pl.FP32], idx: pl.Tensor[[8, 32], pl.INT32],
             out: pl.Out[pl.Tensor[[256], pl.FP32]]) -> pl.Tensor[[256], pl.FP32]:
        s = pl.load(src, [0, 0], [8, 32])
        i = pl.load(idx, [0, 0], [8, 32])
        out: pl.Tensor[[256], pl.FP32] = pl.tile.mscatter(s, i, out)
        return out
"""
    got = run(body, {"src": src, "idx": idx, "out": np.zeros(256, np.float32)})
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("oob", ["undefined", "clamp", "wrap", "zero"])
def test_mgather_of_rows_as_the_row_coalescing_golden(oob):
    # test_mgather.py MgatherRowTestCase: table arange % 97, indices with or without out-of-bounds ones
    rows, cols, n = 64, 32, 16
    table = (np.arange(rows * cols).reshape(rows, cols) % 97).astype(np.float32)
    values = ([-1, 64, 65, 7, 80, 0, 18, 55, 4, 70, 13, 47, 8, 38, 22, 60] if oob != "undefined"
              else [63, 2, 41, 7, 31, 0, 18, 55, 4, 29, 13, 47, 8, 38, 22, 60])  # fmt: skip
    indices = np.array(values, dtype=np.int32).reshape(1, n)
    active = indices.reshape(-1).astype(np.int64) & 0xFFFFFFFF
    want = np.zeros((n, cols), np.float32)
    if oob == "clamp":
        want[:] = table[np.minimum(active, rows - 1)]
    elif oob == "wrap":
        want[:] = table[active % rows]
    elif oob == "zero":
        inside = active < rows
        want[inside] = table[active[inside]]
    else:
        want[:] = table[active]
    code = {"undefined": 0, "clamp": 1, "wrap": 2, "zero": 3}[oob]
    body = f"""    def main(self, mem: pl.Tensor[[{rows}, {cols}], pl.FP32], idx: pl.Tensor[[1, {n}], pl.INT32],
             out: pl.Out[pl.Tensor[[{n}, {cols}], pl.FP32]]) -> pl.Tensor[[{n}, {cols}], pl.FP32]:
        i = pl.load(idx, [0, 0], [1, {n}])
        g: pl.Tile[[{n}, {cols}], pl.FP32, pl.Mem.Vec] = pl.tile.mgather(mem, i, coalesce=0, gather_oob={code})
        out = pl.store(g, [0, 0], out)
        return out
"""
    got = run(body, {"mem": table, "idx": indices, "out": np.zeros((n, cols), np.float32)})
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("oob", ["undefined", "clamp", "wrap", "zero"])
def test_mgather_of_elements_as_the_element_coalescing_golden(oob):
    # test_mgather.py MgatherElemTestCase: table arange % 53 over 8 x 32, indices reversed or shifted past the ends
    m, n = 8, 32
    size = m * n
    table = (np.arange(size) % 53).astype(np.float32)
    if oob == "undefined":
        indices = np.arange(size - 1, -1, -1, dtype=np.int32)
    else:
        indices = np.arange(size, dtype=np.int32) - 4
        indices[0:4] = [-1, size, size + 1, size * 2 + 3]
    indices = indices.reshape(m, n)
    k = indices.astype(np.int64) & 0xFFFFFFFF
    want = {"clamp": lambda: table[np.minimum(k, size - 1)], "wrap": lambda: table[k % size],
            "zero": lambda: np.where(k < size, table[np.where(k < size, k, 0)], 0),
            "undefined": lambda: table[k]}[oob]()  # fmt: skip
    code = {"undefined": 0, "clamp": 1, "wrap": 2, "zero": 3}[oob]
    body = f"""    def main(self, mem: pl.Tensor[[{size}], pl.FP32], idx: pl.Tensor[[{m}, {n}], pl.INT32],
             out: pl.Out[pl.Tensor[[{m}, {n}], pl.FP32]]) -> pl.Tensor[[{m}, {n}], pl.FP32]:
        i = pl.load(idx, [0, 0], [{m}, {n}])
        g: pl.Tile[[{m}, {n}], pl.FP32, pl.Mem.Vec] = pl.tile.mgather(mem, i, coalesce=1, gather_oob={code})
        out = pl.store(g, [0, 0], out)
        return out
"""
    got = run(body, {"mem": table, "idx": indices, "out": np.zeros((m, n), np.float32)})
    np.testing.assert_array_equal(got, want.astype(np.float32))


@pytest.mark.parametrize("pattern", ["reverse", "roll3"])
def test_gatherb_copies_each_32_byte_block_its_offset_names(pattern):
    # test_gatherb.py: source arange over 8 rows x 8 blocks, byte offsets reversed or rolled by three blocks
    rows, per_row = 8, 8
    blocks = rows * per_row
    source = np.arange(blocks * 32 // 4, dtype=np.float32).reshape(1, -1)
    k = np.arange(blocks)
    offsets = ((blocks - 1 - k) * 32 if pattern == "reverse" else ((k + 3) % blocks) * 32).astype(np.uint32)
    offsets = offsets.reshape(rows, per_row)
    want = np.zeros((rows, per_row * 8), np.float32)
    src_bytes, want_bytes = source.view(np.uint8).reshape(-1), want.view(np.uint8).reshape(rows, -1)
    for r in range(rows):
        for b in range(per_row):
            o = int(offsets[r, b])
            want_bytes[r, b * 32 : b * 32 + 32] = src_bytes[o : o + 32]
    cols = source.shape[1]
    body = f"""    def main(self, src: pl.Tensor[[1, {cols}], pl.FP32], off: pl.Tensor[[{rows}, {per_row}], pl.UINT32],
             out: pl.Out[pl.Tensor[[{rows}, {per_row * 8}], pl.FP32]]) -> pl.Tensor[[{rows}, {per_row * 8}], pl.FP32]:
        s = pl.load(src, [0, 0], [1, {cols}])
        o = pl.load(off, [0, 0], [{rows}, {per_row}])
        g: pl.Tile[[{rows}, {per_row * 8}], pl.FP32, pl.Mem.Vec] = pl.tile.gatherb(s, o)
        out = pl.store(g, [0, 0], out)
        return out
"""
    got = run(body, {"src": source, "off": offsets, "out": np.zeros_like(want)})
    np.testing.assert_array_equal(got, want)


def test_gather_row_overwrites_only_its_valid_rows_as_the_dynamic_valid_shape_golden():
    # test_gather_row_dynamic_valid_shape.py: src[p, c] = p; a sentinel fill from row 64, then the first r rows
    pool, head, window, r = 192, 16, 32, 5
    src = np.repeat(np.arange(pool, dtype=np.float32).reshape(pool, 1), head, axis=1)
    want = src[64 : 64 + window, :head].copy()
    want[:r, :] = src[:r, :head]
    body = f"""    def main(self, src: pl.Tensor[[{pool}, {head}], pl.FP32], out: pl.Out[pl.Tensor[[{window}, {head}], pl.FP32]]) -> pl.Tensor[[{window}, {head}], pl.FP32]:
        kv = pl.tile.create([{window}, {head}], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        kv1: pl.Tile[[{window}, {head}], pl.FP32, pl.Mem.Vec] = pl.tile.gather_row(kv, src, [0, 0], [64, 0], [{window}, {head}])
        kv2: pl.Tile[[{window}, {head}], pl.FP32, pl.Mem.Vec] = pl.tile.gather_row(kv1, src, [0, 0], [0, 0], [{window}, {head}], valid_shape=[{r}, {head}])
        out = pl.store(kv2, [0, 0], out)
        return out
"""
    got = run(body, {"src": src, "out": np.zeros((window, head), np.float32)})
    np.testing.assert_array_equal(got, want)


def test_gemv_is_a_row_times_a_matrix_in_row_zero_of_its_accumulator():
    # test_gemv.py: result = matmul(a, b) in FP32
    rng = np.random.default_rng(3)
    a = rng.standard_normal((1, 32)).astype(np.float16)
    b = rng.standard_normal((32, 64)).astype(np.float16)
    body = """    def main(self, a: pl.Tensor[[1, 32], pl.FP16], b: pl.Tensor[[32, 64], pl.FP16],
             out: pl.Out[pl.Tensor[[1, 64], pl.FP32]]) -> pl.Tensor[[1, 64], pl.FP32]:
        ta = pl.load(a, [0, 0], [1, 32])
        tb = pl.load(b, [0, 0], [32, 64])
        c: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc, pl.TileView(valid_shape=[1, 64])] = pl.tile.gemv(ta, tb)
        out = pl.store(c, [0, 0], out)
        return out
"""
    got = run(body, {"a": a, "b": b, "out": np.zeros((1, 64), np.float32)})
    np.testing.assert_allclose(got, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-5, atol=1e-5)
