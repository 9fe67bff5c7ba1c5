"""`explain`: why each tile statement was lowered the way it was, for a whole program. The e-graph of each
function is run on egglog's owner thread and read back by egraph/decisions.py."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .egraph.accel.resident import run_on_owner
from .egraph.core import CoreRun
from .egraph.decisions import (
    Explanation,
    StatementExplanation,
    explain_function,
    format_explanation,
)
from .egraph.engine import EGraphRun
from .egraph.words import plan_words
from .errors import UserError
from .ir.stmt import Program


def explain_program(
    program: Program,
    functions: Sequence[str] | None = None,
    backend: str | None = None,
    extra_rules: Sequence[str | Path] = (),
    strategy: str = "reference",
    runner: str = "accelerated",
) -> Explanation:
    """The explanation of every tile statement of the named (default: every InCore) function; `runner="core"`
    explains the run of the rule files as written."""
    names = (
        list(functions) if functions is not None else [f.name for f in program.functions if f.type.is_incore]
    )
    if runner == "core":
        out: list[StatementExplanation] = []
        for name in names:
            with CoreRun(program, name, backend, extra_rules, strategy=strategy) as core:
                core.saturate()
                out += explain_function(core, name)
        return Explanation(program.name, out)
    if runner != "accelerated":
        raise UserError(f"unknown runner {runner!r}: accelerated or core")

    def run() -> list[StatementExplanation]:
        out: list[StatementExplanation] = []
        for name in names:
            with EGraphRun(program, name, backend, extra_rules, reuse_rules=True, strategy=strategy) as eg:
                eg.saturate()
                out += explain_function(eg, name)
        return out

    return Explanation(program.name, run_on_owner(run))


__all__ = ["Explanation", "StatementExplanation", "explain_program", "format_explanation", "plan_words"]
