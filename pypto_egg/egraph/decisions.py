"""Why each tile statement was lowered the way it was: the plan in words, the rule that chose it (name,
file:line, the behaviours it implements), the facts its guard read with their numbers, and the other plans
the e-graph held for the statement with the reason each lost.

The rules decide; this module only reads a saturated e-graph back and says what it holds
(`pypto_egg.explain` runs the e-graph for a program; the visualizer shows the same reading).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..extract import ClassId, Term
from ..extract.cost import INF
from ..ir.printer import print_expr
from ..ir.stmt import AssignStmt
from ..rules import schema
from .plan_reader import PlanReader
from .report import RunReport
from .rule_index import IndexedRule, lists, parse_schedule, rule_index
from .rules import RuleFile, schedule_text
from .sexp import SExp
from .words import dims_text, field_text, plan_words, term_fields, variable_names

_KINDS = {
    "LoadRow": "LoadReq", "StoreRow": "StoreReq", "AllocRow": "AllocReq", "AssembleRow": "AssembleReq",
    "ReshapeRow": "ReshapeReq", "TransposeRow": "TransposeReq", "GenericRow": "GenericReq", "BmmHeadRow": "BmmReq",
}  # fmt: skip
_MAIN_KINDS = frozenset(_KINDS.values())
_VARIANT_ROWS = (
    "GenericRow",
    "BmmHeadRow",
)  # rows whose second column names the request's variant (`_variants`)


@dataclass(frozen=True)
class RuleRef:
    name: str
    file: str
    line: int
    behaviours: tuple[str, ...]
    comment: str
    text: str = ""  # the rule as written
    stage: str = ""  # the stage of rules/schedule.egg it runs in, as "stage N (rulesets)"
    first: str = ""  # in this run: where it first matched, as "stage N, iteration I" (empty: not told)

    def __str__(self) -> str:
        tags = f" [{', '.join(self.behaviours)}]" if self.behaviours else ""
        return f"{self.name} ({self.file}:{self.line}){tags}"


@dataclass
class Alternative:
    plan: str
    term: str
    cost: float
    rules: list[RuleRef]
    lost_because: str
    fields: dict[str, str] = field(
        default_factory=dict
    )  # the plan's arguments by field, as the DSL writes them


@dataclass
class StatementExplanation:
    function: str
    statement: int
    line: int | None
    source: str
    plan: str
    term: str
    cost: float
    rules: list[RuleRef]
    facts: list[str] = field(default_factory=list)
    alternatives: list[Alternative] = field(default_factory=list)
    not_chosen_by: list[str] = field(
        default_factory=list
    )  # rules for this kind of statement that did not fire
    # the statement's request (its kind, then each field as the DSL writes it) and the chosen plan's arguments
    request: dict[str, str] = field(default_factory=dict)
    fields: dict[str, str] = field(default_factory=dict)
    # for each fact, the rules of this run that derived it (its relation's writers that matched), where each first did
    fact_sources: list[list[str]] = field(default_factory=list)


@dataclass
class Explanation:
    program: str
    statements: list[StatementExplanation]

    def only_line(self, line: int) -> Explanation:
        return replace(self, statements=[s for s in self.statements if s.line == line])

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------- the rule index


@dataclass(frozen=True)
class _Rule:
    ref: RuleRef
    plans: frozenset[str]  # plan constructors its actions choose
    fails: frozenset[str]  # Fail codes it reports
    kinds: frozenset[str]  # request relations its query reads
    # the variant of its request it requires: a generic op's name, a batched matmul's kind
    variants: frozenset[str]
    modes: frozenset[str]  # batched-matmul modes it decides
    ranks: frozenset[str] = (
        frozenset()
    )  # plan constructors it gives a precedence (rules/choose.egg's PlanClass)
    rank: int | None = None  # the precedence it gives, where the rule writes it out


@functools.cache
def _rule_index(files: tuple[RuleFile, ...]) -> tuple[_Rule, ...]:
    """The named rules of the index, with what explain matches a statement's plan against."""
    out: list[_Rule] = []
    rules = rule_index(files).rules
    carried = _carried_kinds(rules)
    for rule in rules:
        if not rule.name:
            continue
        tree = rule.form.tree
        text = files[rule.file].text[rule.form.start : rule.form.end]
        ref = RuleRef(
            rule.name, _short(rule.path), rule.line, rule.tags, rule.comment, text, _stage_of(rule.ruleset)
        )
        out.append(_Rule(
            ref,
            frozenset(_chosen_plans(tree)),
            frozenset(_literals(tree, "Fail", 1)),
            _requests(tree).union(*(carried.get(t, frozenset()) for t in rule.reads))
            if _decides_its_request(tree, carried) else frozenset(),
            frozenset(_variants(tree)),
            frozenset(_modes(tree)),
            *_ranked(tree),
        ))  # fmt: skip
    return tuple(out)


