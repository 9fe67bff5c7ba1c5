"""What a saturation run did: rules fired, e-graph size, time per phase."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RunReport:
    function: str
    rule_files: list[str] = field(default_factory=list)
    statements: int = 0
    facts: int = 0
    rules_loaded: int = 0  # the rules these facts could fire (egraph/relevance.py); -1: every rule
    stages: list[tuple[list[str], int]] = field(default_factory=list)  # rulesets, iterations
    rules_fired: dict[str, int] = field(default_factory=dict)  # rule name -> matches
    eclasses: int = 0
    enodes: int = 0
    times: dict[str, float] = field(default_factory=dict)  # phase -> seconds
    ties: int = (
        0  # statements whose picked plans tied (a gap in rules/choose.egg's order; see EGraphRun.plans)
    )

    def __str__(self) -> str:
        lines = [f"e-graph run for function {self.function!r}"]
        lines.append(f"  encoded: {self.statements} tile statements as {self.facts} facts")
        loaded = "every rule" if self.rules_loaded < 0 else f"{self.rules_loaded} rules"
        lines.append(f"  e-graph: {self.eclasses} e-classes, {self.enodes} e-nodes, {loaded} loaded")
        for rulesets, iters in self.stages:
            names = ", ".join(r or "<default>" for r in rulesets)
            lines.append(f"  stage [{names}]: {iters} iteration(s)")
        fired = sorted(((n, r) for r, n in self.rules_fired.items() if n), key=lambda x: (-x[0], x[1]))
        lines.append(f"  rules fired: {len(fired)}")
        for n, r in fired:
            lines.append(f"    {n:6d}  {r}")
        if self.ties:
            lines.append(f"  ties: {self.ties} statement(s) with picked plans of equal precedence")
        lines.append("  time: " + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in self.times.items()))
        return "\n".join(lines)

    def as_dict(self) -> dict[str, object]:
        return {
            "function": self.function, "rule_files": self.rule_files, "statements": self.statements,
            "facts": self.facts, "rules_loaded": self.rules_loaded, "stages": self.stages, "rules_fired": self.rules_fired,
            "eclasses": self.eclasses, "enodes": self.enodes, "times": self.times,
        }  # fmt: skip
