"""Cost models: what the extractor minimises.

The default model makes requests, handles and derived helper functions unextractable (a plan must
be fully lowered), makes any Fail plan win (a violated precondition is reported, never bypassed),
and otherwise counts nodes, so the smallest equivalent dimension term is chosen.
"""

from __future__ import annotations

import math
from typing import Protocol

from .graph import ENode

INF = math.inf

HANDLES = {"DimOf", "DimsOf", "OpndsOf"}
HELPERS = {
    "Rows",
    "RowsFrom",
    "LastDim",
    "Init",
    "Flat",
    "RowOff",
    "RowOffFrom",
    "Off2D",
    "Ones",
    "Rev",
    "RevAcc",
    "TPages",
}
# Diagnostics the reference raises before others in the same statement.
FAIL_PRIORITY = {"D-14": 1}


class CostModel(Protocol):
    def node_cost(self, node: ENode, child_costs: list[float]) -> float: ...


class DefaultCostModel:
    def node_cost(self, node: ENode, child_costs: list[float]) -> float:
        op = node.op
        if op in HANDLES or op in HELPERS or op.endswith("Req"):
            return INF
        if op == "Fail":
            code = node.args[0]
            return 0.001 * FAIL_PRIORITY.get(code if isinstance(code, str) else "", 5)
        base = 0.5 if op == "Forward" else 1.0
        return base + sum(child_costs)
