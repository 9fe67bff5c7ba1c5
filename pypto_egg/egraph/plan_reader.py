"""Reading a saturated e-graph back: the view of its classes and relations, the extraction of the classes a caller
can ask for, the plan that lowers each statement, and the rows of a relation with their terms. Every runner
(the accelerated engine, the core runner) reads its decisions through this one reading."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

import egglog.bindings as eb

from ..errors import InternalError
from ..extract import ClassId, EGraphView, Extraction, Term, extract_roots
from ..extract.cost import CostModel, DefaultCostModel
from ..extract.graph import StoredRelations
from ..ir.stmt import Function, Program
from .accel.fact_table import packed_relations
from .encode import Encoding
from .report import RunReport
from .rule_check import warn_unmatched
from .rule_index import rule_index
from .rules import RuleFile, fact_relations

# the relations of integers and strings alone: their rows hold no e-class (whether or not a table packs them)
_NO_CLASSES = frozenset(rel for rel, st in packed_relations().items() if set(st.sorts) <= {"i64", "String"})


class PlanReader:
    """The decisions of a run whose schedule has run: set by the runner before the first read."""

    egraph: eb.EGraph
    program: Program
    functions: list[Function]
    encoding: Encoding
    report: RunReport
    cost_model: CostModel | None
    rule_files: list[RuleFile]
    _reads: frozenset[str] | None  # the relations the caller reads besides the plans (None: everything)

    def _start_reading(self) -> None:
        self._view: EGraphView | None = None
        self._extraction: Extraction | None = None
        self._facts: dict[str, list[tuple[Term | int | float | str | bool | None, ...]]] = {}
        self._plans: dict[int, Term | None] | None = None

    def saturate(self) -> RunReport:
        raise NotImplementedError

    def _saturated_report(self, user_rules: bool) -> RunReport:
        """The report once the schedule ran: the e-graph's size, and a warning for each of a user's rules that
        matched nothing (rule_check.py)."""
        view = self.view()
        self.report.eclasses, self.report.enodes = view.num_classes, view.num_nodes
        if user_rules:
            warn_unmatched(self.rule_files, self.report, view)
        return self.report

    def _view_sources(self) -> tuple[dict | None, frozenset[str] | None, StoredRelations | None]:
        """(the tables' schema kept from an earlier read, the only tables that can hold rows, the relations
        shared tables hold): what the view needs to know of this run's e-graph (None: nothing)."""
        return None, None, None

    def view(self) -> EGraphView:
        if self._view is None:  # the constructors the cost model never extracts are not read
            model = self.cost_model or DefaultCostModel()
            schema, tables, stored = self._view_sources()
            self._view = EGraphView.from_egraph(
                self.egraph, getattr(model, "unextractable", frozenset()), schema, tables, stored
            )
        return self._view

    def extraction(self) -> Extraction:
        if self._extraction is None:
            self.saturate()
            t0 = time.perf_counter()
            self._extraction = extract_roots(self.view(), self.cost_model, roots=self._roots())
            self.report.times["extract"] = time.perf_counter() - t0
        return self._extraction

    def _roots(self) -> list[ClassId] | None:
        """The classes whose terms the caller can ask for: those of the plans and of the relations it reads (None: a
        caller that reads everything, as explain and the pictures do)."""
        if self._reads is None:
            return None
        relations, filled = self.view().relations, self._view_sources()[1]
        return [
            a
            for rel in ("Chose", *sorted(self._reads))
            # (a table no kept rule or fact fills holds no row, a packed relation of integers no e-class)
            if (filled is None or rel in filled) and rel not in _NO_CLASSES
            for row in relations.get(rel, [])
            for a in row
            if type(a) is ClassId
        ]

    def plan_terms(self) -> dict[int, Term | None]:
        """The plan that lowers each encoded statement (None: no plan lowers it): of the plans the rules chose
        for it, those of its rank (rules/choose.egg), or, when it has none, those without a class.

        Only the optimal strategy's batched-matmul plans come several to a statement, as equals the cost model
        chooses among. First plans of another kind that tie would be a gap in the rules' order: the cheapest
        is taken, by the printed term on equal cost, and the run report counts it (`ties`), which the tests
        require to be zero."""
        if self._plans is None:
            self.extraction()  # saturated first: the view is read once, after the rules ran
            relations = self.view().relations
            rank = {sid: k for sid, k in relations.get("Rank", [])}
            classes = {cls: k for cls, k in relations.get("PlanClass", [])}
            self._plans = self._cheapest(lambda sid, cls: classes.get(cls) == rank.get(sid))
        return self._plans

    def route_plans(self) -> dict[int, Term]:
        """Optimal strategy, before the routes settle: each batched matmul's cheapest plan (what it costs is
        the only difference between them), whose routes the rules then take as settled."""
        plans = self._cheapest(lambda sid, cls: True, "BatchMatmul")
        return {sid: plan for sid, plan in plans.items() if plan is not None}

    def _cheapest(
        self, first: Callable[[object, object], bool], op: str | None = None
    ) -> dict[int, Term | None]:
        ex = self.extraction()
        candidates: dict[int, list[tuple[ClassId, Term]]] = {}
        for sid, cls in self.view().relations.get("Chose", []):
            if not first(sid, cls):
                continue
            term = ex.term(cls) if isinstance(cls, ClassId) else None
            if isinstance(sid, int) and term is not None and (op is None or term.op == op):
                candidates.setdefault(sid, []).append((cls, term))  # type: ignore[arg-type]
        out: dict[int, Term | None] = {}
        for sid in range(len(self.encoding.statements)):
            options = candidates.get(sid)
            if not options:
                out[sid] = None
            elif len(options) == 1:
                out[sid] = options[0][1]
            else:  # (a cost is worked out only where there is a choice)
                if op is None and any(t.op != "BatchMatmul" for _, t in options):
                    self.report.ties += 1
                out[sid] = min(options, key=lambda c: (ex.cost(c[0]), str(c[1])))[1]
        for sid, asked in self.encoding.shared.items():
            out[sid] = out[asked]
        return out

    @functools.cached_property
    def _encoder_only(self) -> frozenset[str]:
        """The relations only the encoder states (no loaded rule writes them): the encoding's rows are all the
        e-graph holds of them, read in the encoder's order."""
        return frozenset(fact_relations()) - rule_index(tuple(self.rule_files)).written

    def facts(self, relation: str) -> list[tuple[Term | int | float | str | bool | None, ...]]:
        """The rows of a relation, e-class columns replaced by their extracted terms (read once per relation)."""
        if relation not in self._facts:
            if self._reads is not None and relation not in self._reads:
                raise InternalError(f"relation {relation} was not named among the run's reads")
            if relation in self._encoder_only:  # (the encoding's rows are all the e-graph holds)
                self._facts[relation] = list(self.encoding.rows.get(relation, []))
                return self._facts[relation]
            rows = self.view().relations.get(relation, [])
            # a column holds e-classes in every row or in none (its sort says which): the first row tells
            if rows and any(type(a) is ClassId for a in rows[0]):
                term = self.extraction().term
                rows = [tuple([term(a) if type(a) is ClassId else a for a in row]) for row in rows]
            self._facts[relation] = rows
        return self._facts[relation]


def settled_plan(sid: int, plan: Term) -> str:
    """What the optimal strategy's extracted batched-matmul plan settles, as the facts the rules read: each side's
    route (prescan.egg, Route) and the mode its pages are emitted in (bmm.egg, ModeTaken)."""
    mode, lhs, rhs = plan.field("mode"), plan.field("lhs_route"), plan.field("rhs_route")
    return f'(Route {sid} 0 {lhs}) (Route {sid} 1 {rhs}) (ModeTaken {sid} "{mode}")'
