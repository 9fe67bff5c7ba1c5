"""The pass on the workloads users run: one kernel, many kernels, a model of mostly 2-D kernels, batched
matmuls, and the real programs of shared/realworld-sample. Median wall time of the pass call (parsing
excluded) on programs the pass has not seen: shapes vary per run, so no cache could serve a call.

    python benchmarks/bench_workloads.py [--repeat 5] [--sample ../shared/realworld-sample]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pypto_egg.language as pl
from pypto_egg import passes
from pypto_egg.ir import python_print

HEADER = "import pypto_egg.language as pl\n\n@pl.program\nclass P:\n"


def kernel(name: str, rows: int, cols: int, ops: int, rank3: bool) -> str:
    """An InCore function: load, `ops` element-wise steps, store; rank 3 or already 2-D."""
    shape = f"[2, {rows}, {cols}]" if rank3 else f"[{rows}, {cols}]"
    zeros = "[0, 0, 0]" if rank3 else "[0, 0]"
    lines = [f"t0 = pl.load(x, {zeros}, {shape})"]
    for i in range(1, ops):
        op = ("pl.tile.exp(t{p})", "pl.tile.muls(t{p}, 0.5)", "pl.tile.add(t{p}, t0)")[i % 3]
        lines.append(f"t{i} = " + op.format(p=i - 1))
    lines += [f"out = pl.store(t{ops - 1}, {zeros}, out)", "return out"]
    body = "\n".join("        " + line for line in lines)
    return (
        f"    @pl.function(type=pl.FunctionType.InCore)\n"
        f"    def {name}(self, x: pl.Tensor[{shape}, pl.FP32], out: pl.Out[pl.Tensor[{shape}, pl.FP32]])"
        f" -> pl.Tensor[{shape}, pl.FP32]:\n{body}\n"
    )


def program(kernels: list[str]) -> str:
    return HEADER + "\n".join(kernels)


def seed(rng: random.Random) -> str:
    return program([kernel("main_incore_0", rng.choice([3, 5, 7]), 4, 3, True)])


def many(rng: random.Random) -> str:
    return program([kernel(f"k{i}", rng.randint(2, 9), 8 * rng.randint(1, 4), 8, True) for i in range(100)])


def model(rng: random.Random) -> str:
    return program([kernel(f"k{i}", rng.randint(2, 9) * 8, 64, 8, i % 10 == 0) for i in range(100)])


def batch_matmul(batch: int) -> Callable[[random.Random], str]:
    def make(rng: random.Random) -> str:
        m = rng.choice([16, 32])
        return (
            HEADER
            + f"""    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[[{batch}, {m}, 16], pl.FP16], b: pl.Tensor[[{batch}, 16, 16], pl.FP16],
             out: pl.Out[pl.Tensor[[{batch}, {m}, 16], pl.FP32]]) -> pl.Tensor[[{batch}, {m}, 16], pl.FP32]:
        ta = pl.load(a, [0, 0, 0], [{batch}, {m}, 16])
        tb = pl.load(b, [0, 0, 0], [{batch}, 16, 16])
        c = pl.tile.batch_matmul(ta, tb)
        out = pl.store(c, [0, 0, 0], out)
        return out
"""
        )

    return make


def transpose_nd(batch: int) -> Callable[[random.Random], str]:
    def make(rng: random.Random) -> str:
        a = rng.choice([16, 32])
        return (
            HEADER
            + f"""    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[{batch}, {a}, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[{batch}, 16, {a}], pl.FP32]]) -> pl.Tensor[[{batch}, 16, {a}], pl.FP32]:
        t = pl.load(x, [0, 0, 0], [{batch}, {a}, 16])
        u = pl.tile.transpose(t, 1, 2)
        out = pl.store(u, [0, 0, 0], out)
        return out
