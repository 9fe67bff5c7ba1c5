"""How low a call can go with this design, beside the reference in the same run: the two costs no change to the
pass's Python can remove, as a ratio to the reference's whole call, and the Python a call spends besides them
per statement of its output.

    python benchmarks/bench_floor.py [--repeat 9] [--sample ../shared/realworld-sample] [--json]

- egglog: the pass's egglog call itself (the reset the program before owed, the facts' input and the schedule).
- output nodes: constructing the IR nodes of the pass's output that its input does not hold, each by its class
  from its final fields, children already built (no walk, no decision, no type deduction: the objects alone).

Their sum over the reference's time is the floor of the ratio: a pass that encoded, checked, extracted, lowered
and verified in no time at all would still cost that much. What the call costs besides them, over the statements of
its output, is the Python per output statement ((call - egglog - output) / statements), the collector's work on
what the pass makes included: the pass is called as a library call, with Python's collector as Python sets it.

The goals: at most 6 us of Python per output statement on every workload with statements enough that a call's
fixed costs do not decide it (aim 3 us); on the seed and the real N-D programs, whose calls are a handful of
statements, a ratio at most 1.3 times the floor. `--json` prints one JSON object per line per workload instead of
the table. Needs PyPTO in the venv (`make reference`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import statistics
import time
from pathlib import Path
from typing import Any

import bench_workloads as w
from bench_vs_reference import WORKLOADS, Sides

import pypto_egg.language as pl
from pypto_egg.egraph import engine
from pypto_egg.ir.stmt import Program, SeqStmts
from pypto_egg.ir.walk import blocks

Construction = list[tuple[type, tuple[Any, ...]]]

PYTHON_GOAL_US = 6.0  # Python per output statement, on workloads of many statements (aim 3)
FLOOR_GOAL = 1.3  # ratio over floor, on the seed and the real N-D programs
FEW_STATEMENTS = ("seed", "real N-D")  # the workloads judged by their ratio over the floor


def statements(program: Program) -> int:
    """The statements of a program's InCore functions (a sequence counts as what it holds)."""
    return sum(
        1
        for fn in program.functions
        if fn.type.is_incore
        for block in blocks(fn.body)
        for s in block
        if not isinstance(s, SeqStmts)
    )


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
    stmts: list[int] = dataclasses.field(default_factory=list)

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
        self.stmts.append(statements(out))

    def figures(self, name: str) -> dict[str, Any]:
        """The workload's medians: each call's figures, and of the calls, the ratio, the floor and the Python per
        output statement."""
        m = statistics.median
        ratios = [e / r for e, r in zip(self.egg, self.ref)]
        floors = [(g + b) / r for g, b, r in zip(self.egglog, self.build, self.ref)]
        python = [(e - g - b) / n * 1e3 for e, g, b, n in zip(self.egg, self.egglog, self.build, self.stmts)]
        return {
            "workload": name,
            "ratio": round(m(ratios), 3),
            "floor": round(m(floors), 3),
            "python_us_per_statement": round(m(python), 2),
            "ratio_over_floor": round(m(r / f for r, f in zip(ratios, floors)), 2),
            "statements": int(m(self.stmts)),
            "reference_ms": round(m(self.ref), 4),
            "pypto_egg_ms": round(m(self.egg), 4),
            "egglog_ms": round(m(self.egglog), 4),
            "output_ms": round(m(self.build), 4),
            "output_nodes": int(m(self.nodes)),
        }


def goal(figures: dict[str, Any]) -> str:
    """The workload's goal, and whether it is met."""
    if any(figures["workload"].startswith(few) for few in FEW_STATEMENTS):
        met = figures["ratio_over_floor"] <= FLOOR_GOAL
        return f"ratio/floor <= {FLOOR_GOAL:g}: {'met' if met else 'MISSED'}"
    met = figures["python_us_per_statement"] <= PYTHON_GOAL_US
    return f"python <= {PYTHON_GOAL_US:g} us: {'met' if met else 'MISSED'}"


def table_row(f: dict[str, Any]) -> str:
    return (
        f"{f['workload']:38s} {f['reference_ms']:9.3f} {f['pypto_egg_ms']:9.3f} {f['egglog_ms']:9.3f}"
        f" {f['output_ms']:9.3f} {f['statements']:6d} {f['ratio']:8.2f}x {f['floor']:7.2f}x"
        f" {f['ratio_over_floor']:6.2f} {f['python_us_per_statement']:8.2f}  {goal(f)}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument(
        "--sample", default=str(Path(__file__).resolve().parents[2] / "shared" / "realworld-sample")
    )
    ap.add_argument("--json", action="store_true", help="one JSON object per line per workload")
    args = ap.parse_args()
    sides = Sides()
    clock = EgglogClock()
    rng = random.Random(2026)
    warm = w.seed(rng)
    sides.egg(warm), sides.reference(warm)

    def report(figures: dict[str, Any]) -> None:
        print(json.dumps(figures) if args.json else table_row(figures), flush=True)

    if not args.json:
        print(
            f"{'workload':38s} {'reference':>9s} {'pypto-egg':>9s} {'egglog':>9s} {'output':>9s} {'stmts':>6s}"
            f" {'ratio':>9s} {'floor':>8s} {'r/fl':>6s} {'py us/st':>8s}  goal"
            "\n(ms, medians; floor = (egglog + output) / reference; py us/st = (call - egglog - output) / statements)"
        )
    for name, make, _goal, most in WORKLOADS:
        if most < 5:
            continue  # the reference alone takes seconds a call there
        figures = Figures()
        for _ in range(min(args.repeat, most)):
            figures.add(sides, clock, make(rng))
        report(figures.figures(name))
    sample = Path(args.sample)
    if not (sample / "pre").is_dir():
        return
    per_program = Figures()
    for path in w.nd_sample_programs(sample):
        text = path.read_text()
        sides.egg(text), sides.reference(text)  # warm-up, as bench_vs_reference does
        per_program.add(sides, clock, text)
    report(per_program.figures("real N-D programs, median"))


if __name__ == "__main__":
    main()