def _placed(ref: RuleRef, report: RunReport) -> RuleRef:
    """The rule with where it first matched in this run (provenance: the stage and the iteration)."""
    at = report.first_fired(ref.name)
    return replace(ref, first=f"stage {at[0]}, iteration {at[1] + 1}") if at is not None else ref


def _stage_of(ruleset: str) -> str:
    """The first stage of rules/schedule.egg that runs `ruleset` ("" the default one, a user's rules)."""
    for i, stage in enumerate(parse_schedule(schedule_text())):
        if ruleset in stage.rulesets:
            return f"stage {i} ({', '.join(r or '<default>' for r in stage.rulesets)})"
    return ""


def _requests(tree: SExp) -> frozenset[str]:
    """The request relations a rule's form names."""
    return frozenset(t[0] for t in lists(tree) if t and isinstance(t[0], str) and t[0].endswith("Req"))


def _decides_its_request(tree: SExp, carried: dict[str, frozenset[str]]) -> bool:
    """Whether every statement the rule chooses a plan for is the one its request (or a relation standing for it)
    is about: the first column of such an atom of its query. A rule choosing for a statement its query names
    otherwise (the store a batched matmul's pages write, named in the matmul's request) decides a statement of
    any kind."""
    query = tree[1] if isinstance(tree, list) and len(tree) > 1 else []
    firsts = {a[1] for a in lists(query) if len(a) > 1 and isinstance(a[0], str)
              and (a[0].endswith("Req") or a[0] in carried)}  # fmt: skip
    chosen = {a[1] for a in lists(tree) if len(a) > 2 and a[0] == "Chose"}
    return chosen <= firsts


def _carried_kinds(rules: Sequence[IndexedRule]) -> dict[str, frozenset[str]]:
    """The requests a derived relation stands for: those every rule writing it reads itself (a store's
    `OwnWindow` is joined from its `StoreReq`), so a rule deciding from the derived row decides that kind of
    statement as one reading the request would."""
    writers: dict[str, list[frozenset[str]]] = {}
    for rule in rules:
        kinds = _requests(rule.form.tree)
        for table in rule.writes:
            writers.setdefault(table, []).append(kinds)
    return {
        table: frozenset.intersection(*kinds)
        for table, kinds in writers.items()
        if not table.endswith("Req") and all(kinds) and frozenset.intersection(*kinds)
    }


def _chosen_plans(tree: SExp) -> Iterator[str]:
    """The plan constructor of every `(Chose s (Plan ...))` atom."""
    for t in lists(tree):
        plan = t[2] if len(t) > 2 and t[0] == "Chose" else None
        if isinstance(plan, list) and plan and isinstance(plan[0], str):
            yield plan[0]


def _literals(tree: SExp, head: str, at: int) -> Iterator[str]:
    """The string literal at place `at` of every `(head ...)` atom."""
    for t in lists(tree):
        literal = t[at] if len(t) > at and t[0] == head else None
        if isinstance(literal, str) and literal.startswith('"'):
            yield literal.strip('"')


def _variants(tree: SExp) -> Iterator[str]:
    """The literal that narrows a rule's request to one variant: a generic request's op name, a batched matmul
    request's kind (0 tile.batch_matmul, 1 tile.batch_matmul_acc)."""
    yield from _literals(tree, "GenericReq", 2)
    for t in lists(tree):
        if len(t) > 2 and t[0] == "BmmReq" and isinstance(t[2], str) and t[2].isdigit():
            yield t[2]


def _modes(tree: SExp) -> Iterator[str]:
    """The mode a rule decides: an action list of just `(BmmMode s "mode")`."""
    for t in lists(tree):
        if len(t) == 1 and isinstance(t[0], list):
            yield from _literals([t[0]], "BmmMode", 2)


