"""How low a call can go with this design, beside the reference in the same run: the two costs no change to the
pass's Python can remove, as a ratio to the reference's whole call.

    python benchmarks/bench_floor.py [--repeat 9] [--sample ../shared/realworld-sample]

- egglog: the pass's egglog call itself (the reset the program before owed, the facts' input and the schedule).
- output nodes: constructing the IR nodes of the pass's output that its input does not hold, each by its class
  from its final fields, children already built (no walk, no decision, no type deduction: the objects alone).

Their sum over the reference's time is the floor of the ratio: a pass that encoded, checked, extracted, lowered
and verified in no time at all would still cost that much. Needs PyPTO in the venv (`make reference`).
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import statistics
import time
from pathlib import Path
from typing import Any

import bench_workloads as w
from bench_vs_reference import REAL_GOAL, WORKLOADS, Sides

import pypto_egg.language as pl
from pypto_egg.egraph import engine
from pypto_egg.ir.stmt import Program

Construction = list[tuple[type, tuple[Any, ...]]]


def _nodes(root: object, into: dict[int, object]) -> None:
    """Every IR node (a dataclass instance) reachable from `root`, by id."""
    stack = [root]
    while stack:
        x = stack.pop()
        if isinstance(x, tuple | list):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
        elif dataclasses.is_dataclass(x) and not isinstance(x, type) and id(x) not in into:
            into[id(x)] = x
            stack.extend(getattr(x, f.name) for f in dataclasses.fields(x))


def new_nodes(before: Program, after: Program) -> Construction:
    """The output's nodes its input does not hold, as (class, fields) to build them from."""
    old: dict[int, object] = {}
    _nodes(before, old)
    new: dict[int, object] = {}
    _nodes(after, new)
    out = []
    for key, node in new.items():
        if key in old:
            continue
        fields = tuple(getattr(node, f.name) for f in dataclasses.fields(node))  # type: ignore[arg-type]
        out.append((type(node), fields))
    return out


def build_ms(nodes: Construction, repeat: int = 5) -> float:
    """The least time of constructing every node once (the best of `repeat`: a floor, not a typical figure)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for cls, fields in nodes:
            cls(*fields)
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


class EgglogClock:
    """The time of the pass's egglog calls (its facts call, which runs the schedule too), per pass call."""

    def __init__(self) -> None:
        self.ms = 0.0
        inner = engine.load_facts

        def timed(*args: Any, **kwargs: Any) -> list[object]:
            t0 = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.ms += (time.perf_counter() - t0) * 1e3

        engine.load_facts = timed  # type: ignore[assignment]


@dataclasses.dataclass
class Figures:
    egg: list[float] = dataclasses.field(default_factory=list)
    ref: list[float] = dataclasses.field(default_factory=list)
    egglog: list[float] = dataclasses.field(default_factory=list)
    build: list[float] = dataclasses.field(default_factory=list)
    nodes: list[int] = dataclasses.field(default_factory=list)

    def add(self, sides: Sides, clock: EgglogClock, text: str) -> None:
        program = pl.parse(text)
        clock.ms = 0.0
        t0 = time.perf_counter()
        out = sides.ours(program)
        self.egg.append((time.perf_counter() - t0) * 1e3)
        self.egglog.append(clock.ms)
        self.ref.append(sides.reference(text))
        built = new_nodes(program, out)
        self.nodes.append(len(built))
        self.build.append(build_ms(built))

    def row(self, name: str, goal: float) -> str:
        m = statistics.median
        ref, egglog, build = m(self.ref), m(self.egglog), m(self.build)
        floor = (egglog + build) / ref
        return (
            f"{name:38s} {ref:9.3f} {m(self.egg):9.3f} {egglog:9.3f} {build:9.3f} {int(m(self.nodes)):7d}"
            f"  {m(self.egg) / ref:7.2f}x {floor:7.2f}x  <= {goal:g}x {'reachable' if floor <= goal else 'BELOW'}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument(
        "--sample", default=str(Path(__file__).resolve().parents[2] / "shared" / "realworld-sample")
    )
    args = ap.parse_args()
    sides = Sides()
    clock = EgglogClock()
    rng = random.Random(2026)
    warm = w.seed(rng)
    sides.egg(warm), sides.reference(warm)
    print(
        f"{'workload':38s} {'reference':>9s} {'pypto-egg':>9s} {'egglog':>9s} {'output':>9s} {'nodes':>7s}"
        f"  {'ratio':>8s} {'floor':>8s}  goal (ms; floor = (egglog + output) / reference)"
    )
    for name, make, goal, most in WORKLOADS:
        if most < 5:
            continue  # the reference alone takes seconds a call there
        figures = Figures()
        for _ in range(min(args.repeat, most)):
            figures.add(sides, clock, make(rng))
        print(figures.row(name, goal))
    sample = Path(args.sample)
    if not (sample / "pre").is_dir():
        return
    per_program = Figures()
    floors: list[float] = []
    for path in w.nd_sample_programs(sample):
        text = path.read_text()
        sides.egg(text), sides.reference(text)  # warm-up, as bench_vs_reference does
        one = Figures()
        one.add(sides, clock, text)
        for field in dataclasses.fields(Figures):
            getattr(per_program, field.name).extend(getattr(one, field.name))
        floors.append((one.egglog[0] + one.build[0]) / one.ref[0])
    m = statistics.median
    ratios = [e / r for e, r in zip(per_program.egg, per_program.ref)]
    print(
        f"{'real N-D programs, median':38s} {m(per_program.ref):9.3f} {m(per_program.egg):9.3f}"
        f" {m(per_program.egglog):9.3f} {m(per_program.build):9.3f} {int(m(per_program.nodes)):7d}"
        f"  {m(ratios):7.2f}x {m(floors):7.2f}x  <= {REAL_GOAL:g}x"
        f" {'reachable' if m(floors) <= REAL_GOAL else 'BELOW'}  (medians of per-program ratios)"
    )


if __name__ == "__main__":
    main()
