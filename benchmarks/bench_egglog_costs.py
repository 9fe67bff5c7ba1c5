"""What egglog itself charges for the units a pass call is made of, on e-graphs shaped like the pass's: a step
that changes nothing, a rule that fires (by the table atoms its query joins, with semi-naive evaluation on and
off), rules firing in one step against one step each, and the reset of a filled table.

    python benchmarks/bench_egglog_costs.py [--repeat 60]

The pass's own figures (`bench_vs_reference.py`) rest on these: a real N-D call runs about 70 rule searches, 30
iterations and the reset of 50-80 filled tables. Run it again on a newer egglog to see whether the floor moved
before changing the rules' shape. Each figure is the median of `--repeat` runs of one egglog command, in us.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import egglog.bindings as eb

SPAN = eb.PanicSpan()


def schedule(rulesets: list[str]) -> object:
    """One command running each ruleset once, in turn (as the pass's planned steps run)."""
    return eb.RunSchedule(eb.Sequence(SPAN, [eb.Run(SPAN, eb.RunConfig(r, None)) for r in rulesets]))


def median_us(egraph: eb.EGraph, command: object, repeat: int, before: Callable[[int], None]) -> float:
    """The median time of `command`, with `before(i)` run (untimed) ahead of the i-th run."""
    times = []
    for i in range(repeat):
        before(i)
        t0 = time.perf_counter()
        egraph.run_program(command)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def run_text(egraph: eb.EGraph, text: str) -> None:
    egraph.run_program(*egraph.parse_program(text))


def quiet_steps(tables: int, steps: int, repeat: int) -> float:
    """`steps` steps of one rule each that finds nothing new, among `tables` tables, at most 50 of them holding a row."""
    eg = eb.EGraph()
    text = "\n".join(f"(relation T{i} (i64 i64))" for i in range(tables))
    text += "\n(relation E (i64))\n(relation Out (i64))\n"
    text += "\n".join(
        f"(ruleset r{i})\n(rule ((T{i % tables} x y) (E x)) ((Out y)) :ruleset r{i})" for i in range(steps)
    )
    text += "\n" + "\n".join(f"(T{i} 1 2)" for i in range(min(tables, 50)))
    run_text(eg, text)
    return median_us(eg, schedule([f"r{i}" for i in range(steps)]), repeat, lambda i: None)


def firing_rules(atoms: int, rules: int, seminaive: bool, repeat: int) -> float:
    """`rules` rules of `atoms` chained table atoms, each firing once on rows stated after a reset of every
    table (as a program's rows come after the one before's reset)."""
    eg = eb.EGraph(seminaive=seminaive)
    text = "\n".join(f"(relation A{i} (i64 i64))" for i in range(atoms))
    text += "\n(relation Out (i64 i64))\n(ruleset reset)\n"
    for name in [*(f"A{i}" for i in range(atoms)), "Out"]:
        text += f"(rule (({name} a b)) ((delete ({name} a b))) :ruleset reset)\n"
    for r in range(rules):
        query = " ".join(f"(A{i} x{i} x{i + 1})" for i in range(atoms))
        text += f"(ruleset r{r})\n(rule ({query}) ((Out {r} x{atoms})) :ruleset r{r})\n"
    run_text(eg, text)
    reset = schedule(["reset"])

    def state(i: int) -> None:
        eg.run_program(reset)
        base = 100 * i + 10
        run_text(
            eg, "\n".join(f"(A{k} {base + k} {base + k + 1})\n(A{k} {base + k + 50} 0)" for k in range(atoms))
        )

    return median_us(eg, schedule([f"r{r}" for r in range(rules)]), repeat, state)


def together_or_apart(rules: int, together: bool, repeat: int) -> float:
    """`rules` two-atom rules that each fire once: all in one step, or one step each."""
    eg = eb.EGraph()
    text = "(relation T (i64 i64))\n(relation E (i64))\n(ruleset all)\n"
    for i in range(rules):
        text += (
            f"(relation Out{i} (i64 i64))\n(ruleset r{i})\n"
            f"(rule ((E x) (T x y)) ((Out{i} x {i})) :ruleset r{i})\n"
            f"(rule ((E x) (T x y)) ((Out{i} x {i})) :ruleset all)\n"
        )
    run_text(eg, text)
    command = schedule(["all"] if together else [f"r{i}" for i in range(rules)])
    return median_us(eg, command, repeat, lambda i: run_text(eg, f"(E {i + 100})\n(T {i + 100} {i})"))


def reset(tables: int, filled: int, repeat: int) -> float:
    """One iteration of a reset ruleset (one deleting rule per table, as `egraph/accel/resident.py` declares) with
    `filled` of the `tables` tables holding three rows each."""
    eg = eb.EGraph()
    text = "\n".join(f"(relation T{i} (i64 i64))" for i in range(tables)) + "\n(ruleset reset)\n"
    text += "\n".join(f"(rule ((T{i} a b)) ((delete (T{i} a b))) :ruleset reset)" for i in range(tables))
    run_text(eg, text)
    rows = "\n".join(f"(T{i} {k} {k})" for i in range(filled) for k in range(3))
    return median_us(eg, schedule(["reset"]), repeat, lambda i: run_text(eg, rows))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=60)
    n = ap.parse_args().repeat
    print(f"{'what egglog runs':58s} {'us':>9s}")
    for tables in (10, 130, 230):
        one, many = quiet_steps(tables, 1, n), quiet_steps(tables, 30, n)
        print(f"{f'a step that changes nothing ({tables} tables)':58s} {(many - one) / 29:9.2f}")
    for atoms in (1, 2, 3, 4, 6, 8):
        on, off = firing_rules(atoms, 20, True, n) / 20, firing_rules(atoms, 20, False, n) / 20
        print(f"{f'a rule of {atoms} atoms firing once, semi-naive':58s} {on:9.2f}")
        print(f"{f'a rule of {atoms} atoms firing once, naive':58s} {off:9.2f}")
    one, apart = together_or_apart(20, True, n), together_or_apart(20, False, n)
    print(f"{'20 firing rules in one step':58s} {one:9.2f}")
    print(f"{'20 firing rules, one step each':58s} {apart:9.2f}")
    for tables in (60, 130, 230):
        empty, full = reset(tables, 0, n), reset(tables, 50, n)
        print(f"{f'a reset of {tables} tables, none filled':58s} {empty:9.2f}")
        print(f"{f'a reset of {tables} tables, 50 filled (per filled table)':58s} {(full - empty) / 50:9.2f}")


if __name__ == "__main__":
    main()
