"""The e-graph of one InCore function: rules loaded, facts encoded, schedule run, plans extracted."""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import egglog.bindings as eb

from ..backend import Backend, get_backend
from ..errors import RuleError, ScheduleLimitError, UserError
from ..extract.cost import CostModel, OptimalCostModel
from ..extract.graph import StoredRelations
from ..ir.stmt import Program
from .accel import Acceleration, shared_requests
from .accel.fact_folder import FactFolder
from .accel.fact_table import packed_relations, table_declarations
from .accel.relevance import Relevance, all_rules, relevant_rules
from .accel.resident import (
    ResidentRules,
    check_not_forked_after_use,
    forked_since_import,
    ready_rules,
    resident_rules,
    smallest_ready,
)
from .accel.rule_sets import RuleSetKey, family_set
from .accel.schedule_run import account_stages, record_stage, record_stages, schedule_command
from .accel.strata import StagePlan, concern_declarations, stage_plan
from .encode import Encoding
from .encoder import encode_functions
from .plan_reader import PlanReader, settled_plan
from .report import RunReport, rule_name
from .rule_index import Stage, parse_schedule, rule_index
from .rules import (
    RuleFile,
    blanked,
    load_rule_file_slices,
    parsed,
    read_rule_files,
    run_commands,
    run_text,
    schedule_text,
    shipped_rule_files,
)
from .shipped import SELF_CHECKS, accel_rules_dir, rules_dir


@dataclass(frozen=True)
class Limits:
    """Bounds on saturation; hitting one is an error that names it, never a hang."""

    max_iterations: int = 1000  # per stage
    max_enodes: int = 5_000_000
    timeout_s: float = 120.0


@dataclass
class _StageRun:
    iterations: int = 0
    matches: dict[str, int] = field(default_factory=dict)


@functools.cache
def packed_tables_file() -> RuleFile:
    """The packed tables' declarations (accel/fact_table.py) as a rule file of the shipped set."""
    return RuleFile(rules_dir() / "packed-tables.egg", table_declarations())


def with_packed_tables(files: list[RuleFile]) -> list[RuleFile]:
    """The shipped files with the packed tables declared right after rules/sorts.egg (whose sorts key them)."""
    at = next(i for i, rf in enumerate(files) if rf.name == "sorts.egg") + 1
    return [*files[:at], packed_tables_file(), *files[at:]]


@functools.cache
def gates_file() -> RuleFile:
    """The stated-answers acceleration's stand-ins for the list walks (accel/rules/gates.egg)."""
    path = accel_rules_dir() / "gates.egg"
    return RuleFile(path, path.read_text().partition(SELF_CHECKS)[0])


@functools.cache
def _with_gates(files: tuple[RuleFile, ...]) -> tuple[RuleFile, ...]:
    gates = gates_file()
    standing_in = {r.name for r in rule_index((gates,)).rules}
    for names in _LEFT_OUT.findall(gates.text):
        standing_in.update(names.split())
    blanks = [(r.file, r.form) for r in rule_index(files).rules if r.name in standing_in]
    return (*blanked(files, blanks), gates)


def with_gates(files: list[RuleFile]) -> list[RuleFile]:
    """The shipped files with each rule the gates stand in for (by its name, or named on their `left out:` line)
    left out, and the gates after them."""
    return list(_with_gates(tuple(files)))


def accelerated_rule_files(acceleration: Acceleration) -> list[RuleFile]:
    """The shipped rule files as the accelerated runner loads them: the gates stand in for the walks where the
    encoder states the answers they gate on."""
    files = with_packed_tables(shipped_rule_files())
    return with_gates(files) if acceleration.gated_walks and acceleration.stated_answers else files


_LEFT_OUT = re.compile(r"^;; left out: (.+)$", re.MULTILINE)


