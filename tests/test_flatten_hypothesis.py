"""Generated InCore programs of rank 3-5: the pass must give verified 2-D programs with the same outputs.

The default profile runs 300 examples; `PYPTO_EGG_HYPOTHESIS=long` runs 10,000.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import pypto_egg.language as pl
from pypto_egg import interp, ir, passes
from pypto_egg.backend import Backend
from pypto_egg.errors import PassError
from pypto_egg.ir import python_print
from pypto_egg.ir.tiles import tile_nbytes
from pypto_egg.ir.types import MemorySpace

UNARY = ["pl.tile.exp", "pl.tile.neg", "pl.tile.abs", "pl.tile.relu"]
BINARY = ["pl.tile.add", "pl.tile.sub", "pl.tile.mul", "pl.tile.maximum", "pl.tile.minimum"]


def fmt(dims: list[int]) -> str:
    return "[" + ", ".join(map(str, dims)) + "]"


@st.composite
def programs(draw: st.DrawFn) -> tuple[ir.Program, int]:
    ref = draw(
        st.booleans()
    )  # spell it as the reference prints it (annotated yields, scratch tiles, MemRefs, ...)
    rank = draw(st.integers(3, 5))
    shape = [draw(st.integers(1, 3)) for _ in range(rank - 1)] + [draw(st.sampled_from([1, 2, 4, 8]))]
    big = [2 * shape[0], *shape[1:]]
    zeros = [0] * rank

    def memref(dims: list[int], i: int) -> str:
        size = 4
        for d in dims:
            size *= d
        return f', pl.MemRef("mem_ddr_{i}", 0, {size})' if ref else ""

    params = [
        f"x: pl.Tensor[{fmt(big)}, pl.FP32{memref(big, 0)}]",
        f"y: pl.Tensor[{fmt(shape)}, pl.FP32{memref(shape, 1)}]",
        "k: pl.Scalar[pl.INDEX]",
    ]
    loaded = f"{fmt(shape)}, target_memory=pl.Mem.Vec" if ref else ""
    outs: list[tuple[str, list[int]]] = [("out", big)]
    lines: list[str] = []
    pool = ["t0"]
    load = "pl.tile.load" if ref else "pl.load"
    start = fmt([draw(st.sampled_from([0, shape[0]])), *zeros[1:]])
    lines.append(f"t0 = {load}(x, {start}, {fmt(shape)}{', ' + loaded if ref else ''})")
    lines.append(f"t1 = {load}(y, {fmt(zeros)}, {fmt(shape)}{', ' + loaded if ref else ''})")
    pool.append("t1")
    n = 2

    def fresh() -> str:
        nonlocal n
        n += 1
        return f"v{n}"

    def side_store(var: str, dims: list[int]) -> None:
        name = f"side{len(outs)}"
        outs.append((name, dims))
        lines.append(f"{name} = pl.store({var}, {fmt([0] * len(dims))}, {name})")

    steps = draw(st.integers(2, 9))
    for _ in range(steps):
        kind = draw(st.sampled_from(
            ["unary", "binary", "scalar", "cast", "full", "assemble", "reshape", "transpose", "reduce", "loop", "if",
             "partial", "rows"]
        ))  # fmt: skip
        a = draw(st.sampled_from(pool))
        v = fresh()
        if kind == "unary":
            lines.append(f"{v} = {draw(st.sampled_from(UNARY))}({a})")
        elif kind == "binary":
            lines.append(f"{v} = {draw(st.sampled_from(BINARY))}({a}, {draw(st.sampled_from(pool))})")
        elif kind == "scalar":
            op = draw(st.sampled_from(["pl.tile.muls", "pl.tile.adds"]))
            lines.append(f"{v} = {op}({a}, {draw(st.sampled_from(['0.5', '2.0', '-1.0']))})")
        elif kind == "cast" and ref:
            lines.append(f"{v}_h = pl.tile.cast({a}, pl.FP16)")
            lines.append(f"{v} = pl.tile.cast({v}_h, target_type=pl.FP32, mode='round')")
        elif kind == "cast":
            lines.append(f"{v}_h = pl.cast({a}, target_type=pl.FP16)")
            lines.append(f"{v} = pl.cast({v}_h, target_type=pl.FP32)")
        elif kind == "full":
            lines.append(f"{v}_f = pl.tile.full({fmt(shape)}, dtype=pl.FP32, value=1.5)")
            lines.append(f"{v} = pl.tile.add({a}, {v}_f)")
        elif kind == "assemble":
            target = [2 * shape[0], *shape[1:]]
            lines.append(f"{v}_c = pl.tile.full({fmt(target)}, dtype=pl.FP32, value=0.0)")
            off = [draw(st.sampled_from([0, shape[0]])), *zeros[1:]]
            lines.append(f"{v}_a = pl.tile.assemble({v}_c, {a}, {fmt(off)})")
            side_store(f"{v}_a", target)
            continue
        elif kind == "reshape":
            split = [1, *shape]
            lines.append(f"{v}_r = pl.tile.reshape({a}, {fmt(split)})")
            lines.append(f"{v} = pl.tile.reshape({v}_r, {fmt(shape)})")
        elif kind == "transpose":
            swapped = [*shape[:-2], shape[-1], shape[-2]]
            lines.append(f"{v}_t = pl.transpose({a}, axis1={rank - 2}, axis2={rank - 1})")
            side_store(f"{v}_t", swapped)
            lines.append(f"{v} = pl.transpose({v}_t, axis1=-1, axis2=-2)")
        elif kind == "reduce":
            # row_min reads row-major tiles only, and a [.., 1] tile is a col_major column
            op = draw(
                st.sampled_from(
                    ["pl.tile.row_sum", "pl.tile.row_max"] + ["pl.tile.row_min"] * (shape[-1] > 1)
                )
            )
            if ref:  # the reference's reductions take a scratch tile
                lines.append(
                    f"{v}_tmp = pl.tile.create({fmt(shape)}, dtype=pl.FP32, target_memory=pl.Mem.Vec)"
                )
                lines.append(f"{v}_s = {op}({a}, {v}_tmp)")
            else:
                lines.append(f"{v}_s = {op}({a})")
            side_store(f"{v}_s", [*shape[:-1], 1])
            continue
        elif kind == "partial":
            # a dynamic valid extent on the first non-unit axis (leading axes 1): the tail survives the merge
            window = [1] * (rank - 2) + shape[-2:]
            valid = [1] * (rank - 2) + ["pl.min(k + 1, " + str(shape[-2]) + ")", str(shape[-1])]
            side_store_valid = f"{v}_p"
            lines.append(
                f"{v}_p = pl.load(x, {fmt(zeros)}, {fmt(window)}, valid_shape=[{', '.join(map(str, valid))}])"
            )
            lines.append(f"{v}_e = pl.tile.exp({side_store_valid})")
            side_store(f"{v}_e", [*([1] * (rank - 2)), shape[-2], shape[-1]])
            continue
        elif kind == "rows":
            # a 2-D tile whose rows span the tensor's leading axes: the store window walks outward
            rows = 1
            for d in shape[:-1]:
                rows *= d
            lines.append(f"{v}_w = pl.tile.reshape({a}, {fmt([rows, shape[-1]])})")
            lines.append(f"{v}_x = pl.tile.muls({v}_w, 1.5)")
            side_store(f"{v}_x", shape)
            continue
        elif kind == "loop":
            b = draw(st.sampled_from(pool))
            count = draw(st.integers(1, 3))
            lines.append(f"for i_{v}, (acc_{v},) in pl.range({count}, init_values=({a},)):")
            lines.append(f"    s_{v} = pl.tile.add(acc_{v}, {b})")
            annotation = f": pl.Tile[{fmt(shape)}, pl.FP32]" if ref else ""
            lines.append(f"    {v}{annotation} = pl.yield_(s_{v})")
        else:
            lines.append(f"if k > {draw(st.integers(0, 2))}:")
            lines.append(f"    p_{v} = {draw(st.sampled_from(UNARY))}({a})")
            lines.append(f"    {v} = pl.yield_(p_{v})")
            lines.append("else:")
            lines.append(f"    q_{v} = pl.tile.muls({a}, 3.0)")
            lines.append(f"    {v} = pl.yield_(q_{v})")
        pool.append(v)
    final = draw(st.sampled_from(pool))
    off = [draw(st.sampled_from([0, shape[0]])), *zeros[1:]]
    lines.append(f"out = pl.store({final}, {fmt(off)}, out)")
    lines.append("return out")
    params += [f"{name}: pl.Out[pl.Tensor[{fmt(dims)}, pl.FP32]]" for name, dims in outs]
    body = "\n".join("        " + line for line in lines)
    deco = (
        "type=pl.FunctionType.InCore, level=pl.Level.CHIP_DIE, role=pl.Role.SubWorker"
        if ref
        else "type=pl.FunctionType.InCore"
    )
    this = "" if ref else "self, "
    text = f"""
