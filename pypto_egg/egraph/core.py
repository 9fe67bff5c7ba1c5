"""The core runner: the pass as the rules state it, with no acceleration.

A fresh e-graph; `rules/flatten.egg` (its includes resolved relative to it) and any user files, as written; the
program's facts as the relations `rules/encode.egg` declares, with nothing stated that the rules can derive
themselves; `rules/schedule.egg` as written; then the decisions, read as every runner reads them
(`PlanReader`). Under the optimal strategy the routes the extraction settles are stated and the schedule runs
again, as the rules ask (optimal.egg).

It is the meaning the accelerated engine (engine.py) must reproduce: the tests run programs through both and
require the same output, byte for byte."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Self

import egglog.bindings as eb

from ..backend import Backend, get_backend
from ..extract.cost import CostModel, OptimalCostModel
from ..ir.stmt import Program
from .encoder import encode_functions
from .plan_reader import PlanReader, settled_plan
from .report import RunReport, fired
from .rules import RuleFile, read_rule_files, rules_dir, run_as_written, schedule_text


class CoreRun(PlanReader):
    """Encode the functions, load the rules as written, run the schedule as written; read plans and facts."""

    def __init__(
        self,
        program: Program,
        function_name: str | Sequence[str],
        backend: str | Backend | None = None,
        extra_rules: Sequence[str | Path] = (),
        strategy: str = "reference",
        cost_model: CostModel | None = None,
        reads: frozenset[str] | None = None,
    ) -> None:
        names = [function_name] if isinstance(function_name, str) else list(function_name)
        self.program, self.strategy, self._reads = program, strategy, reads
        self.functions = program.functions_named(names)
        self.backend = get_backend(backend)
        self.cost_model = (
            OptimalCostModel(self.backend) if cost_model is None and strategy == "optimal" else cost_model
        )
        self.report = RunReport(", ".join(names))
        self.report.rules_loaded = -1
        t0 = time.perf_counter()
        self.encoding = encode_functions(self.functions, self.backend, strategy, state_answers=False)
        self.report.times["encode"] = time.perf_counter() - t0
        self.rule_files: list[RuleFile] = read_rule_files(rules_dir() / "flatten.egg")
        self._user_rules = bool(extra_rules)
        for extra in extra_rules:
            self.rule_files += read_rule_files(Path(extra))
        self.report.rule_files = list(dict.fromkeys(str(rf.path) for rf in self.rule_files))
        self._facts_dir = tempfile.TemporaryDirectory(prefix="pypto-egg-facts-")
        self.egraph = eb.EGraph(fact_directory=self._facts_dir.name)
        t0 = time.perf_counter()
        for rf in self.rule_files:
            run_as_written(self.egraph, rf.text, str(rf.path))
        self.report.times["load rules"] = time.perf_counter() - t0
        self.report.facts = self.encoding.size
        self.report.statements = self.report.requests = len(self.encoding.statements)
        self._saturated = False
        self._start_reading()

    def saturate(self) -> RunReport:
        """The facts, then the schedule; under the optimal strategy, the settled routes and the schedule again."""
        if self._saturated:
            return self.report
        t0 = time.perf_counter()
        run_as_written(self.egraph, self._fact_commands(), "<facts>")
        self._record(run_as_written(self.egraph, schedule_text(), "rules/schedule.egg"))
        self._saturated = True
        if self.strategy == "optimal" and self.route_plans():
            routes = " ".join(settled_plan(sid, plan) for sid, plan in self.route_plans().items())
            run_as_written(self.egraph, f"{routes} (Settled)", "<routes>")
            self._start_reading()  # what was read before the routes settled is stale
            self._record(run_as_written(self.egraph, schedule_text(), "rules/schedule.egg"))
        self.report.times["saturate"] = time.perf_counter() - t0
        return self._saturated_report(self._user_rules)

    def _record(self, outputs: list[object]) -> None:
        """The schedule's run, as one stage of the report: its iterations and each rule's matches."""
        for out in outputs:
            report = getattr(out, "report", None)
            if report is not None:
                each = [fired([it]) for it in report.iterations]
                self.report.record_stage(
                    ["rules/schedule.egg"], len(report.iterations), fired(report.iterations), each
                )

    def _fact_commands(self) -> str:
        """Each relation's rows as a tab-separated file egglog's `input` reads (plain egglog, no packing)."""
        commands = []
        for rel, rows in self.encoding.rows.items():
            if rows:
                text = "".join("\t".join(_cell(c) for c in row) + "\n" for row in rows)
                (Path(self._facts_dir.name) / f"{rel}.tsv").write_text(text)
                commands.append(f'(input {rel} "{rel}.tsv")')
        return "\n".join(commands)

    def close(self) -> None:
        """The fact files go with the run (the e-graph is this run's alone and goes with it)."""
        self._facts_dir.cleanup()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _cell(value: Any) -> str:
    return str(int(value)) if isinstance(value, bool) else str(value)
