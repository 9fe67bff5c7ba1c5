"""The optimal strategy against the reference on capacity-edge batched matmuls.

    python benchmarks/bench_optimal.py [--programs 500] [--seed 2026]

Each generated program (batch counts, M / K / N around the L1 gate of both backends, broadcast batches,
transposed views, fused stores, gathers and accumulator loops) is lowered by both strategies. Both outputs
pass the TileOps2D verifier (the pass runs it) and must interpret to the same stored outputs as the input.
The cost model's measures are read off each output program: bytes moved GM -> on chip (every tile.load)
and tile instructions issued, weighted per backend as `extract.cost.OptimalCostModel` weighs them.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from dataclasses import dataclass

import pypto_egg.language as pl
from pypto_egg import interp, passes
from pypto_egg.errors import PassError
from pypto_egg.extract.cost import BACKEND_WEIGHTS, Weights
from pypto_egg.ir.expr import Call
from pypto_egg.ir.stmt import AssignStmt, EvalStmt, ForStmt, Program, Stmt
from pypto_egg.ir.tiles import tile_nbytes

MAT = {"Ascend910B": 512 * 1024, "Ascend950": 1024 * 1024}
ACC = {"Ascend910B": 128 * 1024, "Ascend950": 256 * 1024}
BYTES = {"pl.FP16": 2, "pl.FP32": 4}


@dataclass(frozen=True)
class Case:
    text: str
    backend: str


def _fmt(d: list[int]) -> str:
    return "[" + ", ".join(map(str, d)) + "]"


def generate(rng: random.Random) -> Case:
    backend = rng.choice(list(MAT))
    kind = rng.choice(["fused", "fused", "gather", "acc-loop"])
    dtype = rng.choice(["pl.FP16", "pl.FP32"])
    batch = rng.choice([2, 4, 8, 16])
    lhs_b = 1 if rng.random() < 0.3 else batch
    rhs_b = 1 if lhs_b != 1 and rng.random() < 0.4 else batch
    if kind == "acc-loop":  # the packed accumulator must fit L0C: B * M * N * 4 bytes
        m, n = rng.choice([16, 32, 64]), rng.choice([16, 32, 64])
        while batch * m * n * 4 > ACC[backend]:
            m //= 2
    else:
        m, n = rng.choice([32, 64, 128, 256]), rng.choice([32, 64, 128, 256])
    # K puts the two whole operands at the Mat gate: from a little under it to a little under twice it
    target = MAT[backend] * rng.uniform(0.8, 1.8)
    k = max(16, int(target / (BYTES[dtype] * (lhs_b * m + rhs_b * n))) // 16 * 16)
    trans = rng.random() < 0.3
    lhs = [lhs_b, m, k]
    rhs_load = [rhs_b, n, k] if trans else [rhs_b, k, n]
    out = [batch, m, n]
    z = "[0, 0, 0]"
    lines = [f"ta = pl.load(a, {z}, {_fmt(lhs)})", f"tb = pl.load(b, {z}, {_fmt(rhs_load)})"]
    rhs = "tb"
    if trans:
        lines.append("tv = pl.tile.transpose_view(tb)")
        rhs = "tv"
    if kind == "fused":
        lines += [f"c = pl.tile.batch_matmul(ta, {rhs})", f"out = pl.store(c, {z}, out)"]
    elif kind == "gather":
        lines += [
            f"c = pl.tile.batch_matmul(ta, {rhs})",
            "e = pl.tile.muls(c, 0.5)",
            f"out = pl.store(e, {z}, out)",
        ]
    else:
        lines += [f"acc = pl.tile.create({_fmt(out)}, dtype=pl.FP32, target_memory=pl.Mem.Acc)",
                  "for i, (c,) in pl.range(2, init_values=(acc,)):",
                  f"    d = pl.tile.batch_matmul_acc(c, ta, {rhs}, i == 0)",
                  "    r = pl.yield_(d)",
                  f"out = pl.store(r, {z}, out)"]  # fmt: skip
    lines.append("return out")
    body = "\n".join("        " + line for line in lines)
    text = f"""import pypto_egg.language as pl

