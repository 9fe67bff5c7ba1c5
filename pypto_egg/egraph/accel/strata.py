"""The order a stage's rules run in: each rule runs once its inputs are complete, and only rules that feed each
other iterate together.

A stage of rules/schedule.egg runs its rules to a fixpoint. Run as one ruleset, every rule is visited in every
iteration until none changes anything, and egglog's cost is per rule and iteration (about 0.5 us a rule with
nothing new, 10-15 us a rule variant that has new rows to join). Yet most rules of a stage read what another
writes, not what they write themselves: ordered by that flow, a rule whose inputs are complete needs one
iteration, and only a group of rules that feed each other (a walk, the normalising rewrites) needs iterating.

A rule U feeds a rule V when V reads a table U writes, or when U can union e-classes of a sort whose unions can
give V a new match: V joins two occurrences of a value of that sort, or reads a function keyed by it (a union
merges two keys' values). Unions spread by congruence: merging two `Dim`s can merge two `Dims` holding them.
The groups are the strongly connected components of that relation, run in its topological order, layer by layer
(the groups of one layer feed none of each other; of a layer, the groups that feed no rule of their own run once,
the others to their fixpoint): the same fixpoint as running the stage as one ruleset.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..rule_index import IndexedRule, RuleIndex, Stage, keyword, rule_index
from ..rules import OWN_RULESET, RuleFile
from ..sexp import SExp
from ..shipped import is_shipped

PRIMITIVE_SORTS = frozenset({"i64", "f64", "String", "bool", "Unit", "BigInt", "BigRat", "Rational"})


@dataclass(frozen=True)
class Signature:
    inputs: tuple[str, ...]
    output: str  # "Unit" for a relation
    merges: bool  # a function whose rows merge their values (:merge)
    term: bool = False  # a constructor: a row is an e-node, its output the e-class it belongs to


@dataclass(frozen=True)
class Flow:
    """What one rule reads and writes, which sorts its actions may union, and whose unions it notices."""

    reads: frozenset[str]
    writes: frozenset[str]
    unions: frozenset[str]
    notices: frozenset[str]


@dataclass(frozen=True)
class Step:
    """Rules that run together: `once`, one iteration (none feeds another of the step, nor itself); otherwise to
    their fixpoint. `ruleset` is the one they run as."""

    rules: tuple[str, ...]
    once: bool
    ruleset: str = ""


@dataclass(frozen=True)
class StagePlan:
    """How the stages of the schedule run one set of rules: each stage's steps, and the declarations of the
    rulesets of its steps of several rules (each named for its members, so one e-graph can hold the steps of
    many plans)."""

    stages: tuple[tuple[Step, ...], ...]
    declarations: dict[str, str]  # ruleset -> the command declaring it (the steps')
    whole: tuple[str, ...] = ()  # per stage, a ruleset of all its planned rules (to check the fixpoint with)
    whole_declarations: dict[str, str] = field(default_factory=dict)  # (declared only to check the fixpoint)


def signatures(index: RuleIndex) -> dict[str, Signature]:
    out: dict[str, Signature] = {}
    for name, (_, form, _) in index.declarations.decls.items():
        t = form.tree
        if not isinstance(t, list):
            continue
        if t[0] == "relation" and isinstance(t[2], list):
            out[name] = Signature(tuple(str(s) for s in t[2]), "Unit", False)
        elif t[0] in ("function", "constructor") and isinstance(t[2], list) and isinstance(t[3], str):
            out[name] = Signature(tuple(str(s) for s in t[2]), t[3], ":merge" in t, t[0] == "constructor")
        elif t[0] == "datatype":
            for v in t[2:]:
                if isinstance(v, list) and v and isinstance(v[0], str):
                    out[v[0]] = Signature(tuple(str(s) for s in v[1:]), name, False, True)
    return out


def _congruence(sorts: Iterable[str], sigs: dict[str, Signature]) -> frozenset[str]:
    """The sorts a union of these sorts can end up merging: a term holding a merged value merges with its twin."""
    closed = set(sorts)
    changed = True
    while changed:
        changed = False
        for sig in sigs.values():
            if sig.output not in closed and sig.output not in PRIMITIVE_SORTS and closed & set(sig.inputs):
                closed.add(sig.output)
                changed = True
    return frozenset(closed)


class _Query:
    """The tables a query reads, and the sorts of the values it joins.

    A query reads a table when a new row of it can give a new match. That holds for every relation and function
    it names, but not for a constructor (an e-node) whose e-class is bound by another atom the query reads: a new
    e-node has a new e-class (an existing one would be the same row), which that atom's rows cannot hold unless
    they change themselves (the query reads them) or a union makes the classes one (the query notices unions of
    the sort, since it joins the class twice). `(OvScan a b (DCons x r) ..)` reads OvScan, not DCons."""

    def __init__(self, sigs: dict[str, Signature]) -> None:
        self.sigs = sigs
        self.joined: set[str] = set()
        self.keyed: set[str] = set()  # sorts keying a merging function the query reads
        self.var_sort: dict[str, str] = {}
        self.uses: dict[str, int] = {}
        self.atoms: list[tuple[str, list[str], str]] = []  # table, input variables, output variable
        self.same: dict[str, str] = {}  # variables one equality makes one value (`(= (F a) (G b))`)
        self._out_of: dict[int, str] = {}  # a table call -> the variable of its output
        self._fresh = 0

    def atom(self, a: SExp) -> None:
        if isinstance(a, list) and a and a[0] == "=" and len(a) == 3:
            left, right = self.expr(a[1]), self.expr(a[2])
            lv, rv = self._value(a[1]), self._value(a[2])
            if lv is not None and rv is not None:
                self.same[lv] = rv
            if isinstance(a[1], str) and right is not None:
                self.var_sort.setdefault(a[1], right)
            if isinstance(a[2], str) and left is not None:
                self.var_sort.setdefault(a[2], left)
            if isinstance(a[1], list) and isinstance(a[2], list) and left is not None:
                self.joined.add(left)  # two terms of one class
        else:
            self.expr(a)

    def _value(self, e: SExp) -> str | None:
        """The variable standing for an expression's value (a call's is the output its atom was given)."""
        if isinstance(e, str):
            return e if _is_variable(e, self.sigs) else None
        return self._out_of.get(id(e))

    def expr(self, e: SExp, want: str | None = None) -> str | None:
        """The sort of an expression (None: a primitive or unknown), its variables counted and its table calls
        recorded as atoms."""
        if isinstance(e, str):
            if _is_variable(e, self.sigs):
                self.uses[e] = self.uses.get(e, 0) + 1
                if want is not None:
                    self.var_sort.setdefault(e, want)
                return self.var_sort.get(e, want)
            return None
        if not e or not isinstance(e[0], str):
            return None
        sig = self.sigs.get(e[0])
        if sig is None:  # a primitive: its arguments are compared or computed
            for x in e[1:]:
                self.expr(x)
            return None
        if sig.merges:
            self.keyed.update(s for s in sig.inputs if s not in PRIMITIVE_SORTS)
        inputs = []
        for x, s in zip(e[1:], sig.inputs):
            if isinstance(x, list) and s not in PRIMITIVE_SORTS:
                self.joined.add(s)  # a nested term: its class joins this argument
            self.expr(x, s)
            v = self._value(x)
            if v is not None:
                inputs.append(v)
        self._fresh += 1
        out = self._out_of[id(e)] = f"#{self._fresh}"
        self.atoms.append((e[0], inputs, out))
        return sig.output

    def reads(self) -> frozenset[str]:
        def root(v: str) -> str:
            while v in self.same:
                v = self.same[v]
            return v

        anchored: set[str] = set()
        for table, inputs, _ in self.atoms:
            if not self.sigs[table].term:
                anchored.update(root(v) for v in inputs)
        terms = [(t, [root(v) for v in ins], root(o)) for t, ins, o in self.atoms if self.sigs[t].term]
        held: set[int] = set()
        changed = True
        while changed:
            changed = False
            for i, (_, inputs, out) in enumerate(terms):
                if i not in held and out in anchored:
                    held.add(i)
                    anchored.update(inputs)
                    changed = True
        return frozenset(
            {t for t, _, _ in self.atoms if not self.sigs[t].term}
            | {t for i, (t, _, _) in enumerate(terms) if i not in held}
        )

    def notices(self) -> frozenset[str]:
        twice = {self.var_sort[v] for v, n in self.uses.items() if n > 1 and v in self.var_sort}
        return frozenset((self.joined | twice | self.keyed) - PRIMITIVE_SORTS)


def _is_variable(s: str, sigs: dict[str, Signature]) -> bool:
    return not (s in sigs or s[0] in '"-0123456789' or s in ("true", "false") or s.startswith(":"))


def _sort_of(e: SExp, var_sort: dict[str, str], sigs: dict[str, Signature]) -> str | None:
    if isinstance(e, str):
        return var_sort.get(e)
    sig = sigs.get(str(e[0])) if e else None
    return sig.output if sig is not None else None


def _tables(e: SExp, sigs: dict[str, Signature]) -> set[str]:
    if isinstance(e, str):
        return set()
    out = {e[0]} if e and isinstance(e[0], str) and e[0] in sigs else set()
    for x in e:
        out |= _tables(x, sigs)
    return out


def flow(rule: IndexedRule, sigs: dict[str, Signature]) -> Flow:
    tree = rule.form.tree
    assert isinstance(tree, list)
    query = _Query(sigs)
    if tree[0] == "rule":
        atoms = tree[1] if isinstance(tree[1], list) else []
        for a in atoms:
            query.atom(a)
        actions = tree[2] if isinstance(tree[2], list) else []
        writes: set[str] = set()
        unions: set[str] = set()
        for act in actions:
            writes |= _tables(act, sigs)
            if isinstance(act, list) and act and act[0] == "union" and len(act) == 3:
                sort = _sort_of(act[1], query.var_sort, sigs)
                if sort is not None:
                    unions.add(sort)
            elif isinstance(act, list) and act and act[0] == "set" and isinstance(act[1], list):
                sig = sigs.get(str(act[1][0]))
                if sig is not None and sig.output not in PRIMITIVE_SORTS:
                    unions.add(sig.output)  # setting a term-valued function unions its old and new value
    else:  # (rewrite lhs rhs :when (...)) and birewrite: the matched class is unioned with the right-hand side
        lhs, rhs = tree[1], tree[2]
        root = query.expr(lhs)
        when = keyword(tree, ":when")
        for a in when if isinstance(when, list) else []:
            query.atom(a)
        writes = _tables(rhs, sigs)
        unions = {root} if root is not None else set()
        if tree[0] == "birewrite":
            writes |= _tables(lhs, sigs)
            query.expr(rhs)
    return Flow(query.reads(), frozenset(writes), _congruence(unions, sigs), query.notices())


@functools.lru_cache(maxsize=64)
def flows(files: tuple[RuleFile, ...]) -> dict[str, Flow]:
    """Every named rule's flow."""
    index = rule_index(files)
    sigs = signatures(index)
    return {r.name: flow(r, sigs) for r in index.rules if r.name}


