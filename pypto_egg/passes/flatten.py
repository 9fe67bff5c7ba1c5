"""The FlattenTileNdTo2D pass: preconditions → encode → saturate → extract → lower → verify, per function."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..backend import Backend, get_backend
from ..egraph.engine import FlattenEGraph, Limits, run_on_owner
from ..egraph.report import RunReport
from ..ir.stmt import Function, Program
from .preconditions import check_preconditions
from .properties import IRProperty
from .trivial import nothing_to_flatten, retouch
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
    skip_trivial: bool = (
        True  # a function with nothing to flatten never builds an e-graph (see `nothing_to_flatten`)
    )

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
        self.reports = []
        functions = tuple(self.transform(program, fn) for fn in program.functions)
        if all(a is b for a, b in zip(functions, program.functions)):
            return program
        result = replace(program, functions=functions)
        if self.verify:
            verify_tile_ops_2d(result)
        return result

    def transform(self, program: Program, fn: Function) -> Function:
        if not fn.type.is_incore:
            return fn
        check_preconditions(fn)
        from pypto_egg.extract.narrow_carry import narrow_acc_carries

        if self.skip_trivial and nothing_to_flatten(fn):
            return narrow_acc_carries(retouch(fn))
        return run_on_owner(self.rewrite, program, fn)

    def rewrite(self, program: Program, fn: Function) -> Function:
        """Encode, saturate, extract and lower one function (on the e-graph owner thread)."""
        from pypto_egg.extract.lower import failure
        from pypto_egg.extract.lower_matmul import MatmulLowerer
        from pypto_egg.extract.narrow_carry import narrow_acc_carries

        with FlattenEGraph(
            program, fn.name, self.backend, self.extra_rules, self.limits, reuse_rules=True
        ) as eg:
            eg.saturate()
            plans = eg.plans()
            # the contiguity precondition (D-07) is a rule decision, reported before any lowering error
            for sid, (stmt, call) in enumerate(eg.encoding.statements):
                plan = plans.get(sid)
                if call.op == "tile.assemble" and plan is not None and plan.op == "Fail":
                    raise failure(stmt, call, plan)
            t0 = time.perf_counter()
            lowered = narrow_acc_carries(MatmulLowerer(fn, eg.encoding, plans, eg.facts).run())
            eg.report.times["lower"] = time.perf_counter() - t0
        self.reports.append(eg.report)
        return lowered


def flatten_tile_nd_to_2d(
    backend: str | Backend | None = None,
    extra_rules: Sequence[str | Path] = (),
    verify: bool = True,
    limits: Limits | None = None,
) -> FlattenTileNdTo2D:
    """The pass object: `passes.flatten_tile_nd_to_2d()(program) -> Program`."""
    return FlattenTileNdTo2D(get_backend(backend), tuple(extra_rules), verify, limits or Limits())


__all__ = ["FlattenTileNdTo2D", "flatten_tile_nd_to_2d"]
