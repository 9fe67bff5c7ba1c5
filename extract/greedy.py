"""Greedy DAG extraction ("faster greedy DAG"): per e-class, the node whose sub-DAG costs least.

A choice's cost is the sum of the own costs of every e-class its sub-DAG reaches, each counted once,
so a term that shares subterms is not charged twice. Costs are improved with a worklist (a node is
re-examined only when a child class improves), so the work grows with the graph. Emission memoises
per class: a shared subterm is one Term object, emitted once by the lowering. Ties break on op name,
then first-seen order, so the same input always gives the same terms. `mode="tree"` charges a shared
subterm at every use instead (the classic bottom-up tree cost).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from .cost import INF, CostModel, DefaultCostModel
from .graph import ClassId, EGraphView, ENode
from .term import Prim, Term


@dataclass
class _Choice:
    cost: float
    node: ENode
    reach: dict[ClassId, float]  # every class of the sub-DAG and its own cost (DAG mode)


@dataclass
class Extraction:
    view: EGraphView
    best: dict[ClassId, _Choice] = field(default_factory=dict)
    _memo: dict[ClassId, Term] = field(default_factory=dict)

    def cost(self, c: ClassId) -> float:
        return self.best[c].cost if c in self.best else INF

    def term(self, c: ClassId) -> Term | None:
        """The chosen term of a class, or None when no finite-cost term exists."""
        t = self._memo.get(c)
        if t is not None:
            return t
        choice = self.best.get(c)
        if choice is None:
            return None
        node = choice.node
        args: list[Term | Prim] = []
        for a in node.args:
            if type(a) is ClassId:
                sub = self.term(a)
                if sub is None:
                    return None
                args.append(sub)
            else:
                args.append(a)
        t = Term(node.op, tuple(args))
        self._memo[c] = t
        return t


def _dag_choice(node: ENode, own: float, ex: Extraction) -> _Choice | None:
    kids = node.children
    if not kids:
        return _Choice(own, node, {node.eclass: own})
    choices = [ex.best[k] for k in kids]
    largest = max(choices, key=lambda ch: len(ch.reach))
    reach = dict(largest.reach)
    for ch in choices:
        if ch is not largest:
            reach.update(ch.reach)
    if node.eclass in reach:  # the choice would contain itself
        return None
    reach[node.eclass] = own
    return _Choice(sum(reach.values()), node, reach)


def _tree_choice(node: ENode, own: float, ex: Extraction) -> _Choice | None:
    return _Choice(own + sum(ex.best[k].cost for k in node.children), node, {})


def _reached(view: EGraphView, roots: Iterable[ClassId]) -> dict[ClassId, list[ENode]]:
    """The classes `roots` reach through any of their nodes, in the view's order."""
    seen: set[ClassId] = set()
    todo = [c for c in roots if c in view.classes]
    while todo:
        c = todo.pop()
        if c in seen:
            continue
        seen.add(c)
        for n in view.classes[c]:
            todo.extend(k for k in n.children if k not in seen)
    return {c: ns for c, ns in view.classes.items() if c in seen}


def extract_roots(
    view: EGraphView,
    model: CostModel | None = None,
    mode: str = "dag",
    roots: Iterable[ClassId] | None = None,
) -> Extraction:
    """The cheapest term of every class of the view, or, given `roots`, of every class they reach (a class's choice
    depends on the classes below it alone, so it is the same either way)."""
    model = model or DefaultCostModel()
    choose = _dag_choice if mode == "dag" else _tree_choice
    classes = view.classes if roots is None else _reached(view, roots)
    # every node once, with its own cost (asked of the model once); nodes it never extracts take no part
    nodes = [(n, c) for ns in classes.values() for n in ns if (c := model.node_cost(n)) != INF]
    parents: dict[ClassId, list[int]] = defaultdict(list)
    for i, (n, _) in enumerate(nodes):
        for ch in set(n.children):
            parents[ch].append(i)
    ex = Extraction(view)
    best = ex.best
    queue: deque[int] = deque(i for i, (n, _) in enumerate(nodes) if not n.children)
    queued = set(queue)
    while queue:
        i = queue.popleft()
        queued.discard(i)
        n, own = nodes[i]
        if any(k not in best for k in n.children):
            continue
        choice = choose(n, own, ex)
        if choice is None:
            continue
        cur = best.get(n.eclass)
        if (
            cur is None
            or choice.cost < cur.cost - 1e-12
            or (abs(choice.cost - cur.cost) <= 1e-12 and n.op < cur.node.op)
        ):
            best[n.eclass] = choice
            for p in parents[n.eclass]:
                if p not in queued:
                    queued.add(p)
                    queue.append(p)
    return ex
