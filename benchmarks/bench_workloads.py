"""The pass on the workloads users run: one kernel, many kernels, a model of mostly 2-D kernels, batched
matmuls, and the real programs of shared/realworld-sample. Median wall time of the pass call (parsing
excluded) on programs the pass has not seen: shapes vary per run, so no cache could serve a call.

    python benchmarks/bench_workloads.py [--repeat 5] [--sample ../shared/realworld-sample]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import pypto_egg.language as pl
from pypto_egg import passes

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


def time_pass(text: str) -> float:
    prog = pl.parse(text)
    p = passes.flatten_tile_nd_to_2d(backend="Ascend910B")
    t0 = time.perf_counter()
    p(prog)
    return (time.perf_counter() - t0) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument(
        "--sample", default=str(Path(__file__).resolve().parents[2] / "shared" / "realworld-sample")
    )
    args = ap.parse_args()
    rng = random.Random(2026)
    t0 = time.perf_counter()
    time_pass(seed(rng))  # the first call of a process: import and rules
    first = (time.perf_counter() - t0) * 1e3
    print(f"{'first call in a fresh process (rules loaded)':50s} {first:10.2f} ms")
    workloads: list[tuple[str, Callable[[random.Random], str]]] = [
        ("seed (1 kernel, 3 ops)", seed),
        ("100 different rank-3 kernels x 8 ops", many),
        ("a model: 100 kernels, 90 of them already 2-D", model),
        ("batch_matmul, batch 64", batch_matmul(64)),
        ("batch_matmul, batch 256", batch_matmul(256)),
    ]
    for name, make in workloads:
        times = [time_pass(make(rng)) for _ in range(args.repeat)]
        print(f"{name:50s} {statistics.median(times):10.2f} ms (median of {args.repeat})")
    sample = Path(args.sample)
    if (sample / "pre").is_dir():
        times = []
        for f in sorted((sample / "pre").glob("*.py")):
            text = f.read_text()
            time_pass(text)  # warm-up, as the sample's own tool does
            times.append(time_pass(text))
        print(
            f"{'real programs of ' + sample.name:50s} {statistics.median(times):10.3f} ms (median of {len(times)})"
        )


if __name__ == "__main__":
    main()
