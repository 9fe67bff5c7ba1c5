"""Instructions one pass call executes, counted by valgrind (cachegrind): a figure a shared, noisy machine
cannot move, for comparing two versions where wall times disagree by more than the change.

    python benchmarks/bench_instructions.py [--only TEXT]

Each workload runs in two processes under `valgrind --tool=cachegrind`, one with one pass call and one with
1 + K (the same programs parsed in both, each of a shape of its own); the difference over K is one call's
instructions, import, parsing and rule loading excluded. The seed takes K = 20, which averages out the
million or so instructions by which its single calls differ. egglog and OpenBLAS run on one thread, so the
count does not depend on scheduling (it repeats within about 1%). Needs valgrind on the PATH; a run takes a
minute or two per workload.
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

# the workloads whose count is worth a minute each (the others scale from these)
DEFAULT = ("seed", "1,000 ops", "4,000 ops", "batch 1,024", "N-D transpose")
EXTRA_CALLS = {"seed": 20}  # K: the extra calls counted (1 unless listed)

_CHILD = """
import random, sys
sys.path.insert(0, sys.argv[1])
import bench_workloads as b
import pypto_egg.language as pl
from pypto_egg import passes
make = next(m for name, m, _, _ in b.WORKLOADS if sys.argv[2] in name)
b.time_pass(b.seed(random.Random(1)))  # the rules, loaded
progs = [pl.parse(make(random.Random(7 + i))) for i in range(int(sys.argv[4]))]
for prog in progs[: int(sys.argv[3])]:
    passes.flatten_tile_nd_to_2d(backend="Ascend910B")(prog)
"""


def instructions(workload: str, calls: int, parsed: int) -> int:
    env = {**os.environ, "RAYON_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={tmp}/cg.out",
             sys.executable, "-c", _CHILD, str(Path(__file__).parent), workload, str(calls), str(parsed)],
            capture_output=True, text=True, env=env, check=True,
        )  # fmt: skip
    m = re.search(r"I\s+refs:\s+([\d,]+)", out.stderr)
    if m is None:
        raise RuntimeError(f"valgrind printed no instruction count:\n{out.stderr[-2000:]}")
    return int(m.group(1).replace(",", ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="count only the workloads whose name contains this text")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("bench_instructions: valgrind is not installed (apt-get install valgrind)")
    for workload in [args.only] if args.only else DEFAULT:
        extra = EXTRA_CALLS.get(workload, 1)
        one, more = instructions(workload, 1, 1 + extra), instructions(workload, 1 + extra, 1 + extra)
        print(f"{workload:20s} {(more - one) / extra / 1e6:10.1f} M instructions per pass call")


if __name__ == "__main__":
    main()
