"""Semantics of the indexed ops real kernels use: gathers and scatters by index, block gathers, row gathers, and
the matrix-vector product. Each is PyPTO's documented behaviour (docs/en/dev/ir/05-operators.md and the docstrings
of python/pypto/ir/op/tile_ops.py at e2d0f78ae), and the tests (tests/test_interp_gather_ops.py) hold it to the
golden computations of PyPTO's own op tests (tests/st/runtime/ops), transcribed from torch to numpy.

An index past its source is undefined in PTO (`gather_oob="undefined"`): here it wraps around the source, the
same on both sides of a check, so two programs that index alike still compute alike."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir.expr import Call
from .machine_ops import Evaluator, Semantics, dtype_of, inside, result_tile

_UNSIGNED = (
    0xFFFFFFFF  # an INT32 index is read as the UINT32 the hardware reads (a negative one is past the end)
)
_BLOCK = 32  # bytes of one block of tile.gatherb


def _result(m: Evaluator, c: Call, values: np.ndarray) -> np.ndarray:
    """`values` in the call's result tile: its physical shape, its dtype, zeros past what `values` holds."""
    ty = result_tile(c)
    out = np.zeros(m.ints(ty.shape), dtype=dtype_of(ty.dtype))
    flat = values.reshape(-1)
    n = min(out.size, flat.size)
    out.reshape(-1)[:n] = flat[:n]
    return out


