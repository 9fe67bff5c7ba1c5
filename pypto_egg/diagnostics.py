"""The pass's user-facing messages: each names the op, the variable, the shapes and the fix."""

from __future__ import annotations

from collections.abc import Sequence

from .errors import InternalError, PassError
from .ir.expr import Expr
from .ir.ops import fmt_shape
from .ir.span import Span
from .ir.types import TileType

PASS = "FlattenTileNdTo2D"
DYNAMIC_REMEDY = (
    "Tile/iterate the dynamic dimension with pl.range/pl.parallel (a static chunk per iteration, the runtime "
    "tail in valid_shape), or reshape to 2D before the InCore (pl.at) scope so the dynamic extent lands on the "
    "pl.parallel loop bound instead of inside the tile shape."
)


def where(var: str | None, span: Span | None) -> str:
    parts = []
    if var:
        parts.append(f"variable '{var}'")
    if span is not None:
        parts.append(f"at {span}")
    return f" [{', '.join(parts)}]" if parts else ""


def dynamic_physical_dim(
    op: str, index: int, shape: Sequence[Expr], var: str | None, span: Span | None
) -> PassError:
    """D-01."""
    return PassError(
        f"{PASS}: tile op '{op}' has a dynamic (non-constant) dimension {index} in its >2D tile shape "
        f"{fmt_shape(shape)}, which cannot be flattened to 2D. Hardware tiles map to fixed-size on-chip buffers, "
        f"so every tile dimension must be a compile-time constant; a pl.dynamic dimension has no static bound "
        f"and cannot back a tile dimension directly. Fix by either: (1) iterating/tiling the dynamic dimension "
        f"with pl.range/pl.parallel so each per-iteration tile slice is static, or (2) reshaping the tensor to 2D "
        f"before the InCore (pl.at) scope so the dynamic extent lands on the pl.parallel loop bound instead of "
        f"inside the tile shape.{where(var, span)}"
    )


def nested_tile_call(op: str, outer: str, var: str | None, span: Span | None) -> PassError:
    """§1: the pass's input has one tile op per statement (PyPTO's reader makes every call a statement of its
    own)."""
    return PassError(
        f"{PASS}: tile op '{op}' is an operand of '{outer}' (a call nested inside another), but the pass takes one "
        f"tile op per statement, as PyPTO's own reader writes them; bind it to a variable of its own first "
        f"(`v = pl.{op}(...)`, then pass `v`){where(var, span)}"
    )


def bmm_acc_not_2d(rank: int, var: str | None, span: Span | None) -> PassError:
    """B-150."""
    return PassError(
        f"{PASS}: tile.batch_matmul_acc expects acc to be 2D after flatten, got rank {rank} (an N-D accumulator "
        f"parameter is never retyped; allocate the accumulator inside the kernel with pl.tile.create)"
        f"{where(var, span)}"
    )


def dynamic_dim(context: str, var: str | None, span: Span | None) -> PassError:
    """D-02."""
    return PassError(
        f"{PASS}: found a dynamic (non-constant) dimension in {context}, but flattening >2D tiles to 2D requires "
        f"every tile dimension to be a compile-time constant. A pl.dynamic dimension has no static bound and "
        f"cannot back a tile dimension directly. {DYNAMIC_REMEDY}{where(var, span)}"
    )


def acc_dims_not_static(acc: object, var: str | None, span: Span | None) -> PassError:
    """B-152: the per-page windows of an accumulator need its flattened dims."""
    shape = fmt_shape(acc.shape) if isinstance(acc, TileType) else "?"
    return PassError(
        f"{PASS}: tile.batch_matmul_acc expects static acc dims after flatten, but the accumulator is {shape}; "
        f"allocate it with a static shape (pl.tile.create([...], ...) with constant dims){where(var, span)}"
    )


def non_positive_dim(index: int, context: str, value: int, var: str | None, span: Span | None) -> PassError:
    """D-02a."""
    return PassError(
        f"{PASS}: tile dimension {index} must be positive in {context}, got {value}; a tile of zero or negative "
        f"extent cannot be flattened (give the tile a positive static shape){where(var, span)}"
    )


def merged_dim_overflow(context: str, merged: int, dim: int, var: str | None, span: Span | None) -> PassError:
    """D-02b."""
    return PassError(
        f"{PASS}: integer overflow when computing merged dimension in {context} (merged={merged}, dim={dim}); "
        f"the flattened row count does not fit a 64-bit index. Split the tile into smaller pages{where(var, span)}"
    )


def unsupported_on_nd(op: str, shape: Sequence[Expr], var: str | None, span: Span | None) -> PassError:
    """D-03."""
    return PassError(
        f"{PASS}: {op} is not supported on >2D tiles (operand shape {fmt_shape(shape)}). Reshape the tile to 2D "
        f"with pl.tile.reshape first, or index the flattened [rows, cols] tile.{where(var, span)}"
    )


