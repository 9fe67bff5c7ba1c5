"""PyPTO's whole pipeline with each FlattenTileNdTo2D: `ir.compile(skip_ptoas=True)` on the sample's N-D
programs, with the C++ pass and with pypto-egg's, each pass's share of the compile time, and pypto-egg's
split into reading PyPTO's objects, the pass and building PyPTO's objects back.

    python benchmarks/bench_pipeline.py [SAMPLE_DIR] [--repeat 3] [--limit N]

Needs PyPTO in this venv (`make reference`). Both pipelines run in this process, on the same programs, in
alternation, so the machine's noise falls on both; each figure is the median over the repeats and then over the
programs. The pass's own time is measured inside the pipeline: the pass object is wrapped, so it is the call
PyPTO makes, on the program PyPTO hands it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pypto_egg.pypto import PASS_NAME, FlattenOptions, load_pypto
from pypto_egg.pypto.bridge import run_on_objects
from pypto_egg.pypto.compare import DETERMINISTIC
from pypto_egg.pypto.pipeline import reference_properties, swapped_flatten

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SAMPLE = ROOT.parent / "shared" / "realworld-sample"


def nd_programs(sample: Path) -> list[Path]:
    out = []
    for meta in sorted((sample / "pre").glob("*.json")):
        info = json.loads(meta.read_text())
        if info.get("nd") and info.get("reference") == "ok":
            out.append(meta.with_suffix(".py"))
    return out


class TimedPass:
    """A pass that records how long each call takes; PyPTO's pipeline calls it like the pass it wraps."""

    def __init__(self, pto: Any, inner: Any) -> None:
        self.seconds = 0.0
        timed = self

        def run(program: Any) -> Any:
            start = time.perf_counter()
            try:
                return inner(program)
            finally:
                timed.seconds += time.perf_counter() - start

        self.factory = pto.passes.create_program_pass(run, PASS_NAME, reference_properties(pto))


STEPS = ("in", "pass", "out")


def egg_pass_with_steps(pto: Any, steps: dict[str, float]) -> Callable[[], Any]:
    """A maker of pypto-egg's pass (as `flatten_pass` makes it) that adds each step's seconds to `steps`."""
    egg = FlattenOptions().egg_pass(pto)

    def make() -> Any:
        return pto.passes.create_program_pass(
            lambda program: run_on_objects(pto, egg, program, steps), PASS_NAME, reference_properties(pto)
        )

    return make


def compile_once(pto: Any, text: str, make_pass: Callable[[], Any]) -> tuple[float, float]:
    """(whole compile, the pass's share of it) in seconds."""
    timed = TimedPass(pto, make_pass())
    with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as out, swapped_flatten(lambda: timed.factory):
        program = pto.language.parse(text)
        start = time.perf_counter()
        pto.ir.compile(program, output_dir=out, **DETERMINISTIC)
        whole = time.perf_counter() - start
    return whole, timed.seconds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sample", nargs="?", default=str(DEFAULT_SAMPLE))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0, help="time only the first N programs (0: all)")
    args = ap.parse_args()
    pto = load_pypto()
    pto.backend.set_backend_type(pto.backend.BackendType.Ascend910B)
    programs = nd_programs(Path(args.sample))[: args.limit or None]
    if not programs:
        print(f"no N-D programs under {args.sample}", file=sys.stderr)
        return 1
    steps: dict[str, float] = {}
    sides: dict[str, Callable[[], Any]] = {
        "reference": pto.passes.flatten_tile_nd_to_2d,
        "pypto-egg": egg_pass_with_steps(pto, steps),
    }
    rows: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
    split: list[dict[str, float]] = []  # per program: the median seconds of each of pypto-egg's steps
    compiled = 0
    for path in programs:
        text = path.read_text()
        try:  # one warm-up each: the first call in a process also pays for loading
            for make in sides.values():
                compile_once(pto, text, make)
        except Exception:  # PyPTO's pipeline cannot compile this text (not a program either pass is timed on)
            continue
        compiled += 1
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
        per_step: dict[str, list[float]] = {step: [] for step in STEPS}
        for _ in range(args.repeat):
            for name, make in sides.items():
                steps.clear()
                runs[name].append(compile_once(pto, text, make))
                if name == "pypto-egg":
                    for step in STEPS:
                        per_step[step].append(steps.get(step, 0.0))
        split.append({step: statistics.median(values) for step, values in per_step.items()})
        for name in sides:
            whole = statistics.median(w for w, _ in runs[name])
            share = statistics.median(p for _, p in runs[name])
            rows[name].append((whole, share))
    print(f"ir.compile(skip_ptoas=True) on the {compiled} of the sample's {len(programs)} N-D programs that PyPTO's "
          f"pipeline compiles; median over programs of the median of {args.repeat} runs")  # fmt: skip
    print(f"{'pass':<12}{'compile ms':>12}{'pass ms':>10}{'pass share':>12}{'rest ms':>10}")
    for name, values in rows.items():
        whole = statistics.median(w for w, _ in values) * 1e3
        own = statistics.median(p for _, p in values) * 1e3
        share = statistics.median(p / w for w, p in values) * 100
        rest = statistics.median(w - p for w, p in values) * 1e3
        print(f"{name:<12}{whole:>12.2f}{own:>10.2f}{share:>11.1f}%{rest:>10.2f}")
    ratio = statistics.median(e[0] / r[0] for e, r in zip(rows["pypto-egg"], rows["reference"]))
    print(f"compile time with pypto-egg's pass / with the C++ pass, median per program: {ratio:.2f}x")
    print("pypto-egg's pass, median per program: "
          + ", ".join(f"{step} {statistics.median(s[step] for s in split) * 1e3:.3f} ms" for step in STEPS)
          + f"; conversion in + out {statistics.median(s['in'] + s['out'] for s in split) * 1e3:.3f} ms")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
