"""The extractor: read a saturated e-graph, choose the cheapest term per root, lower it to IR."""

from .cost import CostModel, DefaultCostModel
from .graph import ClassId, EGraphView, ENode
from .greedy import Extraction, extract_roots
from .term import Term

__all__ = [
    "ClassId",
    "CostModel",
    "DefaultCostModel",
    "EGraphView",
    "ENode",
    "Extraction",
    "Term",
    "extract_roots",
]
