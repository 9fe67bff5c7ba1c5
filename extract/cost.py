"""Cost models: what the extractor minimises.

A model gives each e-node its own cost; the extractor adds up the costs of the sub-DAG a choice
brings in (shared e-classes counted once). The default model makes requests, handles and derived
helper functions unextractable (a plan must be fully lowered) and otherwise counts nodes, so the smallest
equivalent dimension term is chosen. Which plan lowers a statement is the rules' choice (rules/choose.egg),
not a model's: a model only chooses among the equal plans the rules leave, the optimal strategy's
batched-matmul routes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from pypto_egg.rules import schema

from .graph import ENode

if TYPE_CHECKING:
    from pypto_egg.backend import Backend

INF = math.inf

HANDLES = {"DimOf", "DimsOf", "OpndsOf"}
# the derived dimension functions of rules/sorts.egg, rewritten away by the rules
HELPERS = {
    "Rows", "RowsFrom", "LastDim", "Init", "Flat", "MergeValid", "VRow", "VRowAcc", "RowOff", "RowOffFrom", "Off2D",
    "Ones", "Rev", "RevAcc", "BcastRev", "ProdAll", "BIdxRev", "AdjOffs",
}  # fmt: skip


class CostModel(Protocol):
    def node_cost(self, node: ENode) -> float:
        """The cost of this e-node alone (math.inf: never extract it)."""
        ...


class DefaultCostModel:
    # constructors no choice of this model ever takes: the view of the e-graph need not even read them
    unextractable: frozenset[str] = frozenset(HANDLES | HELPERS)

    def node_cost(self, node: ENode) -> float:
        op = node.op
        if op in HANDLES or op in HELPERS or op.endswith("Req"):
            return INF
        return 1.0


@dataclass(frozen=True)
class Weights:
    """What one unit of each resource costs, in the same currency (bytes moved from GM)."""

    gm_byte: float = 1.0  # a byte moved GM -> L1 (MTE2)
    instruction: float = 256.0  # an instruction issued: its fixed latency, in bytes the MTE2 moves meanwhile
    footprint_byte: float = 1 / 4096  # a byte of Mat (L1) held: a tie-breaker between plans that move alike


TIE = (
    2.0  # what a plan other than the reference's must save, at least, to replace it (2 bytes, or 8 KiB held)
)

# Per backend. The Ascend950's wider MTE2 moves more bytes in an instruction's fixed latency.
BACKEND_WEIGHTS = {"Ascend910B": Weights(), "Ascend950": Weights(instruction=384.0)}


class OptimalCostModel(DefaultCostModel):
    """The optimal strategy's model: a batched-matmul plan costs the bytes it moves GM -> L1, the
    instructions it issues and the Mat (L1) it holds, weighted per backend (`BACKEND_WEIGHTS`); every other
    plan costs what the default model says. L1 -> L0 traffic is the same for every route (each page's
    operands are read once by its matmul), so it does not tell plans apart."""

    def __init__(self, backend: Backend | None = None, weights: Weights | None = None) -> None:
        name = backend.name if backend is not None else ""
        self.weights = weights or BACKEND_WEIGHTS.get(name, Weights())

    def node_cost(self, node: ENode) -> float:
        if node.op == "BatchMatmul":  # a plan that is not the reference's must be better by more than a tie
            reference = schema.field("BatchMatmul", node.args, "reference") == 1
            return 1.0 + plan_cost(node.args[3:6], self.weights) + (0.0 if reference else TIE)  # type: ignore[arg-type]
        return super().node_cost(node)


def plan_cost(numbers: tuple[int, int, int], weights: Weights) -> float:
    """(GM bytes, instructions, footprint bytes) of a batched-matmul plan, in the model's currency."""
    gm, instructions, footprint = numbers
    return gm * weights.gm_byte + instructions * weights.instruction + footprint * weights.footprint_byte