def no_deduction_on_nd(op: str, shape: Sequence[Expr], var: str | None, span: Span | None) -> PassError:
    """An op whose result type the pass cannot re-derive (it has no type deduction) meets an N-D tile."""
    return PassError(
        f"{PASS}: {op} cannot be flattened: it has no shape rule for a >2D tile (tile shape {fmt_shape(shape)}), so "
        f"its 2D result type is unknown. Reshape the tile to 2D with pl.tile.reshape before {op}, or keep this "
        f"computation 2D.{where(var, span)}"
    )


def assemble_not_literal(var: str | None, span: Span | None) -> PassError:
    """D-04."""
    return PassError(
        f"{PASS}: tile.assemble requires a tile source and a literal offset tuple (write the offset as a list "
        f"like [0, i, 0]).{where(var, span)}"
    )


def assemble_offset_rank(rank: int, k: int, var: str | None, span: Span | None) -> PassError:
    """D-05."""
    return PassError(
        f"{PASS}: tile.assemble into a {rank}D tile has a rank-{k} offset. The offset names a point in the "
        f"target's own coordinate space, so it needs exactly one index per target dimension.{where(var, span)}"
    )


def assemble_source_rank(rank: int, src: Sequence[Expr], var: str | None, span: Span | None) -> PassError:
    """D-06."""
    return PassError(
        f"{PASS}: tile.assemble into a {rank}D tile has a rank-{len(src)} source {fmt_shape(src)}. Reshape the "
        f"source to the target rank (pl.tile.reshape) before assembling.{where(var, span)}"
    )


def assemble_noncontiguous(
    src: Sequence[Expr], dst: Sequence[Expr], var: str | None, span: Span | None
) -> PassError:
    """D-07."""
    return PassError(
        f"{PASS}: tile.assemble writes a {fmt_shape(src)} region into a {fmt_shape(dst)} tile, which does not "
        f"collapse to a contiguous row band when the tile is flattened to 2D (hardware tiles are always 2D). "
        f"Every dimension below the outermost partial one must be written in full. Fix by looping over the outer "
        f"dimension and assembling one contiguous page per iteration.{where(var, span)}"
    )


def reduce_keepdim(op: str, var: str | None, span: Span | None) -> PassError:
    """The historical reduction check (§3.8): a >2D reduction must keep its reduced axis."""
    return PassError(
        f"{PASS}: tile reduce op '{op}' on >2D tile must use keepdim=True to maintain 2D output shape "
        f"(drop the reduced axis after flattening instead).{where(var, span)}"
    )


def store_failure(code: str, nums: Sequence[int], var: str | None, span: Span | None) -> PassError | None:
    """D-12..D-16: the partition window has no legal box."""
    a, b, c, d, e = (list(nums) + [0] * 5)[:5]
    text = {
        "D-12": f"tile.store cannot lower a {a}x{b} tile into this tensor: its rows span several axes, so they "
        f"must fill axis {c} (extent {d}) a whole number of times, but {e} rows remain. A flattened store "
        f"writes consecutive row-major positions, and no partition window describes that here. Store one "
        f"whole axis at a time (loop the outer axis with pl.range/pl.parallel), or reshape the destination "
        f"so the tile's rows are a single axis",
        "D-13": f"tile.store fills axis {a} (extent {b}) completely, so it must start at offset 0; a non-zero "
        f"offset there would make the written region a non-contiguous run that no partition window "
        f"describes. Store from offset 0 on that axis, or loop over it and store one page at a time",
        "D-14": f"tile.store writes {a} columns at offset {b} of an axis whose extent is {c}; the write runs past "
        f"the tensor. Shrink the tile's columns or move the column offset",
        "D-15": f"tile.store writes {a} rows at offset {b} of axis {c}, whose extent is {d}; the write runs past "
        f"the tensor. Shrink the tile or move the offset on axis {c}",
        "STORE-RANK": f"tile.store writes a rank-{a} tile into a rank-{b} tensor; the tile's rank must be at most "
        f"the tensor's. Reshape the tile to the tensor's rank (pl.tile.reshape) before storing it",
        "D-16": f"tile.store writes a {a}x{b} tile into a tensor whose leading axes hold only {c} rows; the write "
        f"runs past the tensor. Store fewer rows, or into a larger tensor",
    }.get(code)
    return PassError(text + where(var, span)) if text else None