def _ranked(tree: SExp) -> tuple[frozenset[str], int | None]:
    """The plan constructors a rule gives a precedence, `(= p (Plan ...))` with `(set (PlanClass p) k)`, and `k`
    where it is written out."""
    sets = [
        t
        for t in lists(tree)
        if len(t) == 3 and t[0] == "set" and isinstance(t[1], list) and t[1][:1] == ["PlanClass"]
    ]
    if not sets or not isinstance(tree, list) or len(tree) < 2:
        return frozenset(), None
    plans = frozenset(a[2][0] for a in lists(tree[1]) if len(a) == 3 and a[0] == "=" and isinstance(a[2], list)
                      and a[2] and isinstance(a[2][0], str))  # fmt: skip
    k = sets[0][2]
    return plans, int(k) if isinstance(k, str) and k.lstrip("-").isdigit() else None


def _short(path: Path | str) -> str:
    p = Path(path)
    return f"rules/{p.name}" if p.parent.name == "rules" else str(p)


# ---------------------------------------------------------------- terms in words


class _Reader:
    def __init__(self, eg: PlanReader) -> None:
        self.eg = eg
        self.view = eg.view()
        self.ex = eg.extraction()
        self.fired = {k for k, n in eg.report.rules_fired.items() if n}
        self.rules = _rule_index(tuple(eg.rule_files))
        self.kind: dict[int, tuple[str, str | None]] = {}
        for row_name, req in _KINDS.items():
            for row in eg.encoding.rows.get(row_name, []):
                self.kind[row[0]] = (req, str(row[1]) if row_name in _VARIANT_ROWS else None)

    @functools.cache  # noqa: B019 - one reader per explained function; each relation is indexed once
    def _by_first(self, name: str) -> dict[Any, list[tuple[Any, ...]]]:
        index: dict[Any, list[tuple[Any, ...]]] = {}
        for r in self.view.relations.get(name, []) or []:
            index.setdefault(r[0], []).append(r)
        return index

    def rows(self, name: str, sid: int | None = None) -> list[Any]:
        """A relation's rows, or those whose first column is `sid` (indexed, not scanned per statement), as named
        tuples of its declared fields where it declares them (rules/schema.py)."""
        found = self.view.relations.get(name, []) or [] if sid is None else self._by_first(name).get(sid, [])
        d = schema.schema().get(name)
        return (
            schema.rows(name, found)
            if d is not None and d.kind == "relation" and d.fields is not None
            else found
        )

    def value(self, name: str, *key: Any) -> Any:
        return next((r[-1] for r in self._by_first(name).get(key[0], []) if tuple(r[:-1]) == key), None)

    def term(self, c: Any) -> Any:
        return self.ex.term(c) if isinstance(c, ClassId) else c

    def rules_for(self, sid: int, plan: Term) -> list[RuleRef]:
        kind, op = self.kind.get(sid, (None, None))
        found = []
        for rule in self.rules:
            if (
                plan.op == "BatchMatmul"
                and str(plan.field("mode")) in rule.modes
                and rule.ref.name in self.fired
            ):
                found.append(rule.ref)  # the rule that decided the mode, before the one that states the plan
                continue
            if plan.op == "Fail":
                if str(plan.field("code")) not in rule.fails:
                    continue
            elif plan.op not in rule.plans:
                continue
            if rule.ref.name not in self.fired:
                continue
            if kind is not None and rule.kinds & set(_KINDS.values()) and kind not in rule.kinds:
                continue
            if op is not None and rule.variants and op not in rule.variants:
                continue
            found.append(rule.ref)
        return found

    def ranked_by(self, plan: Term, k: int) -> RuleRef | None:
        """The rule of rules/choose.egg that gave `plan` its precedence `k` in this run."""
        code = str(plan.field("code")) if plan.op == "Fail" else None
        found = [r for r in self.rules if plan.op in r.ranks and r.ref.name in self.fired
                 and (code is None or not r.fails or code in r.fails) and r.rank in (k, None)]  # fmt: skip
        found.sort(key=lambda r: r.rank is None)  # one that writes `k` out, before one that looks it up
        return found[0].ref if found else None

    @functools.cache  # noqa: B019 - one reader per explained function
    def derived_by(self, relation: str) -> list[str]:
        """The rules of this run that write the relation and matched, each with where it first did."""
        out = []
        for rule in rule_index(tuple(self.eg.rule_files)).rules:
            at = self.eg.report.first_fired(rule.name) if relation in rule.writes else None
            if at is not None:
                out.append(f"{rule.name} ({_short(rule.path)}:{rule.line}), first matched in stage {at[0]}, "
                           f"iteration {at[1] + 1}")  # fmt: skip
        return out

    def request(self, sid: int, names: Mapping[int, str], statements: Mapping[int, str]) -> dict[str, str]:
        """The statement's request: its kind, then each field but the statement id, in words."""
        kind, _ = self.kind.get(sid, (None, None))
        if kind is None or not self.rows(kind, sid):
            return {}
        d = schema.declared(kind)
        out = {"request": kind}
        for name, sort, value in zip(d.fields or (), d.sorts, self.rows(kind, sid)[0]):
            if name != "stmt":
                out[name] = field_text(kind, name, sort, self.term(value), names, statements)
        return out

    def idle_rules(self, sid: int, chosen: list[RuleRef]) -> list[str]:
        """Rules that decide this kind of statement but chose nothing for it (their guard did not hold)."""
        kind, op = self.kind.get(sid, (None, None))
        names = {r.name for r in chosen}
        out = []
        for rule in self.rules:
            if kind not in rule.kinds or not (rule.plans or rule.fails) or rule.ref.name in names:
                continue
            if op is not None and rule.variants and op not in rule.variants:
                continue
            # a rule that also needs a side request of the statement (a store's given window) cannot apply to a
            # statement without one
            if any(not self.rows(k, sid) for k in rule.kinds - _MAIN_KINDS):
                continue
            out.append(rule.ref.name)
        return out

    # the facts a statement's guards read, with their numbers
    def facts(self, sid: int, stmt: Any) -> list[tuple[str, str]]:
        """The facts the statement's rules read, each with the relation it comes from."""
        kind, op = self.kind.get(sid, (None, None))
        out: list[tuple[str, str]] = []

        def note(relation: str | None, text: str) -> None:
            out.append((relation or "", text))

        var = stmt.var.uid if isinstance(stmt, AssignStmt) else None
        if kind == "LoadReq":
            for r in self.rows("LoadReq", sid):
                note("LoadReq", f"result {dims_text(self.term(r.shape))}, memory {r.memory}, source "
                           f"{dims_text(self.term(r.source))} ({r.source_layout}), window {dims_text(self.term(r.window))} "
                           f"at {dims_text(self.term(r.offsets))}")  # fmt: skip
                noncontig = self.value("NonContig", r.window_valid, r.source)
                if noncontig is not None:
                    note(
                        "NonContig",
                        f"window row-major contiguous when collapsed: {'no' if noncontig else 'yes'} (B-044)",
                    )
            if self.rows("Pending", sid):
                note("Pending", "every use is a batched-matmul operand: a natural Mat load (B-043, B-112)")
            keeps = self.value("KeepsWindow", sid)
            if keeps:
                note("KeepsWindow", "an explicit layout or an NZ source keeps the tensor-rank window (B-041)")
            if self.value("Dead", sid):
                note("Dead", "dead: every batched matmul reading it re-loads per batch (B-115)")
        elif kind == "BmmReq":
            out += self._bmm_facts(sid)
        elif kind == "StoreReq":
            for r in self.rows("StoreReq", sid):
                note("StoreReq", f"tile {dims_text(self.term(r.shape))} (valid {dims_text(self.term(r.valid))}) into tensor "
                           f"{dims_text(self.term(r.tensor))} at {dims_text(self.term(r.offsets))}")  # fmt: skip
            if self.value("PackedStore", sid):
                note("PackedStore", "stores a member of a packed accumulator chain (B-050)")
        elif kind == "AllocReq":
            for r in self.rows("AllocReq", sid):
                note("AllocReq", f"shape {dims_text(self.term(r.shape))}")
            if var is not None and self.value("PackedVar", var):
                note("PackedVar", "allocates a packed accumulator chain (B-173)")
        elif kind == "TransposeReq":
            for r in self.rows("TransposeReq", sid):
                note(
                    "TransposeReq",
                    f"input {dims_text(self.term(r.input))}, axes ({r.axis1}, {r.axis2}), {r.operands} operands",
                )
            if self.rows("LegacyView", sid):
                note("LegacyView", "every use is a batched-matmul operand (B-100)")
        elif kind in ("GenericReq", "ReshapeReq", "AssembleReq"):
            for r in self.rows(kind, sid):
                shape = r.shape if kind in ("GenericReq", "ReshapeReq") else r.target
                note(kind, f"{op or kind[:-3].lower()}: result {dims_text(self.term(shape))}")
        return out

    def _bmm_facts(self, sid: int) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []

        def note(relation: str, text: str) -> None:
            out.append((relation, text))

        for r in self.rows("BmmGeom", sid):
            note(
                "BmmGeom",
                f"output batch {dims_text(self.term(r.batch))}: B={r.batch_count} pages of M={r.m} x N={r.n}, K={r.k}",
            )
        budget = next((r.mat for r in self.rows("ConfigRow")), None)
        if budget is not None and budget >= 2**62:
            budget = None  # no backend: the capacity gate reports fit (B-116)
        for r in self.rows("BmmReq", sid):
            lb, rb = r.lhs_bytes, r.rhs_bytes
            if lb >= 0 and rb >= 0 and budget is None:
                note("BmmReq", f"whole operands {lb} + {rb} = {lb + rb} bytes; no backend, so no Mat (L1) budget: "
                           f"they fit (B-116)")  # fmt: skip
            elif lb >= 0 and rb >= 0 and budget is not None:
                fits = lb + rb <= budget
                note("BmmReq", f"whole operands {lb} + {rb} = {lb + rb} bytes of Mat (L1) against a {budget}-byte "
                           f"budget: {'fits' if fits else 'does not fit'} (B-116)")  # fmt: skip
        for r in self.rows("Route", sid):
            side = "lhs" if r.side == 0 else "rhs"
            how = "kept whole and sliced per page" if r.route == 1 else "re-loaded per batch (B-138)"
            view = " through its transpose view, by columns" if self.rows("ViewOperand", sid) and any(
                v.side == r.side for v in self.rows("ViewOperand", sid)) else ""  # fmt: skip
            note("Route", f"{side}: {how}{view}")
        for r in self.rows("BmmAccRow", sid):
            chain = next((n.eclass for n in self._nodes("ChainOf") if n.args == (r.acc_var,)), None)
            if chain is None:
                continue
            for p in self.rows("PackChain"):
                if p.chain == chain:
                    note(
                        "PackChain",
                        f"accumulator chain packs along columns: B={p.batch}, M={p.m}, N={p.n} (B-173)",
                    )
            if any(p.chain == chain for p in self.rows("LegacyChain")):
                note("LegacyChain", "accumulator chain stays row-packed (B-174)")
        return out

    def _nodes(self, op: str) -> list[Any]:
        return [n for nodes in self.view.classes.values() for n in nodes if n.op == op]


