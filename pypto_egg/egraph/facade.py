"""`FlattenEGraph`: one run of the rules over a program's functions (engine.py) with its pictures (viz.py),
the object a user drives by hand. It speaks the DSL: plans are keyed by the statement they lower and print as
words; the e-graph's terms stay available for rule authors."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..extract.term import Term
from ..ir.printer import print_expr
from ..ir.stmt import AssignStmt
from .core import CoreRun
from .decisions import Explanation, explain_function, format_explanation, statement_labels
from .engine import EGraphRun
from .plan_reader import PlanReader
from .viz import serialized_json, to_dot, write_html
from .words import plan_words, variable_names


@dataclass(frozen=True)
class Statement:
    """A tile statement as the user wrote it: its function, source line and text."""

    function: str
    line: int | None
    text: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.text}" if self.line is not None else self.text

    __repr__ = __str__


@dataclass(frozen=True)
class Plan:
    """The plan that lowers a statement: printed as words; `term` is the e-graph's term (None: no plan)."""

    words: str
    term: Term | None

    def __str__(self) -> str:
        return self.words

    __repr__ = __str__


@dataclass(frozen=True)
class Iteration:
    """One stage of the schedule as the run went through it: its rulesets, how many iterations it took, and the
    rules each iteration fired with their matches (empty where the stage ran in chunks)."""

    stage: int
    rulesets: tuple[str, ...]
    iterations: int
    fired: tuple[dict[str, int], ...] = ()

    def __str__(self) -> str:
        names = ", ".join(r or "<default>" for r in self.rulesets)
        return f"stage {self.stage} ({names}): {self.iterations} iteration(s)"

    __repr__ = __str__


class StatementPlans(dict[Statement, Plan]):
    """The plans of a run's statements; printed a statement a line."""

    def __str__(self) -> str:
        return "\n".join(f"{s}\n    -> {p}" for s, p in self.items())

    __repr__ = __str__


class _Inspection(PlanReader):
    """What a user asks of a run, whichever runner made it: its plans in words, why, its stages, its pictures."""

    def plans(self) -> StatementPlans:
        """Each tile statement (function, line, text) and the plan that lowers it, in words."""
        terms = self.plan_terms()
        labels = statement_labels(self)
        out = StatementPlans()
        for fn in self.functions:
            names = variable_names(fn)
            for sid in self.encoding.function_sids[fn.name]:
                stmt, call = self.encoding.statements[sid]
                head = f"{stmt.var.name} = " if isinstance(stmt, AssignStmt) else ""
                span = stmt.span or call.span
                key = Statement(fn.name, getattr(span, "line", None), head + print_expr(call))
                out[key] = Plan(plan_words(terms.get(sid), names, labels), terms.get(sid))
        return out

    def explanation(self) -> Explanation:
        """Why every tile statement took its plan (what `pypto-egg explain` reports)."""
        self.saturate()
        return Explanation(
            self.program.name, [s for fn in self.functions for s in explain_function(self, fn.name)]
        )

    def explain(self, line: int | None = None) -> str:
        """What `pypto-egg explain` prints, for the statement on `line` (every statement without one)."""
        found = self.explanation()
        return format_explanation(found.only_line(line) if line is not None else found)

    def timeline(self) -> list[Iteration]:
        """The run, stage by stage: the rulesets of each stage of rules/schedule.egg and its iterations."""
        report = self.saturate()
        each = report.iterations
        return [Iteration(i, tuple(rs), n, tuple(each[i]) if i < len(each) else ())
                for i, (rs, n) in enumerate(report.stages)]  # fmt: skip

    def serialized_json(self, max_nodes: int | None = 900) -> str:
        return serialized_json(self, max_nodes)

    def write_html(self, path: str | Path, max_nodes: int | None = 900) -> Path:
        return write_html(self, Path(path), max_nodes)

    def to_dot(self) -> str:
        return to_dot(self)


class CoreFlattenEGraph(_Inspection, CoreRun):
    """The e-graph of the rule files as written (the core runner): what `FlattenEGraph(..., runner="core")`
    makes."""


RUNNERS = ("accelerated", "core")


class FlattenEGraph(_Inspection, EGraphRun):
    """The e-graph of a program's functions: saturate, read plans and facts, ask why, and draw it.

    >>> eg = FlattenEGraph(program, "main_incore_0", backend="Ascend910B")
    >>> print(eg.saturate()); print(eg.plans()); print(eg.explain(12))
    >>> eg.write_html("egraph.html")

    `runner="core"` runs the rule files and schedule as written on a fresh e-graph (a `CoreFlattenEGraph`, which
    takes `backend`, `extra_rules`, `strategy` and `cost_model`): what it shows is what `rules/` says; the
    default, accelerated run gives the same plans.
    """

    def __new__(cls, *args: Any, runner: str = "accelerated", **kwargs: Any) -> Any:
        if runner == "core":
            return CoreFlattenEGraph(
                *args, **kwargs
            )  # (not an instance of cls: __init__ below is not called)
        if runner != "accelerated":
            raise UserError(f"unknown runner {runner!r}: one of {', '.join(RUNNERS)}")
        return super().__new__(cls)

    def __init__(self, *args: Any, runner: str = "accelerated", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