def concern_declarations(files: Sequence[RuleFile]) -> str:
    """Each shipped concern's ruleset (`(ruleset shape)`), as the combination of its rules' own rulesets."""
    index = rule_index(tuple(files))
    shipped = {i for i, rf in enumerate(files) if is_shipped(rf.path)}
    concerns: dict[str, list[str]] = {}
    for fi, file_forms in enumerate(index.forms):
        if fi in shipped:
            for f in file_forms:
                t = f.tree
                if isinstance(t, list) and len(t) == 2 and t[0] == "ruleset" and isinstance(t[1], str):
                    concerns.setdefault(t[1], [])
    for r in index.rules:
        if r.file in shipped and r.ruleset:
            concerns.setdefault(r.ruleset, []).append(OWN_RULESET + r.name)
    return "\n".join(
        f"(unstable-combined-ruleset {c} {' '.join(members)})" if members else f"(ruleset {c})"
        for c, members in concerns.items()
    )


@functools.lru_cache(maxsize=256)
def stage_plan(
    files: tuple[RuleFile, ...], stages: tuple[Stage, ...], live: frozenset[str] | None = None
) -> StagePlan:
    """The steps of every stage over the shipped rules of these files (`live` ones only, when given; rules of a
    user's file run by the engine itself), with the declarations of the rulesets they run as."""
    flows_of = flows(files)
    declarations: dict[str, str] = {}
    whole_declarations: dict[str, str] = {}
    planned = []
    whole = []
    for stage in stages:
        rules = [r for r in stage_rules(files, stage) if live is None or r in live]
        named = []
        for step in steps(flows_of, rules):
            if len(step.rules) == 1:
                name = OWN_RULESET + step.rules[0]
            else:
                members = " ".join(OWN_RULESET + r for r in step.rules)
                name = "step__" + hashlib.blake2s(members.encode(), digest_size=8).hexdigest()
                declarations[name] = f"(unstable-combined-ruleset {name} {members})"
            named.append(Step(step.rules, step.once, name))
        planned.append(tuple(named))
        members = " ".join(OWN_RULESET + r for r in rules)
        name = "stage__" + hashlib.blake2s(members.encode(), digest_size=8).hexdigest()
        if rules:
            whole_declarations[name] = f"(unstable-combined-ruleset {name} {members})"
        whole.append(name if rules else "")
    return StagePlan(tuple(planned), declarations, tuple(whole), whole_declarations)


