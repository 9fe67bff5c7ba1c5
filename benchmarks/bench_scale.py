"""How FlattenTileNdTo2D scales with function length: time and peak memory per phase, at growing sizes.

    python benchmarks/bench_scale.py [--sizes 250 500 1000 2000 4000] [--json out.json]

The reference C++ pass is quadratic in function length (about 1 s for a 4,000-op kernel); this one should
grow linearly: facts load in one batch, one saturation runs per function, extraction is one worklist pass.
"""

from __future__ import annotations

import argparse
import json
import time
import tracemalloc

import pypto_egg.language as pl
from pypto_egg import passes


def kernel(n_ops: int) -> str:
    """An InCore function of about n_ops tile ops over rank-3 tiles, in chains of load → ops → store."""
    lines = []
    per_chain = 6
    chains = max(1, n_ops // per_chain)
    for c in range(chains):
        b = c % 4
        lines += [
            f"a{c} = pl.load(x, [{b}, 0, 0], [1, 16, 64])",
            f"e{c} = pl.tile.exp(a{c})",
            f"m{c} = pl.tile.muls(e{c}, 0.5)",
            f"s{c} = pl.tile.add(m{c}, a{c})",
            f"r{c} = pl.tile.reshape(s{c}, [1, 16, 64])",
            f"o{c} = pl.store(r{c}, [{b}, 0, 0], {'out' if c == 0 else f'o{c - 1}'})",
        ]
    lines.append(f"return o{chains - 1}")
    body = "\n".join("        " + line for line in lines)
    return f"""
import pypto_egg.language as pl

@pl.program
class Big:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[4, 16, 64], pl.FP32], out: pl.Out[pl.Tensor[[4, 16, 64], pl.FP32]]) -> pl.Tensor[[4, 16, 64], pl.FP32]:
{body}
"""


def measure(n_ops: int) -> dict[str, object]:
    program = pl.parse(kernel(n_ops))
    flatten = passes.flatten_tile_nd_to_2d()
    t0 = time.perf_counter()
    flatten(program)
    total = time.perf_counter() - t0
    report = flatten.reports[0]
    tracemalloc.start()  # a second run, traced: tracing slows Python, so it is not timed
    passes.flatten_tile_nd_to_2d()(program)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "ops": report.statements,
        "total_s": round(total, 4),
        "per_op_ms": round(1000 * total / report.statements, 4),
        "phases_ms": {k: round(v * 1000, 1) for k, v in report.times.items()},
        "eclasses": report.eclasses,
        "enodes": report.enodes,
        "python_peak_mib": round(peak / 2**20, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="*", type=int, default=[250, 500, 1000, 2000, 4000])
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    rows = [measure(n) for n in args.sizes]
    print(
        f"{'ops':>6} {'total s':>9} {'ms/op':>8} {'e-classes':>10} {'e-nodes':>9} {'py MiB':>7}  phases (ms)"
    )
    for r in rows:
        phases = ", ".join(f"{k} {v}" for k, v in r["phases_ms"].items())  # type: ignore[attr-defined]
        print(f"{r['ops']:>6} {r['total_s']:>9} {r['per_op_ms']:>8} {r['eclasses']:>10} {r['enodes']:>9} "
              f"{r['python_peak_mib']:>7}  {phases}")  # fmt: skip
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        growth = (last["total_s"] / first["total_s"]) / (last["ops"] / first["ops"])  # type: ignore[operator]
        print(f"time growth relative to linear from {first['ops']} to {last['ops']} ops: {growth:.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
