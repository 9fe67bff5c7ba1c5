"""What checking the C++ pass costs: `pypto-egg check` on each program of the sample (the C++ pass through PyPTO,
pypto-egg's pass, and the checks), and, inside PyPTO's pipeline, `ir.compile` within `checking_flatten` beside the
plain `ir.compile`, per program.

    python benchmarks/bench_check.py [SAMPLE_DIR] [--repeat 3] [--limit N]

Needs PyPTO in this venv (`make reference`). Each figure is the median over the repeats, then over the programs
(and the 90th percentile over the programs); both pipelines run in this process, alternately.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pypto_egg.check import counts
from pypto_egg.check.run import check_text
from pypto_egg.pypto import checking_flatten, load_pypto
from pypto_egg.pypto.compare import DETERMINISTIC

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SAMPLE = ROOT.parent / "shared" / "realworld-sample"


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


def compile_ms(text: str, checked: bool) -> float:
    pto_ = load_pypto()
    with tempfile.TemporaryDirectory(prefix="bench-check-") as out:
        program = pto_.language.parse(text)
        start = time.perf_counter()
        if checked:
            with checking_flatten(on_wrong=lambda v: None):
                pto_.ir.compile(program, output_dir=out, **DETERMINISTIC)
        else:
            pto_.ir.compile(program, output_dir=out, **DETERMINISTIC)
        return (time.perf_counter() - start) * 1e3


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sample", nargs="?", default=str(DEFAULT_SAMPLE))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0, help="only the first N programs (0: all)")
    args = ap.parse_args()
    pto = load_pypto()
    pto.backend.set_backend_type(pto.backend.BackendType.Ascend910B)
    paths = sorted((Path(args.sample) / "pre").glob("*.py"))[: args.limit or None]
    if not paths:
        print(f"no programs under {args.sample}", file=sys.stderr)
        return 1
    check_ms: list[float] = []
    plain_ms: list[float] = []
    checked_ms: list[float] = []
    verdicts = []
    for path in paths:
        text = path.read_text()
        check_text(text, str(path))  # warm-up: the kind's rules, PyPTO's modules
        runs = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            found = check_text(text, str(path))
            runs.append((time.perf_counter() - start) * 1e3)
        verdicts += found
        check_ms.append(statistics.median(runs))
        try:
            compile_ms(text, False)
        except Exception:  # PyPTO's pipeline cannot compile this program: only the check is timed
            continue
        plain, checked = [], []
        for _ in range(args.repeat):
            plain.append(compile_ms(text, False))
            checked.append(compile_ms(text, True))
        plain_ms.append(statistics.median(plain))
        checked_ms.append(statistics.median(checked))
    m = statistics.median
    tally = ", ".join(f"{n} {k}" for k, n in counts(verdicts).items() if n)
    print(
        f"pypto-egg check, C++ pass included, on {len(paths)} programs ({len(verdicts)} functions: {tally})"
    )
    print(f"  per program: median {m(check_ms):.2f} ms, 90th percentile {p90(check_ms):.2f} ms")
    if plain_ms:
        extra = [c - p for c, p in zip(checked_ms, plain_ms)]
        ratio = [c / p for c, p in zip(checked_ms, plain_ms)]
        print(
            f"ir.compile within checking_flatten, on the {len(plain_ms)} programs PyPTO's pipeline compiles"
        )
        print(f"  plain {m(plain_ms):.2f} ms, checked {m(checked_ms):.2f} ms: the check adds {m(extra):.2f} ms "
              f"(90th percentile {p90(extra):.2f} ms), {m(ratio):.2f}x the plain compile (medians per program)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