@functools.lru_cache(maxsize=64)
def stage_rules(files: tuple[RuleFile, ...], stage: Stage) -> tuple[str, ...]:
    """The shipped rules of a stage's rulesets, in file order (every plan of these files filters them)."""
    index = rule_index(files)
    shipped = {i for i, rf in enumerate(files) if is_shipped(rf.path)}
    return tuple(
        r.name for r in index.rules if r.file in shipped and r.ruleset and r.ruleset in stage.rulesets
    )


def steps(flows_of: dict[str, Flow], rules: Sequence[str]) -> list[Step]:
    """The steps that run these rules (one stage's) to their fixpoint: groups that feed each other, layer by
    layer in the order of the flow between them."""
    order = {r: i for i, r in enumerate(rules)}
    readers: dict[str, set[str]] = {}
    noticers: dict[str, set[str]] = {}
    for v in rules:
        for t in flows_of[v].reads:
            readers.setdefault(t, set()).add(v)
        for sort in flows_of[v].notices:
            noticers.setdefault(sort, set()).add(v)
    feeds: dict[str, list[str]] = {}
    none: frozenset[str] = frozenset()
    for u in rules:
        fu = flows_of[u]
        fed: set[str] = set().union(*[readers.get(t, none) for t in fu.writes])
        fed.update(*[noticers.get(sort, none) for sort in fu.unions])
        feeds[u] = sorted(fed, key=order.__getitem__)
    groups = _components(list(rules), feeds)
    group_of = {r: i for i, g in enumerate(groups) for r in g}
    depth = [0] * len(groups)
    for i, g in enumerate(groups):  # (groups come in topological order)
        for u in g:
            for v in feeds[u]:
                j = group_of[v]
                if j != i:
                    depth[j] = max(depth[j], depth[i] + 1)
    layers: dict[int, list[int]] = {}
    for i, d in enumerate(depth):
        layers.setdefault(d, []).append(i)
    out = []
    for d in sorted(layers):
        # a layer's groups feed none of each other: those that feed no rule of their own run once, the others to
        # their fixpoint, each part as one step (a group that iterates does not take the others with it)
        once: list[str] = []
        iterated: list[str] = []
        for i in layers[d]:
            g = groups[i]
            (iterated if len(g) > 1 or g[0] in feeds[g[0]] else once).extend(g)
        if once:
            out.append(Step(tuple(once), True))
        if iterated:
            out.append(Step(tuple(iterated), False))
    return out


def _components(nodes: list[str], edges: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, in topological order (a component before those it feeds)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(edges[root]))]
        while work:
            v, targets = work[-1]
            for w in targets:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(edges[w])))
                    break
                if w in on_stack and index[w] < low[v]:
                    low[v] = index[w]
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    if low[v] < low[parent]:
                        low[parent] = low[v]
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    out.append(comp)
    out.reverse()
    return out
