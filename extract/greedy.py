"""Greedy bottom-up extraction with DAG-aware emission.

Costs are computed per e-class to a fixpoint with a worklist (each class re-examined only when a
child improves), so the work is linear in the graph for acyclic choices. Emission memoises per
class: a subterm shared by several roots is one Term object, emitted once by the lowering. Ties are
broken by op name, then by first-seen order, so the same input always gives the same terms.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, field

from .cost import INF, CostModel, DefaultCostModel
from .graph import ClassId, EGraphView, ENode
from .term import Prim, Term


@dataclass
class Extraction:
    view: EGraphView
    best: dict[ClassId, tuple[float, ENode]] = field(default_factory=dict)
    _memo: dict[ClassId, Term] = field(default_factory=dict)

    def cost(self, c: ClassId) -> float:
        return self.best[c][0] if c in self.best else INF

    def term(self, c: ClassId) -> Term | None:
        """The chosen term of a class, or None when no finite-cost term exists."""
        if c in self._memo:
            return self._memo[c]
        if c not in self.best:
            return None
        node = self.best[c][1]
        args: list[Term | Prim] = []
        for a in node.args:
            if isinstance(a, ClassId):
                sub = self.term(a)
                if sub is None:
                    return None
                args.append(sub)
            else:
                args.append(a)
        t = Term(node.op, tuple(args))
        self._memo[c] = t
        return t


def extract_roots(view: EGraphView, model: CostModel | None = None) -> Extraction:
    model = model or DefaultCostModel()
    parents: dict[ClassId, list[ENode]] = defaultdict(list)
    for nodes in view.classes.values():
        for n in nodes:
            for ch in n.children:
                parents[ch].append(n)
    ex = Extraction(view)
    queue: deque[ENode] = deque(n for nodes in view.classes.values() for n in nodes if not n.children)
    queued = {id(n) for n in queue}
    while queue:
        n = queue.popleft()
        queued.discard(id(n))
        kids = n.children
        if any(k not in ex.best for k in kids):
            continue
        cost = model.node_cost(n, [ex.best[k][0] for k in kids])
        if cost == INF:
            continue
        cur = ex.best.get(n.eclass)
        if cur is None or cost < cur[0] - 1e-12 or (abs(cost - cur[0]) <= 1e-12 and n.op < cur[1].op):
            ex.best[n.eclass] = (cost, n)
            for p in parents[n.eclass]:
                if id(p) not in queued:
                    queued.add(id(p))
                    queue.append(p)
    return ex
