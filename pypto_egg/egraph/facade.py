"""`FlattenEGraph`: one run of the rules over a program's functions (engine.py) with its pictures (viz.py),
the object a user drives by hand."""

from __future__ import annotations

from pathlib import Path

from .engine import EGraphRun
from .viz import serialized_json, to_dot, write_html


class FlattenEGraph(EGraphRun):
    """The e-graph of a program's functions: saturate, read plans and facts, and draw it.

    >>> eg = FlattenEGraph(program, "main_incore_0", backend="Ascend910B")
    >>> eg.saturate(); eg.plans()
    >>> eg.write_html("egraph.html")
    """

    def serialized_json(self, max_nodes: int | None = 900) -> str:
        return serialized_json(self, max_nodes)

    def write_html(self, path: str | Path, max_nodes: int | None = 900) -> Path:
        return write_html(self, Path(path), max_nodes)

    def to_dot(self) -> str:
        return to_dot(self)
