"""The planned schedule as one egglog command, and what egglog's report of its run says: how many iterations each
step ran, and which rules matched."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import egglog.bindings as eb

from ...errors import InternalError, ScheduleLimitError
from ..report import RunReport, fired
from ..rule_index import Stage
from .strata import StagePlan


def record_stage(stage: Stage, iterations: Sequence[Any], report: RunReport) -> None:
    """A stage's iterations and the rules each fired, read from its iterations' reports when the run report is
    read."""
    report.record_stage(
        stage.rulesets, len(iterations), fired(iterations), [fired([it]) for it in iterations]
    )


def record_stages(account: Callable[[], list[tuple[Stage, Sequence[Any]]]], report: RunReport) -> None:
    """Every stage's iterations and rules, as `account` tells them apart."""
    for stage, iterations in account():
        record_stage(stage, iterations, report)


def account_stages(
    plan: StagePlan, stages: Sequence[Stage], ran: Sequence[Any], limit: int, check: bool
) -> list[tuple[Stage, Sequence[Any]]]:
    """Each stage's share of the iterations the planned schedule ran. A step that stopped at the iteration limit
    still changing the e-graph is an error, and so, under the schedule `check`, is a stage its steps left short of
    its fixpoint (the check's extra iteration of all its rules changed something)."""
    at = 0
    out = []
    for stage, steps in zip(stages, plan.stages):
        body = " ".join(f"(run {r})" if r else "(run)" for r in stage.rulesets)
        start = at
        for st in steps:
            n = 1 if st.once else fixpoint_iterations(ran, at, limit)
            at += n
            if at > len(ran):
                break
            if n >= limit and not st.once and ran[at - 1].rule_set_report.changed:
                raise ScheduleLimitError(
                    f"saturation stopped at the iteration limit ({limit}) in stage {body}; a rule keeps "
                    "creating new terms. Raise Limits.max_iterations or fix the rule."
                )
        out.append((stage, ran[start:at]))
        if check and steps:
            if at < len(ran) and ran[at].rule_set_report.changed:
                rules = sorted(fired([ran[at]]))
                raise InternalError(
                    f"the steps of stage {body} (egraph/accel/strata.py) stopped short of its fixpoint: run as one "
                    f"ruleset, it still changes the e-graph ({', '.join(rules)})"
                )
            at += 1
    if at != len(ran):
        raise InternalError(f"the schedule ran {len(ran)} iterations, its steps account for {at}")
    return out


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