def given_window_rejected(
    code: str,
    nums: Sequence[int],
    tile_valid: Sequence[Expr],
    window: Sequence[Expr],
    tensor: Sequence[Expr],
    offsets: Sequence[Expr],
    var: str | None,
    span: Span | None,
) -> PassError:
    """A store's own partition window that cannot hold its tile: the pass keeps a given window and never
    replaces it, so it says what is wrong with it."""
    a, b, c, d = (list(nums) + [0] * 4)[:4]
    w, t, v, o = fmt_shape(window), fmt_shape(tensor), fmt_shape(tile_valid), fmt_shape(offsets)
    why = {
        "STORE-GIVEN-COUNT": f"the window {w} holds {a} elements but the tile's valid extent {v} has {b}",
        "STORE-GIVEN-RANK": f"the window {w} has {a} entries for a rank-{b} tensor {t}",
        "STORE-GIVEN-BOUNDS": f"the window {w} at offsets {o} runs past axis {a} of the tensor {t} "
        f"({b} + {c} > {d})",
    }[code]
    return PassError(
        f"{PASS}: tile.store carries the partition window {w}, which cannot hold its tile: {why}. The pass keeps "
        f"a window it is given (replacing it would write the tile elsewhere). Give a window with the tile's "
        f"element count that stays inside the tensor from the store's offsets, or drop the 4th operand and let "
        f"the pass compute it{where(var, span)}"
    )


def batch_dims_do_not_broadcast(op: str, a: int, b: int, var: str | None, span: Span | None) -> PassError:
    """FlattenTileNdTo2D: tile.batch_matmul batch dimensions must broadcast."""
    return PassError(
        f"{PASS}: {op} batch dimensions must broadcast, but extents {a} and {b} meet on one axis (each batch axis "
        f"must be equal, or 1 on one side){where(var, span)}"
    )


def bmm_store_rank(var: str | None, span: Span | None) -> PassError:
    return PassError(
        f"{PASS}: tile.store offsets rank must match batch_matmul result rank (one offset per batch axis plus the "
        f"two matrix axes){where(var, span)}"
    )


def transpose_batch_axis(a1: int, a2: int, rank: int, var: str | None, span: Span | None) -> PassError:
    """D-20."""
    return PassError(
        f"{PASS}: only last-two-axes tile.transpose on >2D tiles is supported; transpose involving a batch axis "
        f"(axes {a1}, {a2} of rank {rank}) is not yet lowered. Reshape the tile so the transposed axes are the "
        f"last two.{where(var, span)}"
    )


def transpose_axis_range(axis: int, rank: int, var: str | None, span: Span | None) -> PassError:
    """D-21."""
    return PassError(
        f"{PASS}: axis {axis} is out of range for rank {rank} in tile.transpose{where(var, span)}"
    )


def internal(message: str) -> InternalError:
    return InternalError(f"{PASS}: internal error: {message}")


_CHAIN_REASONS = {
    "R2": "the same accumulator is written by two tile.batch_matmul_acc calls with different batch geometries, so "
          "there is no single packed shape for it",
    "R3": "the accumulator is allocated by several separate definitions that control flow then merges into one "
          "value, and reconciling them would need an L0C-to-L0C copy the hardware does not have",
    "R4": "the accumulator element is not 4 bytes wide ({dtype}), so its L0C tile has no 16x16 box grid",
    "R5": "the page row extent M={m} is not a multiple of 16",
    "R6": "the page column extent N={n} is not a multiple of 16",
    "R7": "the packed accumulator needs {bytes} bytes of Acc (L0C), but this target's L0C holds {budget} bytes",
    "R9": "the accumulator reaches a function parameter or a control-flow carry this pass cannot retype",
    "R10": "an SSA name for the accumulator does not carry its {rank}-D shape, so the chain is not one buffer",
    "R11": "the accumulator carries a partial valid_shape, which has no equivalent once the pages sit side by side "
           "in one tile",
    "R13": "the accumulator is annotated to live in {op} memory, but only the matrix unit writes Acc (L0C)",
    "R16": "the accumulator is produced by {op}, which cannot write Acc (L0C) at all -- only the matrix unit writes "
           "that memory, and no target has a data path into it",
    "R19": "the accumulator is stored through a tile.store whose window this pass cannot split into one store per "
           "batch page",
    "R20": "the accumulator is drained by tile.move into a vector epilogue, and gathering the pages of a multi-batch "
           "Acc (L0C) result into one vector tile is not expressible -- the moved pages keep L0C's block layout, "
           "which tile.assemble cannot write into a row-packed vector tile",
    "R21": "the accumulator is consumed by an op that reads it as one flat tile rather than one page at a time",
}  # fmt: skip
_CHAIN_WORKAROUNDS = {
    "R3": "Workaround: give the accumulator a single allocation that every branch and iteration writes in place -- "
          "hoist the tile.create above the branch (or the loop) and make the first-iteration case a "
          "tile.batch_matmul_acc with init_cond=True, which overwrites the pages instead of allocating a second buffer.",
    "R16": "Workaround: an accumulator has to come from a matmul, or from an allocation (pl.tile.create) the compiler "
           "is free to place in Acc memory. This is not about the batch dimension -- the same accumulator fails the "
           "same way at batch 1.",
    "R20": "Workaround: store each batch page to global memory and reload it for the vector work, or write the batch "
           "loop out in the kernel. This limit is not specific to accumulators -- a plain batch>1 pl.matmul followed "
           "by a vector op fails the same way, at any page width.",
}  # fmt: skip
_DEFAULT_WORKAROUND = (
    "Workarounds: write the batch loop out in the kernel and accumulate each page into its own 2-D tile "
    "(pl.matmul / pl.matmul_acc on 2-D operands); or keep the accumulator at most 16 columns wide, which fits a "
    "single L0C block column and needs no packing."
)


