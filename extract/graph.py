"""A read-only view of a saturated e-graph: e-classes and their e-nodes, from egglog's frozen tables."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import egglog.bindings as eb

from .term import Prim

PRIMITIVE_SORTS = {"i64", "f64", "String", "bool", "Unit", "unit", "BigInt", "BigRat", "Rational"}


@dataclass(frozen=True, slots=True)
class ClassId:
    value: Any  # egglog's canonical Value

    def __repr__(self) -> str:
        return f"c{hash(self.value) & 0xFFFFFF:06x}"


@dataclass(frozen=True, slots=True)
class ENode:
    op: str
    args: tuple[ClassId | Prim, ...]
    eclass: ClassId

    @property
    def children(self) -> tuple[ClassId, ...]:
        return tuple(a for a in self.args if isinstance(a, ClassId))


@dataclass
class EGraphView:
    classes: dict[ClassId, list[ENode]] = field(default_factory=lambda: defaultdict(list))
    relations: dict[str, list[tuple[ClassId | Prim, ...]]] = field(default_factory=dict)

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    @property
    def num_nodes(self) -> int:
        return sum(len(v) for v in self.classes.values())

    @classmethod
    def from_egraph(cls, egraph: eb.EGraph) -> EGraphView:
        """Read every constructor row (skipping subsumed ones) and every relation row."""
        frozen = egraph.freeze()
        view = cls()
        convert: dict[str, Callable[[Any], Prim]] = {
            "i64": egraph.value_to_i64, "f64": egraph.value_to_f64, "String": egraph.value_to_string,
            "bool": egraph.value_to_bool,
        }  # fmt: skip

        def arg(sort: str, v: Any) -> ClassId | Prim:
            if sort in convert:
                return convert[sort](v)
            if sort in PRIMITIVE_SORTS:
                return str(v)
            return ClassId(v)

        for name, fn in frozen.functions.items():
            if fn.output_sort in ("Unit", "unit") or fn.output_sort.startswith("@"):  # a relation
                view.relations[name] = [
                    tuple(arg(s, v) for s, v in zip(fn.input_sorts, r.inputs)) for r in fn.rows
                ]
                continue
            if fn.output_sort in PRIMITIVE_SORTS:  # an analysis function (Len, NonContig, ...): not a term
                continue
            for r in fn.rows:
                if r.subsumed:
                    continue
                out = ClassId(r.output)
                node = ENode(name, tuple(arg(s, v) for s, v in zip(fn.input_sorts, r.inputs)), out)
                view.classes[out].append(node)
        return view
