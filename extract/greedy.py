"""Greedy DAG extraction ("faster greedy DAG"): per e-class, the node whose sub-DAG costs least.

A choice's cost is the sum of the own costs of every e-class its sub-DAG reaches, each counted once,
so a term that shares subterms is not charged twice. Costs are improved with a worklist (a node is
re-examined only when a child class improves), so the work grows with the graph. Where every class has one
extractable node (the common case: the helpers are never extracted) there is nothing to improve: a walk of the
classes, children first, takes each node, and a cost is summed only when asked for. Emission memoises
per class: a shared subterm is one Term object, emitted once by the lowering. Ties break on op name,
then first-seen order, so the same input always gives the same terms. `mode="tree"` charges a shared
subterm at every use instead (the classic bottom-up tree cost).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .cost import INF, CostModel, DefaultCostModel
from .graph import ClassId, EGraphView, ENode
from .term import Prim, Term


@dataclass
class _Choice:
    cost: float
    node: ENode
    reach: dict[ClassId, float]  # every class of the sub-DAG and its own cost (DAG mode)

    def reach_in(self, best: dict[ClassId, _Choice | _Forced]) -> dict[ClassId, float]:
        return self.reach


class _Forced:
    """A class's one extractable node: there is nothing to choose, so its sub-DAG's cost is worked out only when
    asked for (a lowering asks for few). It does not hold the table of choices it reads (`reach_in` is given
    it): a choice and its table would be a reference cycle, left for the cyclic collector after every run."""

    __slots__ = ("_reach", "node", "own")

    def __init__(self, node: ENode, own: float) -> None:
        self.node, self.own = node, own
        self._reach: dict[ClassId, float] | None = None

    def reach_in(self, best: dict[ClassId, _Choice | _Forced]) -> dict[ClassId, float]:
        if self._reach is None:
            reach: dict[ClassId, float] = {}
            for k in self.node.children:
                reach.update(best[k].reach_in(best))
            reach[self.node.eclass] = self.own
            self._reach = reach
        return self._reach


@dataclass
class Extraction:
    view: EGraphView
    best: dict[ClassId, _Choice | _Forced] = field(default_factory=dict)
    _memo: dict[ClassId, Term] = field(default_factory=dict)

    def cost(self, c: ClassId) -> float:
        choice = self.best.get(c)
        if choice is None:
            return INF
        if type(choice) is _Choice:
            return choice.cost
        return sum(choice.reach_in(self.best).values())

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
    reaches = [ex.best[k].reach_in(ex.best) for k in kids]
    largest = max(reaches, key=len)
    reach = dict(largest)
    for r in reaches:
        if r is not largest:
            reach.update(r)
    if node.eclass in reach:  # the choice would contain itself
        return None
    reach[node.eclass] = own
    return _Choice(sum(reach.values()), node, reach)


def _tree_choice(node: ENode, own: float, ex: Extraction) -> _Choice | None:
    return _Choice(own + sum(ex.cost(k) for k in node.children), node, {})


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
    if mode == "dag" and len({n.eclass for n, _ in nodes}) == len(nodes):
        return _forced(view, nodes)
    return _worklist(view, nodes, choose)


def _worklist(
    view: EGraphView,
    nodes: list[tuple[ENode, float]],
    choose: Callable[[ENode, float, Extraction], _Choice | None],
) -> Extraction:
    """Each class's cheapest node, improved until nothing improves: a node is looked at again only when a child
    class's choice improved."""
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
        now = INF if cur is None else ex.cost(n.eclass)
        if (
            cur is None
            or choice.cost < now - 1e-12
            or (abs(choice.cost - now) <= 1e-12 and n.op < cur.node.op)
        ):
            best[n.eclass] = choice
            for p in parents[n.eclass]:
                if p not in queued:
                    queued.add(p)
                    queue.append(p)
    return ex


def _forced(view: EGraphView, nodes: list[tuple[ENode, float]]) -> Extraction:
    """Every class with one extractable node (the common case once the helpers are left out): each class takes its
    node when every child class has a term, which a walk of the classes below it, children first, settles; a class
    on a cycle gets none, as in the worklist (its node waits on itself). The costs are worked out when asked for."""
    ex = Extraction(view)
    best = ex.best
    only = {n.eclass: (n, own) for n, own in nodes}
    done: set[ClassId] = set()
    for root in only:
        stack = [(root, 0)]
        while stack:
            c, i = stack.pop()
            if i == 0:
                if c in done:
                    continue
                done.add(c)  # (from here on a visit finds it done, or on the stack: a cycle)
            entry = only.get(c)
            if entry is None:
                continue
            kids = entry[0].children
            while i < len(kids) and kids[i] in done:
                i += 1
            if i < len(kids):
                stack += [(c, i + 1), (kids[i], 0)]
                continue
            if all(k in best for k in kids):
                best[c] = _Forced(entry[0], entry[1])
    return ex