def accumulator_rejected(reason: str, b: int, m: int, n: int, dtype: str, rank: int, budget: int, var: str | None,
                         span: Span | None) -> PassError:  # fmt: skip
    """D-30: a batched accumulator chain that can neither be packed along columns nor stay row-packed.
    `reason` may name the op behind it (`R16:tile.load`); `budget` is the target's L0C bytes."""
    reason, _, op = reason.partition(":")
    text = _CHAIN_REASONS.get(reason, reason).format(
        dtype=dtype, m=m, n=n, bytes=b * m * n * 4, rank=rank, budget=budget, op=op or "another op"
    )
    geometry = ""
    if reason not in ("R3", "R16", "R20"):
        geometry = (
            f"The pages of a batched accumulator have to be packed along COLUMNS — one {m}x{b * n} Acc (L0C) tile "
            f"with page b at tile.slice(acc, [{m}, {n}], [0, b * {n}]) — because the hardware MAD writes its "
            f"destination compactly and has no destination stride, so a row window of a multi-block-column "
            f"accumulator is not addressable. That packing needs M and N to be whole multiples of 16, a 4-byte "
            f"(FP32/INT32) accumulator, one buffer per chain, and the whole {b * m * n * 4}-byte tile to fit L0C.\n"
        )
    return PassError(
        f"tile.batch_matmul_acc: cannot lower a batch-{b} accumulator of {m}x{n} {dtype} pages, because {text}.\n"
        f"{geometry}{_CHAIN_WORKAROUNDS.get(reason, _DEFAULT_WORKAROUND)}{where(var, span)}"
    )


_ROW_REASONS = {
    "R2W": "the same accumulator is written through row windows of different heights ({r} rows here, {x} rows in "
           "another window), so there is no single packed shape for it",
    "R4": "the accumulator element is not 4 bytes wide, so its L0C tile has no 16x16 box grid",
    "R5": "the window row extent R={r} is not a multiple of 16",
    "R6": "the accumulator column extent C={c} is not a multiple of 16",
    "R8": "the {b} packed {r}x{c} row windows need {bytes} bytes of Acc (L0C), but this target's L0C holds {x} bytes",
    "R9": "the accumulator reaches a function parameter or a control-flow carry this pass cannot retype",
    "R11": "the accumulator carries a partial valid_shape, which has no equivalent once the windows sit side by side",
    "R12": "the accumulator has an explicitly bound MemRef whose physical layout cannot be repacked",
    "R15": "the parent accumulator is produced by {op}; row-window packing requires tile.create followed by slice "
           "writebacks",
    "R17": "a row window does not have the common static row extent and an aligned row offset",
    "R18": "the slice assignment does not write a matmul_acc result back to its original window",
}  # fmt: skip


def row_windows_do_not_divide(r: int, p: int, var: str | None, span: Span | None) -> PassError:
    """D-40."""
    return PassError(
        f"matmul_acc accumulator row windows must evenly divide the parent row extent; got {r} rows in a {p}-row "
        f"accumulator (choose a window height that divides {p}){where(var, span)}"
    )


def row_windows_rejected(
    reason: str, r: int, c: int, p: int, x: int, var: str | None, span: Span | None
) -> PassError:
    """D-41: a seeded row-window chain that cannot be packed; `p` is the parent's rows, `x` the number the reason
    names (the other window height for R2W, the L0C budget for R8)."""
    reason, _, op = reason.partition(":")
    text = _ROW_REASONS.get(reason, reason).format(
        r=r, c=c, x=x, b=p // r if r else 0, bytes=p * c * 4, op=op or "a non-call value"
    )
    return PassError(
        f"matmul_acc: cannot lower the shared accumulator's row slices because {text}. Use acc[...] = "
        f"pl.matmul_acc(acc[...], lhs, rhs, init_cond=...) with equal-size, aligned row windows of one locally "
        f"allocated accumulator, and store the result after reduction.{where(var, span)}"
    )