@pl.program
class Edge:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[{_fmt(lhs)}, {dtype}], b: pl.Tensor[{_fmt(rhs_load)}, {dtype}],
             out: pl.Out[pl.Tensor[{_fmt(out)}, pl.FP32]]) -> pl.Tensor[{_fmt(out)}, pl.FP32]:
{body}
"""
    return Case(text, backend)


def _walk(stmts: tuple[Stmt, ...]) -> list[Stmt]:
    out: list[Stmt] = []
    for s in stmts:
        out.append(s)
        if isinstance(s, ForStmt):
            out += _walk(s.body)
    return out


def measure(program: Program) -> tuple[int, int]:
    """(bytes moved GM -> on chip, tile instructions) of a program's first function; a loop counts twice."""
    moved = instructions = 0
    for s in _walk(program.functions[0].body):
        value = s.value if isinstance(s, AssignStmt) else s.expr if isinstance(s, EvalStmt) else None
        if not isinstance(value, Call) or not value.op.startswith(("tile.", "tensor.view")):
            continue
        instructions += 1
        if value.op == "tile.load" and isinstance(s, AssignStmt):
            moved += tile_nbytes(s.var.type) or 0  # type: ignore[arg-type]
    return moved, instructions


def cost(numbers: tuple[int, int], weights: Weights) -> float:
    return numbers[0] * weights.gm_byte + numbers[1] * weights.instruction


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--programs", type=int, default=500)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    never_worse = better = rejected = 0
    savings: list[float] = []
    instr_savings: list[float] = []
    t0 = time.perf_counter()
    for i in range(args.programs):
        case = generate(rng)
        program = pl.parse(case.text)
        results = {}
        for strategy in ("reference", "optimal"):
            try:
                after = passes.flatten_tile_nd_to_2d(backend=case.backend, strategy=strategy)(program)
            except PassError as e:
                results[strategy] = str(e)
                continue
            inputs = interp.random_inputs(program.functions[0], seed=i)
            want, got = interp.run(program, "main", inputs), interp.run(after, "main", inputs)
            diffs = interp.output_differences(want, got)
            if diffs:
                raise SystemExit(f"program {i} ({strategy}) changed meaning: {diffs}\n{case.text}")
            results[strategy] = measure(after)
        ref, opt = results["reference"], results["optimal"]
        if isinstance(ref, str) or isinstance(opt, str):
            if isinstance(ref, str) != isinstance(opt, str):
                raise SystemExit(f"program {i}: the strategies disagree on rejecting it\n{case.text}")
            rejected += 1
            never_worse += 1
            continue
        weights = BACKEND_WEIGHTS[case.backend]
        if cost(opt, weights) <= cost(ref, weights):
            never_worse += 1
        else:
            print(f"program {i}: optimal is worse ({opt} vs {ref})\n{case.text}")
        if cost(opt, weights) < cost(ref, weights):
            better += 1
            savings.append(100.0 * (ref[0] - opt[0]) / ref[0])
            instr_savings.append(100.0 * (ref[1] - opt[1]) / ref[1])
    n = args.programs
    elapsed = time.perf_counter() - t0
    print(f"{n} programs in {elapsed:.1f} s ({rejected} rejected by both strategies, as the reference does)")
    if instr_savings:
        print(f"instructions -{statistics.median(instr_savings):.1f} % (median over the better ones)")
    bytes_saved = statistics.median(savings) if savings else 0.0
    print(f"optimal: never worse {never_worse}/{n}, better {better}/{n}, bytes moved -{bytes_saved:.1f} % "
          f"(median over the better ones)")  # fmt: skip


if __name__ == "__main__":
    main()
