"""The FlattenTileNdTo2D pass: preconditions → encode → saturate → extract → lower → verify; one e-graph holds
every InCore function of a program that has something to flatten."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pypto_egg.extract.decode import TermDecoder
from pypto_egg.extract.failures import failure
from pypto_egg.extract.lower_matmul import MatmulLowerer

from ..backend import Backend, get_backend
from ..egraph.accel import Acceleration
from ..egraph.accel.resident import run_on_owner
from ..egraph.core import CoreRun
from ..egraph.engine import EGraphRun, Limits, check_strategy
from ..egraph.narrowing import carry_decider
from ..egraph.report import RunReport
from ..errors import PassError, UserError
from ..extract.cost import CostModel
from ..extract.narrow_carry import narrow_acc_carries
from ..extract.term import Term
from ..ir.node import replaced
from ..ir.stmt import Function, Program
from ..ir.walk import walk_calls
from .preconditions import check_preconditions
from .properties import IRProperty
from .trivial import lowered_if_trivial
from .validate import ValidationReport, validate_translation
from .verify import verify_tile_ops_2d


@dataclass
class FlattenTileNdTo2D:
    """Flatten every >2D tile op of the InCore / AIC / AIV functions to 2D.

    Other functions are returned unchanged (the same objects); the input program is never mutated.
    """

    backend: Backend | None = None
    extra_rules: Sequence[str | Path] = ()
    verify: bool = True
    limits: Limits = field(default_factory=Limits)
    reports: list[RunReport] = field(default_factory=list)
    validate: bool = False  # interpret each rewritten function before and after (see passes/validate.py)
    strategy: str = "reference"  # or "optimal": every legal operand route, the cheapest by the cost model
    validation_seeds: int = 2
    validation: ValidationReport | None = None  # what the last validated call checked
    cost_model: CostModel | None = None  # what extraction minimises (default: the strategy's model)
    # the accelerated runner's speed-ups, each switchable (egraph/accel/); a function with nothing to flatten never
    # builds an e-graph (`trivial_skip`) unless user rules are given: those may act on any function
    acceleration: Acceleration = field(default_factory=Acceleration)
    # "accelerated": the engine with its speed-ups (egraph/engine.py); "core": the rules and the schedule as written
    # on a fresh e-graph, nothing stated that the rules derive, no function skipped (egraph/core.py)
    runner: str = "accelerated"
    # of the last call, each rewritten function's plans as the lowering took them: the place of a statement among
    # the function's tile statements -> its plan (what `explain` reports; a test holds the two equal)
    lowered: dict[str, dict[int, Term]] = field(default_factory=dict)

    name = "FlattenTileNdTo2D"
    required = frozenset({IRProperty.SSAForm, IRProperty.IncoreTileOps, IRProperty.NormalizedStmtStructure})
    produced = frozenset({IRProperty.SSAForm, IRProperty.TileOps2D, IRProperty.NormalizedStmtStructure})
    invalidated: frozenset[IRProperty] = frozenset()

    def get_name(self) -> str:
        return self.name

    def get_required_properties(self) -> frozenset[IRProperty]:
        return self.required

    def get_produced_properties(self) -> frozenset[IRProperty]:
        return self.produced

    def get_invalidated_properties(self) -> frozenset[IRProperty]:
        return self.invalidated

    def __call__(self, program: Program) -> Program:
        result = self._run(program)
        if self.validate and result is not program:
            self.validation = validate_translation(program, result, self.validation_seeds)
        return result

    def _run(self, program: Program) -> Program:
        self.reports, self.lowered = [], {}
        out: dict[int, Function] = {}
        todo: list[int] = []  # the functions the e-graph rewrites
        failed: PassError | None = None
        # the functions returned as they are, on which the trivial walk saw TileOps2D hold
        checked: set[str] = set()
        for i, fn in enumerate(program.functions):
            if not fn.type.is_incore:
                out[i] = fn
                continue
            # a function with nothing to flatten has no N-D tile for a precondition to refuse
            if self.acceleration.trivial_skip and not self.extra_rules and self.runner != "core":
                kept = lowered_if_trivial(fn)
                if kept is not None:
                    out[i] = narrow_acc_carries(kept[0], carry_decider(self.backend))
                    if kept[1] and out[i] is fn:
                        checked.add(fn.name)
                    continue
            try:
                check_preconditions(fn)
            except PassError as e:  # the functions before it are rewritten (and may fail) first, in order
                failed = e
                break
            todo.append(i)
        for batch in _batches(program, todo):
            if batch:
                fns = [program.functions[i] for i in batch]
                if self.runner == "core":
                    out.update(zip(batch, self.rewrite(program, fns)))
                else:
                    out.update(zip(batch, run_on_owner(self.rewrite, program, fns)))
        if failed is not None:
            raise failed
        functions = tuple(out[i] for i in range(len(program.functions)))
        if all(a is b for a, b in zip(functions, program.functions)):
            return program
        result = replaced(program, functions=functions)
        if self.verify:
            verify_tile_ops_2d(result, checked)
        return result

    def rewrite(self, program: Program, fns: list[Function]) -> list[Function]:
        """Encode, saturate and extract the functions together in one e-graph, then lower each in order
        (on the e-graph owner thread)."""
        names = [fn.name for fn in fns]
        run: EGraphRun | CoreRun = (
            CoreRun(program, names, self.backend, self.extra_rules, self.strategy, self.cost_model, MatmulLowerer.FACTS)
            if self.runner == "core"
            else EGraphRun(
                program, names, self.backend, self.extra_rules, self.limits, strategy=self.strategy,
                cost_model=self.cost_model, reads=MatmulLowerer.FACTS, acceleration=self.acceleration,
            )
        )  # fmt: skip
        with run as eg:
            eg.saturate()
            plans = eg.plan_terms()
            t0 = time.perf_counter()
            lowered = []
            decode = TermDecoder(eg.encoding)  # (the functions' plans share terms)
            for fn in fns:
                # the contiguity precondition (D-07) is a rule decision, reported before any lowering error
                for sid in eg.encoding.function_sids[fn.name]:
                    stmt, call = eg.encoding.statements[sid]
                    plan = plans.get(sid)
                    if call.op == "tile.assemble" and plan is not None and plan.op == "Fail":
                        raise failure(stmt, call, plan)
                lowerer = MatmulLowerer(fn, eg.encoding, plans, eg.facts, decode)
                lowered.append(narrow_acc_carries(lowerer.run(), carry_decider(self.backend)))
                first = eg.encoding.function_sids[fn.name].start
                self.lowered[fn.name] = {sid - first: plan for sid, plan in lowerer.lowered.items()}
            eg.report.times["lower"] = time.perf_counter() - t0
        self.reports.append(eg.report)
        return lowered


def _batches(program: Program, todo: list[int]) -> list[list[int]]:
    """The functions that can share one e-graph: the encoder keys statements by identity, so a function
    that shares statement objects with an earlier one of its batch (a copy) starts another."""
    if len(todo) < 2:
        return [todo]
    batches: list[list[int]] = [[]]
    seen: set[int] = set()  # the statements of the current batch
    for i in todo:
        ids = {id(s) for s, _ in walk_calls(program.functions[i].body)}
        if ids & seen:
            batches.append([])
            seen = set()
        batches[-1].append(i)
        seen |= ids
    return batches


def flatten_tile_nd_to_2d(
    backend: str | Backend | None = None,
    extra_rules: Sequence[str | Path] = (),
    verify: bool = True,
    limits: Limits | None = None,
    validate: bool = False,
    seeds: int = 2,
    strategy: str = "reference",
    cost_model: CostModel | None = None,
    runner: str = "accelerated",
) -> FlattenTileNdTo2D:
    """The pass object: `passes.flatten_tile_nd_to_2d()(program) -> Program`.

    `validate`: interpret every rewritten function before and after on `seeds` random inputs and raise
    ValidationError at the first output that differs.
    `strategy`: "reference" gives the reference pass's answer; "optimal" lets the e-graph hold every legal
    route of each batched-matmul operand and takes the cheapest by `extract.cost.OptimalCostModel`.
    `cost_model`: extraction minimises this model instead (see extract/cost.py).
    `runner`: "accelerated" (the default) or "core", the rules and schedule as written (egraph/core.py): the
    same answer, slower; the tests hold the two equal."""
    check_strategy(strategy)
    if runner not in RUNNERS:
        raise UserError(f"unknown runner {runner!r}; choose one of {', '.join(RUNNERS)}")
    return FlattenTileNdTo2D(
        get_backend(backend), tuple(extra_rules), verify, limits or Limits(), validate=validate,
        validation_seeds=seeds, strategy=strategy, cost_model=cost_model, runner=runner,
    )  # fmt: skip


RUNNERS = ("accelerated", "core")


__all__ = ["FlattenTileNdTo2D", "flatten_tile_nd_to_2d"]
