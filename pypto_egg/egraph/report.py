"""What a saturation run did: rules fired, e-graph size, time per phase."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class RunReport:
    """What a saturation run did. The stages' iterations and the rules fired are read from egglog's reports only
    when asked for (a pass that nobody asks costs nothing for them)."""

    function: str
    rule_files: list[str] = field(default_factory=list)
    statements: int = 0
    # the statements' distinct requests (EGraphRun shares a request among statements asking alike)
    requests: int = 0
    facts: int = 0
    rules_loaded: int = 0  # the rules these facts could fire (egraph/accel/relevance.py); -1: every rule
    _stages: list[tuple[list[str], int]] = field(default_factory=list)  # rulesets, iterations
    _rules_fired: dict[str, int] = field(default_factory=dict)  # rule name -> matches
    # each stage's iterations, each the rules it fired with their matches (empty: not told apart)
    _iterations: list[list[dict[str, int]]] = field(default_factory=list)
    _pending: list[Callable[[RunReport], None]] = field(default_factory=list, repr=False)
    eclasses: int = 0
    enodes: int = 0
    times: dict[str, float] = field(default_factory=dict)  # phase -> seconds
    # a user's rules that matched nothing in the run, each with the atom of its query nothing satisfied
    warnings: list[str] = field(default_factory=list)
    ties: int = (
        0  # statements whose picked plans tied (a gap in rules/choose.egg's order; see EGraphRun.plans)
    )

    def defer(self, fill: Callable[[RunReport], None]) -> None:
        """`fill` records what it knows once the stages or the rules fired are read."""
        self._pending.append(fill)

    def record_stage(
        self, rulesets: Sequence[str], iterations: int, matches: dict[str, int],
        each: Sequence[dict[str, int]] = (),
    ) -> None:  # fmt: skip
        self._stages.append((list(rulesets), iterations))
        self._iterations.append(list(each))
        for rule, n in matches.items():
            self._rules_fired[rule] = self._rules_fired.get(rule, 0) + n

    def _settle(self) -> None:
        pending, self._pending = self._pending, []
        for fill in pending:
            fill(self)

    @property
    def stages(self) -> list[tuple[list[str], int]]:  # rulesets, iterations
        self._settle()
        return self._stages

    @property
    def iterations(self) -> list[list[dict[str, int]]]:
        """Each stage's iterations, each the rules it fired with their matches (a stage run in chunks: none)."""
        self._settle()
        return self._iterations

    def first_fired(self, rule: str) -> tuple[int, int] | None:
        """(stage, iteration) where the rule first matched, both counted from 0 (None: never, or not told)."""
        for s, its in enumerate(self.iterations):
            for i, rules in enumerate(its):
                if rules.get(rule):
                    return s, i
        return None

    @property
    def rules_fired(self) -> dict[str, int]:  # rule name -> matches
        self._settle()
        return self._rules_fired

    def __str__(self) -> str:
        lines = [f"e-graph run for function {self.function!r}"]
        lines.append(
            f"  encoded: {self.statements} tile statements ({self.requests} requests) as {self.facts} facts"
        )
        loaded = "every rule" if self.rules_loaded < 0 else f"{self.rules_loaded} rules"
        lines.append(f"  e-graph: {self.eclasses} e-classes, {self.enodes} e-nodes, {loaded} loaded")
        for rulesets, iters in self.stages:
            names = ", ".join(r or "<default>" for r in rulesets)
            lines.append(f"  stage [{names}]: {iters} iteration(s)")
        fired = sorted(((n, r) for r, n in self.rules_fired.items() if n), key=lambda x: (-x[0], x[1]))
        lines.append(
            f"  rules fired: {len(fired)} distinct rule(s), {sum(n for n, _ in fired)} firing(s) in all"
        )
        lines.append(f"    {'firings':>7s}  rule")
        for n, r in fired:
            lines.append(f"    {n:7d}  {r}")
        if self.ties:
            lines.append(f"  ties: {self.ties} statement(s) with picked plans of equal precedence")
        lines += [f"  warning: {w}" for w in self.warnings]
        lines.append("  time: " + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in self.times.items()))
        return "\n".join(lines)

    def as_dict(self) -> dict[str, object]:
        return {
            "function": self.function, "rule_files": self.rule_files, "statements": self.statements,
            "requests": self.requests, "facts": self.facts, "rules_loaded": self.rules_loaded, "stages": self.stages, "rules_fired": self.rules_fired,
            "eclasses": self.eclasses, "enodes": self.enodes, "times": self.times, "warnings": self.warnings,
        }  # fmt: skip


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


@functools.cache
def rule_name(rule: str) -> str:
    m = re.search(r':name\s+"([^"]+)"', rule)
    if m:
        return m.group(1)
    return " ".join(rule.split())[:80]