def explain_function(eg: PlanReader, fn_name: str) -> list[StatementExplanation]:
    reader = _Reader(eg)
    candidates: dict[int, list[tuple[float, Term]]] = {}
    precedence: dict[Term, int] = {}  # rules/choose.egg's order of each plan
    classes = {cls: k for cls, k in eg.view().relations.get("PlanClass", [])}
    for sid, cls in eg.view().relations.get("Chose", []):
        term = reader.ex.term(cls) if isinstance(cls, ClassId) else None
        if term is not None:
            candidates.setdefault(sid, []).append((reader.ex.cost(cls), term))
            if isinstance(classes.get(cls), int):
                precedence[term] = classes[cls]
    chosen = eg.plan_terms()
    names = variable_names(eg.program.function(fn_name))
    labels = statement_labels(eg)
    out = []
    for sid in eg.encoding.function_sids.get(fn_name, range(len(eg.encoding.statements))):
        stmt, call = eg.encoding.statements[sid]
        plan = chosen.get(sid)
        head = f"{stmt.var.name} = " if isinstance(stmt, AssignStmt) else ""
        options = sorted(candidates.get(sid, []), key=lambda c: (c[0], str(c[1])))
        cost = next((c for c, t in options if t == plan), INF)
        rules = [_placed(r, eg.report) for r in reader.rules_for(sid, plan)] if plan is not None else []
        winner = _Held(
            plan_words(plan, names, labels), precedence.get(plan) if plan is not None else None, cost, plan
        )
        alternatives = [
            Alternative(
                plan_words(t, names, labels),
                str(t),
                c,
                [_placed(r, eg.report) for r in reader.rules_for(sid, t)],
                _lost_because(reader, _Held(plan_words(t, names, labels), precedence.get(t), c, t), winner),
                term_fields(t, names, labels),
            )
            for c, t in options
            if t != plan
        ]
        span = stmt.span or call.span
        facts = reader.facts(sid, stmt)
        out.append(StatementExplanation(
            fn_name, sid, getattr(span, "line", None), head + print_expr(call), plan_words(plan, names, labels),
            str(plan) if plan is not None else "-", cost, rules, [text for _, text in facts], alternatives,
            reader.idle_rules(sid, [*rules, *(r for a in alternatives for r in a.rules)]),
            reader.request(sid, names, labels), term_fields(plan, names, labels) if plan is not None else {},
            [reader.derived_by(relation) for relation, _ in facts],
        ))  # fmt: skip
    return out