"""
        )

    return make


def long_kernel(n_ops: int) -> Callable[[random.Random], str]:
    """One kernel of about n_ops tile ops: chains of load -> exp -> muls -> add -> reshape -> store."""

    def make(rng: random.Random) -> str:
        cols = 16 * rng.randint(1, 8)
        lines = []
        chains = max(1, n_ops // 6)
        for c in range(chains):
            b = c % 4
            lines += [
                f"a{c} = pl.load(x, [{b}, 0, 0], [1, 16, {cols}])",
                f"e{c} = pl.tile.exp(a{c})",
                f"m{c} = pl.tile.muls(e{c}, 0.5)",
                f"s{c} = pl.tile.add(m{c}, a{c})",
                f"r{c} = pl.tile.reshape(s{c}, [1, 16, {cols}])",
                f"o{c} = pl.store(r{c}, [{b}, 0, 0], {'out' if c == 0 else f'o{c - 1}'})",
            ]
        lines.append(f"return o{chains - 1}")
        body = "\n".join("        " + line for line in lines)
        shape = f"[4, 16, {cols}]"
        return (
            HEADER
            + f"""    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[{shape}, pl.FP32], out: pl.Out[pl.Tensor[{shape}, pl.FP32]]) -> pl.Tensor[{shape}, pl.FP32]:
{body}
"""
        )

    return make


def time_pass(text: str) -> float:
    prog = pl.parse(text)
    p = passes.flatten_tile_nd_to_2d(backend="Ascend910B")
    t0 = time.perf_counter()
    p(prog)
    return (time.perf_counter() - t0) * 1e3


def nd_sample_programs(sample: Path) -> list[Path]:
    """The sample's programs the pass rewrites (its N-D ones, and a few 2-D ones whose calls it re-creates)."""
    flatten = passes.flatten_tile_nd_to_2d(backend="Ascend910B")
    out = []
    for path in sorted((sample / "pre").glob("*.py")):
        program = pl.parse_file(path)
        if python_print(flatten(program)) != python_print(program):
            out.append(path)
    return out


# name, generator, the reference pass's time (ms) and the target (ms) on the project machine
WORKLOADS: list[tuple[str, Callable[[random.Random], str], float, float]] = [
    ("seed (1 kernel, 3 ops)", seed, 0.03, 5),
    ("100 different rank-3 kernels x 8 ops", many, 6.1, 100),
    ("a model: 100 kernels, 90 of them already 2-D", model, 5.3, 50),
    ("batch_matmul, batch 64", batch_matmul(64), 0.8, 20),
    ("one kernel, 1,000 ops", long_kernel(1000), 49, 40),
    ("one kernel, 4,000 ops", long_kernel(4000), 796, 150),
    ("one kernel, 8,000 ops", long_kernel(8000), 4022, 300),
    ("one kernel, 16,000 ops", long_kernel(16000), float("nan"), float("nan")),
    ("batch_matmul, batch 1,024 ([16, 16] pages)", batch_matmul(1024), 16, 100),
    ("batch_matmul, batch 4,096 ([16, 16] pages)", batch_matmul(4096), 70, 300),
    ("N-D transpose, batch 1,024", transpose_nd(1024), 22, 100),
]


def fresh_process_figures() -> tuple[float, float]:
    """The first call in a fresh process (import and rules), and the peak RSS of the 8,000-op kernel there."""
    code = (
        "import resource, sys, time, random\n"
        "t0 = time.perf_counter()\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "import bench_workloads as b\n"
        "b.time_pass(b.seed(random.Random(1)))\n"
        "first = (time.perf_counter() - t0) * 1e3\n"
        "b.time_pass(b.long_kernel(8000)(random.Random(2)))\n"
        "print(first, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(Path(__file__).parent)], capture_output=True, text=True
    )
    first, rss = out.stdout.split()
    return float(first), float(rss)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument(
        "--sample", default=str(Path(__file__).resolve().parents[2] / "shared" / "realworld-sample")
    )
    ap.add_argument("--only", help="run only the workloads whose name contains this text")
    args = ap.parse_args()
    rng = random.Random(2026)
    if not args.only:
        first, rss = fresh_process_figures()
        print(f"{'first call in a fresh process (import, rules)':46s} {first:10.2f} ms   target 1000 ms")
        print(f"{'peak RSS, 8,000-op kernel (fresh process)':46s} {rss:10.1f} MB   target 300 MB")
    time_pass(seed(rng))  # warm: the rules are loaded once per process
    print(f"{'workload':46s} {'median':>10s}      {'reference':>9s}  {'target':>7s}")
    for name, make, reference, target in WORKLOADS:
        if args.only and args.only not in name:
            continue
        times = [time_pass(make(rng)) for _ in range(args.repeat)]
        med = statistics.median(times)
        verdict = "" if math.isnan(target) else ("met" if med <= target else "MISSED")
        print(f"{name:46s} {med:10.2f} ms   {reference:9.2f}  {target:7.0f}  {verdict}")
    sample = Path(args.sample)
    if (sample / "pre").is_dir() and not args.only:
        times = []
        for f in sorted((sample / "pre").glob("*.py")):
            text = f.read_text()
            time_pass(text)  # warm-up, as the sample's own tool does
            times.append(time_pass(text))
        med = statistics.median(times)
        print(f"{'real programs of ' + sample.name + ' (median)':46s} {med:10.3f} ms   {0.04:9.2f}  {2:7.0f}  "
              f"{'met' if med <= 2 else 'MISSED'}")  # fmt: skip


if __name__ == "__main__":
    main()
