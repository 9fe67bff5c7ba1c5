"""pypto-egg's pass against the reference's (PyPTO's C++ FlattenTileNdTo2D), timed in the same run on the same
programs, as ratios (pypto-egg / reference) with the goals of the speed work.

    python benchmarks/bench_vs_reference.py [--repeat 5] [--only TEXT] [--sample ../shared/realworld-sample]
                                            [--paused-collector]

Needs PyPTO in the venv (`make reference`). Each workload generates programs of shapes of their own, so no
call is served by a cache; both passes take the same programs, alternately, and only the pass call is timed
(pypto-egg's parse and PyPTO's parse of the same text are left out). The real programs are the N-D programs of
the sample (those the pass rewrites): each is timed on both sides after one warm-up call, and the figure is the
median of the per-program ratios. The first call on a kind of program not seen before runs in a fresh process:
import, one seed call, then the program; its median is over five programs.

The pass is called as a library call in a process with Python's collector as Python sets it, which traverses the
objects the pass makes; `--paused-collector` pauses the collector around each call instead
(`pypto_egg.collector.collector_paused`), as a process of the pass's own does (the CLI's).
"""

from __future__ import annotations

import argparse
import contextlib
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import bench_workloads as w

import pypto_egg.language as pl
from pypto_egg import passes
from pypto_egg.collector import collector_paused
from pypto_egg.ir import python_print
from pypto_egg.pypto import load_pypto

# name, generator, the goal (pypto-egg / reference), repeats at most (the reference is quadratic in length)
WORKLOADS: list[tuple[str, Callable[[random.Random], str], float, int]] = [
    ("seed (1 kernel, 3 ops)", w.seed, 50, 99),
    ("batch_matmul, batch 64", w.batch_matmul(64), 5, 99),
    ("100 different rank-3 kernels x 8 ops", w.many, 2, 99),
    ("a model: 100 kernels, 90 already 2-D", w.model, 1.5, 99),
    ("batch_matmul, batch 1,024", w.batch_matmul(1024), 1, 99),
    ("batch_matmul, batch 4,096", w.batch_matmul(4096), 1, 3),
    ("N-D transpose, batch 1,024", w.transpose_nd(1024), 1, 99),
    ("one kernel, 1,000 ops", w.long_kernel(1000), 0.5, 5),
    ("one kernel, 4,000 ops", w.long_kernel(4000), 0.1, 2),
    ("one kernel, 8,000 ops", w.long_kernel(8000), 0.05, 1),
]
REAL_GOAL = 30.0  # the median of the per-program ratios on real N-D programs
FIRST_CALL_GOAL_MS = 25.0


class Sides:
    """The two passes, each handed a program's text and timing only its pass call (ms); with `paused`, pypto-egg's
    calls run with the collector paused around them, as in a process that is the pass's own (the CLI's)."""

    def __init__(self, paused: bool = False) -> None:
        self.pto = load_pypto()
        self.pto.backend.set_backend_type(self.pto.backend.BackendType.Ascend910B)
        self.ours = passes.flatten_tile_nd_to_2d(backend="Ascend910B")
        self.paused = paused

    def egg(self, text: str) -> float:
        program = pl.parse(text)
        with collector_paused() if self.paused else contextlib.nullcontext():
            t0 = time.perf_counter()
            self.ours(program)
            took = time.perf_counter() - t0
        return took * 1e3

    def reference(self, text: str) -> float:
        program = self.pto.language.parse(python_print(pl.parse(text), dialect="pypto"))
        flatten = self.pto.passes.flatten_tile_nd_to_2d()
        t0 = time.perf_counter()
        flatten(program)
        return (time.perf_counter() - t0) * 1e3


_FIRST_CALL = """
import random, sys, time
sys.path.insert(0, sys.argv[1])
import bench_workloads as w
import pypto_egg.language as pl
from pypto_egg import passes
w.time_pass(w.seed(random.Random(1)))
program = pl.parse(open(sys.argv[2]).read())
t0 = time.perf_counter()
passes.flatten_tile_nd_to_2d(backend="Ascend910B")(program)
print((time.perf_counter() - t0) * 1e3)
"""


def first_calls(paths: list[Path]) -> list[float]:
    here = str(Path(__file__).resolve().parent)
    out = []
    for path in paths:
        run = subprocess.run(
            [sys.executable, "-c", _FIRST_CALL, here, str(path)], capture_output=True, text=True
        )
        if run.returncode != 0 or not run.stdout.split():
            raise RuntimeError(
                f"the first call on {path.name} in a fresh process failed:\n{run.stderr[-2000:]}"
            )
        out.append(float(run.stdout.split()[-1]))
    return out


def row(name: str, egg: float, ref: float, goal: float, unit: str = "ms") -> str:
    ratio = egg / ref
    verdict = "met" if ratio <= goal else "MISSED"
    return f"{name:40s} {ref:10.3f} {egg:10.3f} {unit}  {ratio:8.2f}x  <= {goal:g}x  {verdict}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", help="run only the workloads whose name contains this text")
    ap.add_argument(
        "--sample", default=str(Path(__file__).resolve().parents[2] / "shared" / "realworld-sample")
    )
    ap.add_argument(
        "--paused-collector",
        action="store_true",
        help="pause Python's cyclic collector around pypto-egg's calls (pypto_egg/collector.py), as the CLI does",
    )
    args = ap.parse_args()
    sides = Sides(args.paused_collector)
    rng = random.Random(2026)
    warm = w.seed(rng)
    sides.egg(warm), sides.reference(warm)  # the rules loaded, PyPTO's modules imported
    print(f"{'workload':40s} {'reference':>10s} {'pypto-egg':>10s}      {'ratio':>8s}  goal")
    for name, make, goal, most in WORKLOADS:
        if args.only and args.only not in name:
            continue
        egg: list[float] = []
        ref: list[float] = []
        for _ in range(min(args.repeat, most)):
            text = make(rng)
            egg.append(sides.egg(text))
            ref.append(sides.reference(text))
        print(row(name, statistics.median(egg), statistics.median(ref), goal))
    sample = Path(args.sample)
    if args.only or not (sample / "pre").is_dir():
        return
    nd = w.nd_sample_programs(sample)
    texts = [path.read_text() for path in nd]
    ratios: list[float] = []
    egg_ms: list[float] = []
    ref_ms: list[float] = []
    for text in texts:
        sides.egg(text), sides.reference(text)  # warm-up, as the sample's own tool does
        e, r = sides.egg(text), sides.reference(text)
        egg_ms.append(e)
        ref_ms.append(r)
        ratios.append(e / r)
    ratio = statistics.median(ratios)
    verdict = "met" if ratio <= REAL_GOAL else "MISSED"
    name = f"real N-D programs ({len(texts)}), median"
    print(f"{name:40s} {statistics.median(ref_ms):10.3f} {statistics.median(egg_ms):10.3f} ms  "
          f"{ratio:8.2f}x  <= {REAL_GOAL:g}x  {verdict}  (median of per-program ratios)")  # fmt: skip
    first = statistics.median(first_calls(nd[:5]))
    verdict = "met" if first <= FIRST_CALL_GOAL_MS else "MISSED"
    print(
        f"{'first call on a new kind (median of 5)':40s} {'':10s} {first:10.3f} ms  {'':9s}  "
        f"<= {FIRST_CALL_GOAL_MS:g} ms  {verdict}"
    )


if __name__ == "__main__":
    main()