def statement_labels(eg: PlanReader) -> dict[int, str]:
    """Each statement of the run by the name the user sees for it everywhere: its source line."""
    out = {}
    for sid, (stmt, call) in enumerate(eg.encoding.statements):
        line = getattr(stmt.span or call.span, "line", None)
        if line is not None:
            out[sid] = f"line {line}"
    return out


@dataclass(frozen=True)
class _Held:
    """A plan a statement holds, as the reason one lost reads it."""

    words: str
    rank: int | None  # its precedence (rules/choose.egg), None: it has none
    cost: float
    term: Term | None = None


def _lost_because(reader: _Reader, mine: _Held, chosen: _Held) -> str:
    """Why a plan lost, in words: which plan won, and the rule that ordered them or the costs that did."""
    won = f"the chosen plan ({re.split(r'; |, | [(]', chosen.words, maxsplit=1)[0]})"
    if chosen.rank is not None and (mine.rank is None or mine.rank > chosen.rank):
        by = reader.ranked_by(chosen.term, chosen.rank) if chosen.term is not None else None
        why = (
            f"rule {by.name} ({by.file}:{by.line}) gives it precedence {chosen.rank}"
            if by
            else (f"rules/choose.egg gives it precedence {chosen.rank}")
        )
        if mine.rank is None:
            return f"{won} goes first: {why}, and this plan has none, so it comes after every plan with one"
        mine_by = reader.ranked_by(mine.term, mine.rank) if mine.term is not None else None
        theirs = f" (rule {mine_by.name})" if mine_by else ""
        return f"{won} goes first: {why}, ahead of this plan's {mine.rank}{theirs}; the lowest is lowered"
    if mine.cost > chosen.cost:
        return f"{won} costs less: {chosen.cost:g} against this plan's {mine.cost:g}"
    return f"tied with {won} on precedence and cost ({mine.cost:g}); the first in printed order is lowered"


