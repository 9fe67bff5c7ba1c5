"""Instructions one pass call executes, counted by valgrind (cachegrind): a figure a shared, noisy machine
cannot move, for comparing two versions where wall times disagree by more than the change.

    python benchmarks/bench_instructions.py [--only TEXT] [--sample ../shared/realworld-sample] [--warm W --calls K]
                                            [--paused-collector]

Each workload runs in two processes under `valgrind --tool=cachegrind`, one with one pass call and one with
1 + K (the same programs parsed in both, each of a shape of its own); the difference over K is one call's
instructions, import, parsing and rule loading excluded. The seed takes K = 20, which averages out the
million or so instructions by which its single calls differ. egglog and OpenBLAS run on one thread, so the
count does not depend on scheduling (it repeats within about 1%). Without --warm the counted call of a workload
other than the seed is the kind's second, which runs on the full rule set (the kind's own set is loaded after its
third call) and varies by a few million instructions; `--warm 6 --calls 8` counts eight calls on the kind's own set.
Needs valgrind on the PATH; a run takes a minute or two per workload.

`real N-D` is the sample's programs the pass rewrites, each called as bench_vs_reference times them: a warm-up
call, then the timed one. Both processes first run five programs of each of four workloads (the sets a bench
run has loaded by then) and every program's warm-up call; one of them then makes the timed calls, and the
difference over the programs is one timed call's instructions (skipped without the sample).

The pass is called as a library call in a process with Python's collector as Python sets it, which traverses the
objects the pass makes; `--paused-collector` pauses the collector around each call instead
(`pypto_egg.collector.collector_paused`), as a process of the pass's own does (the CLI's).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import bench_workloads as w

# the workloads whose count is worth a minute each (the others scale from these)
DEFAULT = ("seed", "1,000 ops", "4,000 ops", "batch 1,024", "N-D transpose")
EXTRA_CALLS = {"seed": 20}  # K: the extra calls counted (1 unless listed)
REAL = "real N-D"

_CHILD = """
import random, sys
sys.path.insert(0, sys.argv[1])
import bench_workloads as b
import contextlib
import pypto_egg.language as pl
from pypto_egg import passes
from pypto_egg.collector import collector_paused
make = next(m for name, m, _, _ in b.WORKLOADS if sys.argv[2] in name)
b.time_pass(b.seed(random.Random(1)))  # the rules, loaded
progs = [pl.parse(make(random.Random(7 + i))) for i in range(int(sys.argv[4]))]
for prog in progs[: int(sys.argv[3])]:
    with collector_paused() if sys.argv[5] == "1" else contextlib.nullcontext():
        passes.flatten_tile_nd_to_2d(backend="Ascend910B")(prog)
"""


_REAL_CHILD = """
import random, sys
sys.path.insert(0, sys.argv[1])
import bench_workloads as b
import contextlib
import pypto_egg.language as pl
from pypto_egg import passes
from pypto_egg.collector import collector_paused
pass_call = passes.flatten_tile_nd_to_2d(backend="Ascend910B")
def flatten(program):
    with collector_paused() if sys.argv[3] == "1" else contextlib.nullcontext():
        pass_call(program)
rng = random.Random(2026)
flatten(pl.parse(b.seed(rng)))
for make in (b.seed, b.batch_matmul(64), b.many, b.model):
    for _ in range(5):
        flatten(pl.parse(make(rng)))
timed = sys.argv[2] == "1"
for path in sys.argv[4:]:
    text = open(path).read()
    flatten(pl.parse(text))
    if timed:
        flatten(pl.parse(text))
"""


def instructions(workload: str, calls: int, parsed: int, paused: bool) -> int:
    return _counted([_CHILD, str(Path(__file__).parent), workload, str(calls), str(parsed), str(int(paused))])


def real_instructions(paths: list[Path], timed: bool, paused: bool) -> int:
    here = str(Path(__file__).parent)
    return _counted([_REAL_CHILD, here, str(int(timed)), str(int(paused)), *map(str, paths)])


def _counted(child: list[str]) -> int:
    """The instructions of `python -c child...` under cachegrind."""
    env = {**os.environ, "RAYON_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={tmp}/cg.out",
             sys.executable, "-c", *child],
            capture_output=True, text=True, env=env, check=True,
        )  # fmt: skip
    m = re.search(r"I\s+refs:\s+([\d,]+)", out.stderr)
    if m is None:
        raise RuntimeError(f"valgrind printed no instruction count:\n{out.stderr[-2000:]}")
    return int(m.group(1).replace(",", ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="count only the workload whose name contains this text (or 'real N-D')")
    ap.add_argument(
        "--sample", default=str(Path(__file__).resolve().parents[2] / "shared" / "realworld-sample")
    )
    ap.add_argument(
        "--calls",
        type=int,
        help="the extra calls counted, K (default: 20 for the seed, 1 for the others); "
        "with --warm, over calls of the kind's own rule set",
    )
    ap.add_argument(
        "--warm",
        type=int,
        default=0,
        help="calls of the workload before those counted (its own rule set is loaded after the first few)",
    )
    ap.add_argument(
        "--paused-collector",
        action="store_true",
        help="pause Python's cyclic collector around each pass call (pypto_egg/collector.py), as the CLI does",
    )
    args = ap.parse_args()
    paused = args.paused_collector
    if shutil.which("valgrind") is None:
        sys.exit("bench_instructions: valgrind is not installed (apt-get install valgrind)")
    if args.only is None:
        workloads = [*DEFAULT, REAL]
    else:  # any workload of bench_workloads.WORKLOADS, by a part of its name
        workloads = [REAL if args.only in REAL else args.only]
    for workload in workloads:
        if workload == REAL:
            sample = Path(args.sample)
            if not (sample / "pre").is_dir():
                print(f"{workload:20s} skipped: no sample at {sample}")
                continue
            paths = w.nd_sample_programs(sample)
            warm, timed = real_instructions(paths, False, paused), real_instructions(paths, True, paused)
            print(f"{workload:20s} {(timed - warm) / len(paths) / 1e6:10.1f} M instructions per timed call "
                  f"({len(paths)} programs)")  # fmt: skip
            continue
        extra = args.calls or EXTRA_CALLS.get(workload, 1)
        total = 1 + args.warm + extra
        one, more = (
            instructions(workload, 1 + args.warm, total, paused),
            instructions(workload, total, total, paused),
        )
        print(f"{workload:20s} {(more - one) / extra / 1e6:10.1f} M instructions per pass call")


if __name__ == "__main__":
    main()
