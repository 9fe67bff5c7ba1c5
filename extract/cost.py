"""Cost models: what the extractor minimises.

A model gives each e-node its own cost; the extractor adds up the costs of the sub-DAG a choice
brings in (shared e-classes counted once). The default model makes requests, handles and derived
helper functions unextractable (a plan must be fully lowered), makes any Fail plan win (a violated
precondition is reported, never bypassed), and otherwise counts nodes, so the smallest equivalent
dimension term is chosen.
"""

from __future__ import annotations

import math
from typing import Protocol

from .graph import ENode

INF = math.inf

HANDLES = {"DimOf", "DimsOf", "OpndsOf"}
HELPERS = {
    "Rows", "RowsFrom", "LastDim", "Init", "Flat", "MergeValid", "VRow", "VRowAcc", "RowOff", "RowOffFrom", "Off2D",
    "Ones", "Rev", "RevAcc",
}  # fmt: skip
# Diagnostics the reference raises before others of the same statement.
FAIL_PRIORITY = {"D-14": 1, "D-02-BMM": 2, "BMM-ACC-DYN": 3}


class CostModel(Protocol):
    def node_cost(self, node: ENode) -> float:
        """The cost of this e-node alone (math.inf: never extract it)."""
        ...


class DefaultCostModel:
    def node_cost(self, node: ENode) -> float:
        op = node.op
        if op in HANDLES or op in HELPERS or op.endswith("Req"):
            return INF
        if op == "Fail":
            code = node.args[0]
            return 0.001 * FAIL_PRIORITY.get(code if isinstance(code, str) else "", 5)
        if op == "Drop":  # a dead whole load loses to nothing but a failure
            return 0.1
        if op in (
            "AllocAcc",
            "PackedDrain",
        ):  # a packed chain's allocation and drain replace the generic ones
            return 0.2
        if op == "AsView":  # a legacy transpose read as a view replaces its materialising lowering
            return 0.3
        return 0.5 if op == "Forward" else 1.0