def _indices(x: np.ndarray, size: int, oob: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Flat indices into a source of `size` elements, past it handled as `gather_oob` says (0 undefined and 2
    wrap: around the source; 1 clamp: to its last element; 3 zero: the element reads zero), and where in bounds."""
    k = np.asarray(x).astype(np.int64) & _UNSIGNED
    inside = k < size
    if oob == 1:
        k = np.minimum(k, size - 1)
    elif oob == 3:
        k = np.where(inside, k, 0)
    else:
        k = k % size
    return k, inside if oob == 3 else np.ones(k.shape, dtype=bool)


def _gather(m: Evaluator, c: Call) -> np.ndarray:
    """`tile.gather(src, indices, tmp)`: dst[i, j] = src.flat[indices[i, j]] (index form)."""
    src, idx = m.value(c.args[0]), m.value(c.args[1])
    k, _ = _indices(idx, src.size)
    return _result(m, c, src.reshape(-1)[k])


def _scatter(m: Evaluator, c: Call) -> np.ndarray:
    """`tile.scatter(dst, src, indexes)`: dst.flat[indexes[i, j]] = src[i, j], in ascending order (the last write
    wins), into a copy of dst (DPS: the result is dst rewritten)."""
    out = np.array(m.value(c.args[0]), copy=True)
    return _write_at(out, m.value(c.args[1]), m.value(c.args[2]))


def _mscatter(m: Evaluator, c: Call) -> np.ndarray:
    """`tile.mscatter(src, idx, output_tensor)`: output_tensor.flat[idx[i, j]] = src[i, j], written in place (a
    tensor is a buffer)."""
    return _write_at(m.value(c.args[2]), m.value(c.args[0]), m.value(c.args[1]))


def _write_at(dst: np.ndarray, src: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """dst.flat[idx[i, j]] = src[i, j], in ascending order (the last write wins), in place."""
    k, _ = _indices(idx, dst.size)
    flat = dst.reshape(-1)
    for i, v in zip(k.reshape(-1), src.reshape(-1)):
        flat[i] = v
    return dst


def _mgather(m: Evaluator, c: Call) -> np.ndarray:
    """`tile.mgather(mem, idx, [scratch], [valid_shape], coalesce=, gather_oob=)`: `coalesce` 0 ("row") gathers
    complete rows, out[r, :] = mem[idx.flat[r], :]; 1 ("elem") flat-indexes elements, out[i, j] =
    mem.flat[idx[i, j]]."""
    mem, idx = m.value(c.args[0]), m.value(c.args[1])
    oob = int(c.kwarg("gather_oob", 0) or 0)
    out = np.zeros(m.ints(result_tile(c).shape), dtype=dtype_of(result_tile(c).dtype))
    if int(c.kwarg("coalesce", 0) or 0) == 0:
        rows = mem.reshape(mem.shape[0], -1) if mem.ndim > 1 else mem.reshape(1, -1)
        k, inside = _indices(idx.reshape(-1), rows.shape[0], oob)
        n = min(len(k), out.shape[0])
        picked = rows[k[:n]] * inside[:n, None]
        out[:n, : picked.shape[1]] = picked[:, : out.shape[1]]
        return out
    k, inside = _indices(idx, mem.size, oob)
    values = mem.reshape(-1)[k] * inside
    out.reshape(-1)[: min(out.size, values.size)] = values.reshape(-1)[: out.size]
    return out


def _gatherb(m: Evaluator, c: Call) -> np.ndarray:
    """`tile.gatherb(src, offset, output_dtype=)`: each UINT32 byte offset selects the 32-byte block of src there;
    offset column b of row r fills bytes [32 b, 32 b + 32) of output row r."""
    src, offset = np.ascontiguousarray(m.value(c.args[0])), m.value(c.args[1])
    out = np.zeros(m.ints(result_tile(c).shape), dtype=dtype_of(result_tile(c).dtype))
    source = src.view(np.uint8).reshape(-1)
    target = out.view(np.uint8).reshape(out.shape[0], -1)
    last = max(source.size - _BLOCK, 0)
    for r in range(min(offset.shape[0], target.shape[0])):
        for b in range(min(offset.shape[1], target.shape[1] // _BLOCK)):
            at = (int(offset[r, b]) & _UNSIGNED) % (last + 1)
            target[r, b * _BLOCK : (b + 1) * _BLOCK] = source[at : at + _BLOCK]
    return out


def _gather_row(m: Evaluator, c: Call) -> np.ndarray:
    """`tile.gather_row(dst, src, dst_offset, src_offset, shapes, [valid_shape], transpose=)`: the GM window of
    `valid_shape` (else `shapes`) at src_offset, written into a copy of dst at dst_offset (its transpose there
    when `transpose`)."""
    dst, src = m.value(c.args[0]), m.value(c.args[1])
    dst_off, src_off = m.ints(c.args[2]), m.ints(c.args[3])
    valid = c.args[5] if len(c.args) > 5 else c.kwarg("valid_shape")  # (given by place or by keyword)
    extent = m.ints(valid) if valid is not None else m.ints(c.args[4])
    inside(c.op, "source window", src_off, extent, src.shape)
    block = src[tuple(slice(o, o + n) for o, n in zip(src_off, extent))]
    if c.kwarg("transpose", False):
        block = block.T
    inside(c.op, "destination window", dst_off, block.shape, dst.shape)
    out = np.array(dst, copy=True)
    out[tuple(slice(o, o + n) for o, n in zip(dst_off, block.shape))] = block
    return out


def _gemv(m: Evaluator, c: Call) -> np.ndarray:
    """`tile.gemv(lhs, rhs)`: C[1, N] = A[1, K] @ B[K, N] over the lhs's K (the rhs may have more rows), in row 0
    of the result tile; INT32 for INT8 operands, else FP32."""
    lhs, rhs = m.value(c.args[0]), m.value(c.args[1])
    work = np.int64 if lhs.dtype.kind in "iu" else np.float64
    k = lhs.shape[-1]
    row = lhs[:1, :k].astype(work) @ rhs[:k, :].astype(work)
    out = np.zeros(m.ints(result_tile(c).shape), dtype=dtype_of(result_tile(c).dtype))
    out[:1, : min(row.shape[1], out.shape[1])] = row[:, : out.shape[1]]
    return out


def _tensor_assemble(m: Evaluator, c: Call) -> Any:
    """`tensor.assemble(target, source, offsets)`: source written into target at offsets, in place."""
    target, source, offs = m.value(c.args[0]), m.value(c.args[1]), m.ints(c.args[2])
    inside(c.op, "source", offs, source.shape, target.shape)
    target[tuple(slice(o, o + n) for o, n in zip(offs, source.shape))] = source
    return target


GATHER_SEMANTICS: dict[str, Semantics] = {
    "tile.gather": _gather,
    "tile.scatter": _scatter,
    "tile.mscatter": _mscatter,
    "tile.mgather": _mgather,
    "tile.gatherb": _gatherb,
    "tile.gather_row": _gather_row,
    "tile.gemv": _gemv,
    "tensor.assemble": _tensor_assemble,
}