import pypto_egg.language as pl

@pl.program
class Generated:
    @pl.function({deco})
    def main({this}{", ".join(params)}) -> pl.Tensor[{fmt(big)}, pl.FP32]:
{body}
"""
    if ref:  # an orchestration function that calls the kernel with its argument directions
        names = [p.split(":")[0] for p in params]
        outer = ", ".join(p for p in params)
        directions = ["pl.adir.input", "pl.adir.input", "pl.adir.scalar"] + ["pl.adir.output_existing"] * len(
            outs
        )
        text += f"""
    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.CHIP, role=pl.Role.Orchestrator, auto_scope=False)
    def orch(self, {outer}) -> pl.Tensor[{fmt(big)}, pl.FP32]:
        x2: pl.Tensor[{fmt(big)}, pl.FP32] = pl.tensor.muls(x, 1.0)
        r: pl.Tensor[{fmt(big)}, pl.FP32] = self.main(x2, {", ".join(names[1:])}, attrs={{"arg_directions": [{", ".join(directions)}]}})
        return r
"""
    return pl.parse(text), draw(st.integers(0, 3))


@given(programs(), st.integers(0, 2**16))
def test_generated_programs_flatten_to_verified_equivalent_2d_programs(case, seed):
    before, k = case
    after = passes.flatten_tile_nd_to_2d()(before)  # runs the TileOps2D verifier
    passes.verify_tile_ops_2d(after)
    for stmt in after.functions[0].body:
        ty = getattr(getattr(stmt, "var", None), "type", None)
        assert not (isinstance(ty, ir.TileType) and ty.rank > 2)
    ir.assert_structural_equal(after, pl.parse(python_print(after)))
    for fa, fb in zip(before.functions[1:], after.functions[1:]):
        assert fa is fb  # functions that are not InCore come back as they are
    inputs = interp.random_inputs(before.functions[0], seed, scalars={"k": k})
    want = interp.run(before, "main", inputs)
    got = interp.run(after, "main", inputs)
    assert not interp.output_differences(want, got), python_print(after)


@st.composite
def batch_matmul_programs(draw: st.DrawFn) -> ir.Program:
    """Batched matmuls with broadcast batch dims, transposed rhs views, gathers, fused stores and accumulators."""
    batch_rank = draw(st.integers(1, 2))
    out_batch = [draw(st.integers(1, 3)) for _ in range(batch_rank)]
    lhs_batch = [d if draw(st.booleans()) else 1 for d in out_batch]
    rhs_batch = [d if draw(st.booleans()) else 1 for d in out_batch]
    out_batch = [max(x, y) for x, y in zip(lhs_batch, rhs_batch)]  # the broadcast the accumulator must have
    m = draw(st.sampled_from([16, 32]))
    k = draw(st.sampled_from([16, 32]))
    n = draw(st.sampled_from([16, 32, 64]))
    trans = draw(st.booleans())
    lhs = [*lhs_batch, m, k]
    rhs_load = [*rhs_batch, n, k] if trans else [*rhs_batch, k, n]
    out = [*out_batch, m, n]
    zeros = [0] * (batch_rank + 2)
    kind = draw(st.sampled_from(["fused", "gather", "acc-loop", "bmm-acc"]))
    lines = [f"ta = pl.load(a, {fmt(zeros)}, {fmt(lhs)})", f"tb = pl.load(b, {fmt(zeros)}, {fmt(rhs_load)})"]
    rhs = "tb"
    if trans:
        lines.append("tv = pl.tile.transpose_view(tb)")
        rhs = "tv"
    if kind == "fused":
        lines += [f"c = pl.tile.batch_matmul(ta, {rhs})", f"out = pl.store(c, {fmt(zeros)}, out)"]
    elif kind == "gather":
        lines += [
            f"c = pl.tile.batch_matmul(ta, {rhs})",
            "e = pl.tile.muls(c, 0.5)",
            f"out = pl.store(e, {fmt(zeros)}, out)",
        ]
    elif kind == "acc-loop":
        lines += [f"acc = pl.tile.create({fmt(out)}, dtype=pl.FP32, target_memory=pl.Mem.Acc)",
                  "for i, (c,) in pl.range(2, init_values=(acc,)):",
                  f"    d = pl.tile.batch_matmul_acc(c, ta, {rhs}, i == 0)",
                  "    r = pl.yield_(d)",
                  f"out = pl.store(r, {fmt(zeros)}, out)"]  # fmt: skip
    else:
        lines += [f"c = pl.tile.batch_matmul(ta, {rhs})", f"d = pl.tile.batch_matmul_acc(c, ta, {rhs})",
                  f"out = pl.store(d, {fmt(zeros)}, out)"]  # fmt: skip
    lines.append("return out")
    body = "\n".join("        " + line for line in lines)
    return pl.parse(f"""
