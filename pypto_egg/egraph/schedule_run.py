"""The planned schedule as one egglog command, and what egglog's report of its run says: how many iterations each
step ran, and which rules matched."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

import egglog.bindings as eb

from .report import RunReport
from .rule_index import Stage
from .strata import StagePlan


def record_stage(stage: Stage, iterations: Sequence[Any], report: RunReport) -> None:
    """A stage's iterations and the rules it fired, read from its iterations' reports when the run report is read."""
    report.record_stage(stage.rulesets, len(iterations), fired(iterations))


def fired(iterations: Sequence[Any]) -> dict[str, int]:
    """The rules that matched in these iterations of egglog's report, by name, with their matches."""
    matches: dict[str, int] = {}
    for it in iterations:
        for rule, runs in it.rule_set_report.rule_reports.items():
            n = sum(r.num_matches for r in runs)
            if n:
                name = rule_name(rule)
                matches[name] = matches.get(name, 0) + n
    return matches


def fixpoint_iterations(ran: Sequence[Any], at: int, limit: int) -> int:
    """How many of the iterations from `at` on a step repeated to its fixpoint ran: up to and including the first
    that changed nothing, at most `limit` (egglog's `repeat` stops there)."""
    n = 1
    while n < limit and at + n - 1 < len(ran) and ran[at + n - 1].rule_set_report.changed:
        n += 1
    return n


def schedule_command(plan: StagePlan, limit: int, check: bool) -> Any:
    """`_built_schedule`, once per plan (stage_plan keeps its plans) and limit."""
    key = (id(plan), limit, check)
    hit = _SCHEDULES.get(key)
    if hit is None or hit[0] is not plan:
        if len(_SCHEDULES) >= 256:
            _SCHEDULES.clear()
        hit = _SCHEDULES[key] = (plan, _built_schedule(plan, limit, check))
    return hit[1]


_SCHEDULES: dict[tuple[int, int, bool], tuple[StagePlan, Any]] = {}


def _built_schedule(plan: StagePlan, limit: int, check: bool) -> Any:
    """Every step of every stage as one egglog command: a step run once is one iteration of its ruleset, any other
    repeats its ruleset until an iteration changes nothing or `limit` iterations ran (egglog's core `repeat`; the
    textual `run-schedule` of egglog's Python package always runs all of them). `check`: after each stage, one
    iteration of all its rules, which must change nothing."""
    span = eb.PanicSpan()
    parts: list[Any] = []
    for steps, whole in zip(plan.stages, plan.whole):
        for st in steps:
            run = eb.Run(span, eb.RunConfig(st.ruleset, None))
            parts.append(run if st.once else eb.Repeat(span, limit, run))
        if check and steps:
            parts.append(eb.Run(span, eb.RunConfig(whole, None)))
    return eb.RunSchedule(eb.Sequence(span, parts))


@functools.cache
def rule_name(rule: str) -> str:
    m = re.search(r':name\s+"([^"]+)"', rule)
    if m:
        return m.group(1)
    return " ".join(rule.split())[:80]