class EGraphRun(PlanReader):
    """Encode one function of `program` (or several, into one e-graph), load the rules, and run them.

    >>> eg = EGraphRun(program, "main_incore_0", backend="Ascend910B")
    >>> report = eg.saturate()
    >>> eg.write_html("egraph.html")
    """

    def __init__(
        self,
        program: Program,
        function_name: str | Sequence[str],
        backend: str | Backend | None = None,
        extra_rules: Sequence[str | Path] = (),
        limits: Limits | None = None,
        cost_model: CostModel | None = None,
        reuse_rules: bool = False,
        strategy: str = "reference",
        prune_rules: bool = True,
        reads: frozenset[str] | None = None,
        share_requests: bool = True,
        check_schedule: bool = False,
        acceleration: Acceleration | None = None,
    ) -> None:
        """`reuse_rules`: put the facts on the owner thread's already-loaded rules (only on that thread, see
        `run_on_owner`; call `close()` when done) instead of loading the rules into an e-graph of its own.
        `prune_rules`: load only the rules these facts could fire (relevance.py); off, every rule is loaded.
        `reads`: the relations and functions the caller reads besides the plans, when it reads no other table and
        no other term (the pass, not explain or the pictures, which read everything: None), so rules whose work
        nobody reads are not run either. `share_requests`: statements asking the same question share one request
        where the caller reads plans alone (`reads`) and no user's rule is loaded. `check_schedule`: after each
        stage's ordered steps, run the stage as one ruleset and require that it changes nothing (strata.py; the
        test suite turns it on for every run). `acceleration`: the speed-ups to use, in place of `reuse_rules`,
        `prune_rules` and `share_requests` (accel/__init__.py); without it the schedule runs staged and the
        encoder states its answers."""
        if acceleration is not None:
            reuse_rules, prune_rules = acceleration.resident_egraphs, acceleration.prune_rules
            share_requests = acceleration.shared_requests
        self._staged = acceleration is None or acceleration.staged_schedule
        self.strategy = check_strategy(strategy)
        self._reads = reads
        names = [function_name] if isinstance(function_name, str) else list(function_name)
        self.program = program
        self.functions = program.functions_named(names)
        self.function = self.functions[0]
        self.backend = get_backend(backend)
        self.limits = limits or Limits()
        if cost_model is None and strategy == "optimal":
            cost_model = OptimalCostModel(self.backend)
        self.cost_model = cost_model
        self.report = RunReport(", ".join(names))
        t0 = time.perf_counter()
        # the operands of generic requests as term lists only where something reads them (user rules, explain)
        self.encoding: Encoding = encode_functions(
            self.functions,
            self.backend,
            strategy,
            operand_lists=reads is None or bool(extra_rules),
            # a user's rules may read every page index: those are all stated up front
            page_rows=None if extra_rules else PAGE_ROWS_UP_FRONT,
            state_answers=acceleration is None or acceleration.stated_answers,
        )
        self.report.times["encode"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        self.rule_files: list[RuleFile] = accelerated_rule_files(acceleration or Acceleration())
        self.rule_files += _user_rule_files(extra_rules, checked=prune_rules)
        self.report.rule_files = list(dict.fromkeys(str(rf.path) for rf in self.rule_files))
        # only the rules these facts could ever fire are loaded (the host asserts Route and Settled itself)
        filled = {rel for rel, rows in self.encoding.rows.items() if rows}
        if self.strategy == "optimal":
            filled |= HOST_ASSERTED
        self._relevance_reads = reads if reads is None else reads | HOST_READS
        self.relevance: Relevance = (
            relevant_rules(tuple(self.rule_files), frozenset(filled), self._relevance_reads)
            if prune_rules
            else all_rules(self.rule_files)
        )
        self.report.rules_loaded = self.relevance.kept
        self._user_rules = bool(extra_rules)
        self.check_schedule = check_schedule
        self._fact_folder = self._attach(reuse_rules)
        self.report.times["load rules"] = time.perf_counter() - t0
        self._inputs = self._write_facts(share=share_requests and reads is not None and not extra_rules)
        self._saturated = False
        self._start_reading()

    def _view_sources(self) -> tuple[dict | None, frozenset[str] | None, StoredRelations | None]:
        return self._shared.schema if self._shared is not None else None, self.relevance.tables, STORED

    def _write_facts(self, share: bool) -> list[str]:
        """The fact files, read with the schedule's first call, and the commands that input them. `share`: the
        statements asking the same question share one request, where nothing else the loaded rules read names them
        (explain and the pictures show each statement's own; a user's rule may tell statements apart by id)."""
        t0 = time.perf_counter()
        if share:
            shared_requests.share_requests(self.encoding, self.relevance.facts)
        try:
            inputs = self.encoding.write_facts(self._fact_folder, self.relevance.facts)
        except BaseException:
            self.close()
            raise
        if self._owed_reset:
            inputs.insert(0, self._owed_reset)
        self.report.times["load facts"] = time.perf_counter() - t0
        self.report.facts = self.encoding.size
        self.report.statements = len(self.encoding.statements)
        self.report.requests = self.report.statements - len(self.encoding.shared)
        return inputs

    def _attach(self, reuse_rules: bool) -> FactFolder:
        """Take one of the owner thread's resident e-graphs, or load the live rules into one of this run's own; the
        folder its fact files are read from. The resident e-graph of exactly the live rules is the cheapest to
        run; until it is loaded (in the background, between programs) the smallest loaded one that holds them
        serves (another kind's, whose rules and fact relations include these: a plan runs only the live rules,
        and a table costs the run, the reading and the reset a little each), else the one of every rule."""
        check_not_forked_after_use()
        self._shared: ResidentRules | None = None
        self._declared: set[str] = set()
        self._owed_reset = ""
        shared = None
        if reuse_rules and not forked_since_import():
            relevance = self.relevance
            key = RuleSetKey.of(relevance)
            shared = ready_rules(key, lambda: relevance.files, load_slices)
            if shared is None or shared.in_use:
                shared = (
                    smallest_ready(key.fits_within)
                    or self._family_set(key)
                    or resident_rules(self.rule_files, load_slices)
                )
        if shared is not None and not shared.in_use:  # (re-entrant use builds its own)
            self._shared = shared
            self.egraph = shared.egraph
            # the program before's reset goes first in this program's facts call; a set reset by pop is popped
            # before the steps' rulesets are declared, and they before its push, which would take them away again
            self._owed_reset = shared.owed_reset()
            shared.clean()
            self._declare_steps()
            shared.begin()
            return shared.facts
        self._own_facts = FactFolder()
        self.egraph = eb.EGraph(fact_directory=self._own_facts.path)
        load_rules(self.egraph, self.relevance.files)
        self._declare_steps()
        return self._own_facts

    def _family_set(self, key: RuleSetKey) -> ResidentRules | None:
        """The smallest family set holding this kind's rules (rule_sets.py); none for a user's rules, each of which
        would make every family larger."""
        if self._user_rules:
            return None
        return family_set(key, self.rule_files, self._relevance_reads, HOST_ASSERTED, load_slices)

    def close(self) -> None:
        """Take this function's facts off the thread's shared rules (a no-op for an e-graph of its own)."""
        view = getattr(self, "_view", None)
        if view is not None:
            view.release()  # extracted plans and facts read so far stay readable
        if self._shared is not None:
            shared, self._shared = self._shared, None
            self.egraph = None  # type: ignore[assignment]  # the owner thread keeps it; no other may drop it
            shared.end()

    def _egglog_failed(self) -> None:
        """egglog itself failed half-way through this program: a shared e-graph is loaded again for the next."""
        if self._shared is not None:
            self._shared.broken = True

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ saturation

    def saturate(self) -> RunReport:
        if self._saturated:
            return self.report
        t0 = time.perf_counter()
        deadline = t0 + self.limits.timeout_s
        self._run_schedule(deadline)
        if self.strategy == "optimal":
            self._settle_routes(deadline)
        self.report.times["saturate"] = time.perf_counter() - t0
        self._saturated = True
        return self._saturated_report(self._user_rules)

    def _run_schedule(self, deadline: float) -> None:
        """The program's facts, then every stage of rules/schedule.egg, each to its fixpoint. The shipped rules
        run in one egglog call (each stage bounded by the iteration limit; they stop long before it); rules of a
        user's file run stage by stage, a chunk of iterations per call, with every limit checked between calls."""
        inputs, self._inputs = self._inputs, []
        stages = parse_schedule(schedule_text())
        if not self._staged:  # rules/schedule.egg as written, on this e-graph's rules
            load_facts(self.egraph, self._fact_folder, inputs, self._egglog_failed)
            run_text(self.egraph, schedule_text(), "rules/schedule.egg")
        elif self._user_rules and self.relevance.runs(""):
            load_facts(self.egraph, self._fact_folder, inputs, self._egglog_failed)
            for stage in stages:
                run = self._run_stage(stage, deadline)
                self._record(stage, run.iterations, run.matches)
            return
        else:
            self._saturate_stages(self._plan(), stages, inputs)
        if self._state_wanted_pages():
            self._run_schedule(deadline)

    def _state_wanted_pages(self) -> bool:
        """State the page indices past those the facts stated, up to the most a rule asked for (`PagesWanted`);
        whether there were any (the schedule then runs again: only the rules that enumerate pages read them)."""
        tables, facts = self.relevance.tables, self.relevance.facts
        if (tables is not None and "PagesWanted" not in tables) or (
            facts is not None and "PageIndexRow" not in facts
        ):
            return False  # no kept rule asks, or none reads the indices (nor does a pruned set declare them)
        asked = self.egraph.lookup_function("PagesWanted", [])
        wanted = 0 if asked is None else self.egraph.value_to_i64(asked)
        rows = self.encoding.rows["PageIndexRow"]
        if wanted <= len(rows):
            return False
        rows.extend((i,) for i in range(len(rows), wanted))
        self._inputs = self.encoding.write_facts(self._fact_folder, frozenset({"PageIndexRow"}))
        return True

    def _saturate_stages(self, plan: StagePlan, stages: Sequence[Stage], inputs: list[str]) -> None:
        """The facts, then the planned steps of every stage in one egglog call. Each stage's iterations are
        accounted for when the report is read, or at once where a step may have stopped at the iteration limit
        (only a run of that many iterations can have) or under the schedule check (which checks each stage's
        fixpoint): the accounting reads every iteration's report, which costs more than the rest of the
        bookkeeping."""
        limit = self.limits.max_iterations
        schedule = schedule_command(plan, limit, self.check_schedule)
        outputs = load_facts(self.egraph, self._fact_folder, inputs, self._egglog_failed, then=(schedule,))
        # (the schedule's is the last: the reset the program before owed runs first, and reports too)
        report = [getattr(o, "report") for o in outputs if isinstance(o, eb.RunScheduleOutput)][-1]  # noqa: B009
        ran = report.iterations
        account = functools.partial(account_stages, plan, stages, ran, limit, self.check_schedule)
        if self.check_schedule or len(ran) >= limit:
            for stage, iterations in account():
                self.report.defer(functools.partial(record_stage, stage, iterations))
        else:
            self.report.defer(functools.partial(record_stages, account))

    def _plan(self) -> StagePlan:
        return stage_plan(tuple(self.rule_files), parse_schedule(schedule_text()), self.relevance.rules)

    def _declare_steps(self) -> None:
        """Declare the rulesets of the plan's steps this e-graph does not hold yet."""
        plan = self._plan()
        held = self._shared.declared if self._shared is not None else self._declared
        wanted = (
            {**plan.declarations, **plan.whole_declarations} if self.check_schedule else plan.declarations
        )
        new = [name for name in wanted if name not in held]
        if new:
            run_text(self.egraph, "\n".join(wanted[name] for name in new), "<steps>")
            held.update(new)

    def _record(self, stage: Stage, iterations: int, matches: dict[str, int]) -> None:
        self.report.record_stage(stage.rulesets, iterations, matches)

    def _settle_routes(self, deadline: float) -> None:
        """Optimal strategy: the extracted batched-matmul plans fix each operand's route; the rules then
        decide, from those routes, which whole loads no plan reads (dead, B-115) and which must fail."""
        self._saturated = True
        read = self.relevance.facts  # (None: every relation is read)
        if read is not None and not read & HOST_ASSERTED:
            return  # no rule of this program reads the routes (nor does the pruned set declare them)
        routes = [settled_plan(sid, plan) for sid, plan in self.route_plans().items()]
        run_text(self.egraph, " ".join([*routes, "(Settled)"]), "<routes>")
        if self._view is not None:  # what was read before the routes settled is stale
            self._view.release()
        self._view, self._extraction, self._facts, self._plans = None, None, {}, None
        self._run_schedule(deadline)

    def _run_stage(self, stage: Stage, deadline: float) -> _StageRun:
        """Run one stage to saturation, a bounded chunk of iterations per egglog call. The stage's named
        rulesets run as one combined ruleset (the same fixpoint as running them in turn), so a stage that
        saturates within a chunk costs one call; the limits are checked between chunks. The default ruleset
        (user rules) cannot be combined: it and the combined one run in turn, each to its fixpoint, until a
        round in which neither changes anything."""
        body = " ".join(f"(run {r})" if r else "(run)" for r in stage.rulesets)
        live = self.relevance.runs
        parts = [_combined_name(stage)] if any(r and live(r) for r in stage.rulesets) else []
        if "" in stage.rulesets and live(""):
            parts.append("")  # the default ruleset (rules of user files) cannot be combined
        run = _StageRun()
        while parts:
            changed = False
            for part in parts:
                while True:
                    chunk = max(1, min(_CHUNK, self.limits.max_iterations - run.iterations))
                    report = self._run_chunk(f"(run {part} {chunk})" if part else f"(run {chunk})", body, run)
                    changed |= report.updated
                    iterations = report.iterations
                    if not iterations or not iterations[-1].rule_set_report.changed:
                        break  # this part is saturated
                    self._check_limits(run, body, deadline)
            if len(parts) == 1 or not changed:
                break
            self._check_limits(run, body, deadline)  # another round: the parts may feed each other forever
        return run

    def _run_chunk(self, program: str, body: str, run: _StageRun) -> Any:
        """One egglog call of a stage; its iterations and matches are added to `run`."""
        try:
            outputs = self.egraph.run_program(*parsed(self.egraph, program))
        except BaseException as e:  # a missing ruleset panics (PanicException is not an Exception)
            if isinstance(e, eb.EggSmolError) or type(e).__name__ == "PanicException":
                self._egglog_failed()
                raise RuleError(f"rules/schedule.egg: running {body} failed: {e}") from None
            raise
        report = getattr(outputs[0], "report")  # noqa: B009 - the bindings type the output as a union
        run.iterations += len(report.iterations)
        for rule, n in report.num_matches_per_rule.items():
            key = rule_name(rule)
            run.matches[key] = run.matches.get(key, 0) + n
        return report

    def _check_limits(self, run: _StageRun, body: str, deadline: float) -> None:
        """Before a stage goes on: its iterations, the time and the e-graph's size, the error naming the one hit."""
        if run.iterations >= self.limits.max_iterations:
            raise ScheduleLimitError(
                f"saturation stopped at the iteration limit ({self.limits.max_iterations}) in stage "
                f"{body}; a rule keeps creating new terms. Raise Limits.max_iterations or fix the rule."
            )
        if time.perf_counter() > deadline:
            raise ScheduleLimitError(
                f"saturation stopped at the time limit ({self.limits.timeout_s:g} s) in stage {body}."
            )
        size = self._size()
        if size > self.limits.max_enodes:
            raise ScheduleLimitError(
                f"saturation stopped at the e-node limit ({self.limits.max_enodes}, reached {size}) "
                f"in stage {body}."
            )

    def _size(self) -> int:
        out = self.egraph.run_program(*parsed(self.egraph, "(print-size)"))
        sizes: list[tuple[str, int]] = getattr(out[0], "sizes")  # noqa: B009
        return sum(n for _, n in sizes)


# the relations egglog holds in shared tables (fact_table.py), as the view reads them back
STORED = StoredRelations(
    {rel: (st.table, st.sorts, st.places, st.value) for rel, st in packed_relations().items()}
)
# page indices stated with the facts; a rule asking for more gets them in a second run
PAGE_ROWS_UP_FRONT = 16
# what the engine reads of the e-graph itself, besides its caller's reads
HOST_READS = frozenset({"PagesWanted"})
# what the host asserts itself under the optimal strategy (the routes its extraction settled)
HOST_ASSERTED = frozenset({"Route", "ModeTaken", "Settled"})
_CHUNK = 12  # iterations per egglog call, the limits checked between calls: every stage of the shipped rules
# saturates within one call on the corpus and the workloads (at most 11 iterations)
STRATEGIES = ("reference", "optimal")


def _combined_name(stage: Stage) -> str:
    return "stage__" + "__".join(r for r in stage.rulesets if r).replace("-", "_")


def load_facts(
    egraph: eb.EGraph,
    folder: FactFolder,
    commands: list[str],
    failed: Callable[[], None] | None = None,
    then: Sequence[Any] = (),
) -> list[object]:
    """Run the `(input ...)` commands (and any others) through one `include` of a file listing them: egglog then
    reads them itself, where each command handed over from Python costs a conversion of its own (about 20 us).
    `failed` is told when egglog itself fails."""
    if not commands:
        return run_commands(egraph, then, "<facts>") if then else []
    listing = folder.write("facts.egg", "\n".join(commands) + "\n")
    path = listing.replace("\\", "\\\\").replace('"', '\\"')
    try:
        return run_text(egraph, f'(include "{path}")', "<facts>", reuse=True, then=then)
    except RuleError:
        if failed is not None:
            failed()
        raise


def check_strategy(strategy: str) -> str:
    if strategy not in STRATEGIES:
        raise UserError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    return strategy


def _user_rule_files(extra: Sequence[str | Path], checked: bool) -> list[RuleFile]:
    """A user's rule files; `checked`: each loaded once after the shipped ones, as the plain run would load it,
    since pruning may leave a rule out of the run that egglog must still accept."""
    user_files = [rf for path in extra for rf in read_rule_files(Path(path))]
    if user_files and checked:
        _check_user_files(tuple(user_files))
    return user_files


def check_rule_files(extra: Sequence[str | Path]) -> None:
    """A user's rule files read and loaded once, after the shipped ones, into an e-graph of their own (made and
    dropped here): a file that does not read, or that egglog refuses, is a RuleError naming the file and the form,
    before any program runs with it."""
    _user_rule_files(extra, checked=True)


@functools.lru_cache(maxsize=16)
def _check_user_files(user_files: tuple[RuleFile, ...]) -> None:
    """Load every rule of these files after the shipped ones (the same texts are checked once a process; a
    RuleError is not cached, so it is raised again)."""
    load_rules(eb.EGraph(), [*accelerated_rule_files(Acceleration()), *user_files])


def load_rules(egraph: eb.EGraph, rule_files: Sequence[RuleFile]) -> None:
    """The rule files, each shipped rule in a ruleset of its own; then the concerns' rulesets (combining their
    rules') and one combined ruleset per stage (for a user's rules, which run stage by stage)."""
    for _ in load_slices(egraph, list(rule_files)):
        pass


def load_slices(egraph: eb.EGraph, rule_files: list[RuleFile]) -> Iterator[None]:
    """`load_rules` a few commands at a time (about a millisecond of egglog's work each)."""
    for rf in rule_files:
        yield from load_rule_file_slices(egraph, rf, own_rulesets=True, commands=_LOAD_SLICE)
    run_text(egraph, concern_declarations(rule_files), "<concerns>")
    combine_stage_rulesets(egraph)


_LOAD_SLICE = 4  # commands a slice of background loading runs (a rule takes 0.2-0.4 ms to check and compile)


def combine_stage_rulesets(egraph: eb.EGraph) -> None:
    """Declare one combined ruleset per stage of the schedule (after the rule files are loaded)."""
    declared: set[str] = set()
    for stage in parse_schedule(schedule_text()):
        name = _combined_name(stage)
        named = [r for r in stage.rulesets if r]
        if named and name not in declared:
            declared.add(name)
            run_text(egraph, f"(unstable-combined-ruleset {name} {' '.join(named)})", "rules/schedule.egg")