import pypto_egg.language as pl

@pl.program
class Bmm:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[{fmt(lhs)}, pl.FP16], b: pl.Tensor[{fmt(rhs_load)}, pl.FP16],
             out: pl.Out[pl.Tensor[{fmt(out)}, pl.FP32]]) -> pl.Tensor[{fmt(out)}, pl.FP32]:
{body}
""")


@settings(max_examples=120)
@given(batch_matmul_programs(), st.integers(0, 2**16))
def test_generated_batched_matmuls_lower_to_verified_equivalent_programs(before, seed):
    try:
        after = passes.flatten_tile_nd_to_2d()(before)
    except PassError as e:  # only a documented rejection of an accumulator chain is acceptable
        assert str(e).startswith("tile.batch_matmul_acc: cannot lower a batch-"), str(e)
        return
    passes.verify_tile_ops_2d(after)
    inputs = interp.random_inputs(before.functions[0], seed)
    want = interp.run(before, "main", inputs)
    got = interp.run(after, "main", inputs)
    assert not interp.output_differences(want, got), python_print(after)


def _gm_bytes_and_instructions(program: ir.Program) -> tuple[int, int]:
    body = [s for s in program.functions[0].body if isinstance(getattr(s, "value", None), ir.Call)]
    moved = sum(
        tile_nbytes(s.var.type) for s in body if s.value.op == "tile.load" and isinstance(s.var, ir.Var)
    )
    return moved, len(body)


@settings(max_examples=60)
@given(batch_matmul_programs(), st.sampled_from([4096, 8192, 12288, 16384, 65536]), st.integers(0, 2**16))
def test_generated_batched_matmuls_in_both_strategies(before, mat_bytes, seed):
    """Issue: an optimizing mode. On a Mat budget around the operands' sizes, both strategies give verified
    programs that compute what the input does, they reject the same programs, and the optimal one never
    moves more bytes from GM nor issues more instructions than the reference's."""
    backend = Backend("Tiny", {MemorySpace.Mat: mat_bytes, MemorySpace.Acc: 128 * 1024})
    results = {}
    for strategy in ("reference", "optimal"):
        try:
            after = passes.flatten_tile_nd_to_2d(backend=backend, strategy=strategy)(before)
        except PassError as e:
            assert str(e).startswith("tile.batch_matmul_acc: cannot lower a batch-"), str(e)
            results[strategy] = None
            continue
        inputs = interp.random_inputs(before.functions[0], seed)
        assert not interp.output_differences(
            interp.run(before, "main", inputs), interp.run(after, "main", inputs)
        )
        results[strategy] = _gm_bytes_and_instructions(after)
    assert (results["reference"] is None) == (results["optimal"] is None)
    if results["reference"] is not None:
        (ref_bytes, ref_instr), (opt_bytes, opt_instr) = results["reference"], results["optimal"]
        assert opt_bytes <= ref_bytes and opt_bytes * 1 + opt_instr * 256 <= ref_bytes + ref_instr * 256