def format_explanation(e: Explanation, terms: bool = False) -> str:
    """Each plan in words; `terms` adds the e-graph term under each (what a rule author matches on)."""
    lines: list[str] = [f"program {e.program}"]
    function = None
    for s in e.statements:
        if s.function != function:
            function = s.function
            lines += ["", f"function {function}"]
        lines += ["", f"  line {s.line if s.line is not None else '?'}: {s.source}"]
        cost = f"  (cost {s.cost:g})" if s.cost != INF else ""
        lines.append(f"    plan: {s.plan}" + ("" if terms else cost))
        if terms:
            lines.append(f"          {s.term}{cost}")
        for r in s.rules:
            lines.append(f"    rule: {r}")
            if r.comment:
                lines.append(f"          {r.comment}")
        for f in s.facts:
            lines.append(f"    fact: {f}")
        for a in s.alternatives:
            by = f" by {', '.join(r.name for r in a.rules)}" if a.rules else ""
            held = a.term if terms else a.plan
            lines.append(f"    also held{by}: {held} (cost {a.cost:g}) -- lost: {a.lost_because}")
        if s.not_chosen_by:
            lines.append(f"    guards that did not hold: {', '.join(s.not_chosen_by)}")
    return "\n".join(lines) + "\n"


__all__ = ["Explanation", "StatementExplanation", "explain_function", "format_explanation", "plan_words"]
