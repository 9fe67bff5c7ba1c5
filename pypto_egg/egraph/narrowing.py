"""The loop-carry repair's decisions (§Q): the facts extract/narrow_carry.py states about a loop's carries, run
through rules/narrow.egg on the e-graph owner thread, and the `Reseed` decisions read back.

Its rules are an e-graph of their own, loaded once per process: the facts exist only once the plans are
lowered, so they cannot join the pass's first e-graph. A loop with carries to decide costs one push, one
schedule run and one pop on a handful of rules.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from ..backend import Backend, fractal_rows
from ..errors import RuleError
from ..extract.narrow_carry import CarryFacts, Decide, Reseed
from .accel.resident import resident_rules, run_on_owner
from .rules import RuleFile, read_rule_files, run_text
from .shipped import rules_dir

_SCHEDULE = "(run-schedule (saturate (run narrow-axes)) (saturate (run narrow)))"


@functools.cache
def narrow_rule_files() -> tuple[RuleFile, ...]:
    return tuple(read_rule_files(rules_dir() / "narrow.egg"))


def carry_decider(backend: Backend | None) -> Decide:
    """The rules' decisions for one loop's carries, with the backend's fractal height."""
    return functools.partial(decide_reseeds, fractal=fractal_rows(backend))


def decide_reseeds(carries: Sequence[CarryFacts], fractal: int) -> list[Reseed | None]:
    return run_on_owner(_decide, tuple(carries), fractal)


def _flag(b: bool) -> int:
    return 1 if b else 0


def _facts(carries: tuple[CarryFacts, ...], fractal: int) -> str:
    rows = [f"(CarryFractalRow {fractal})"]
    for c, f in enumerate(carries):
        rows.append(
            f"(CarryRow {c} {f.seed_rank} {f.yield_rank} {_flag(f.acc)} {_flag(f.created)} {f.box_rows})"
        )
        for j, a in enumerate(f.axes):
            flags = " ".join(str(_flag(x)) for x in (a.equal, a.whole, a.within, a.yield_whole))
            rows.append(
                f"(CarryAxisRow {c} {j} {flags} {a.seed_static} {a.yield_static} "
                f"{_flag(a.seed_inside)} {_flag(a.yield_inside)})"
            )
    return "\n".join(rows)


def _decide(carries: tuple[CarryFacts, ...], fractal: int) -> list[Reseed | None]:
    shared = resident_rules(narrow_rule_files())
    if shared.in_use:
        raise RuleError("rules/narrow.egg is already in use on this thread")
    egraph = shared.egraph
    shared.begin()
    try:
        run_text(egraph, _facts(carries, fractal), "<carry facts>")
        run_text(egraph, _SCHEDULE, "rules/narrow.egg", reuse=True)
        functions = egraph.freeze().functions
        forms = {
            egraph.value_to_i64(r.inputs[0]): egraph.value_to_string(r.inputs[1])
            for r in functions["Reseed"].rows
        }
        takes: dict[tuple[int, int], bool] = {
            (egraph.value_to_i64(r.inputs[0]), egraph.value_to_i64(r.inputs[1])): egraph.value_to_i64(
                r.inputs[2]
            )
            == 1
            for r in functions["Extent"].rows
        }
    finally:
        shared.end()
    return [
        Reseed(tuple(takes[c, j] for j in range(len(f.axes))), forms[c]) if c in forms else None
        for c, f in enumerate(carries)
    ]
