"""Which rules could ever fire on a program's facts, so the e-graph a program is pushed onto holds only those.

egglog copies every rule and every table on `(push)` and frees them on `(pop)` (about 9 us each): with every
shipped rule and table that copy costs more than the rest of a small program's run. A rule matches only when every table its query names holds a row, so a
rule whose query names a table nothing can fill is dead for that program. The tables that can hold rows are a
least fixpoint: the encoder's non-empty relations, the tables top-level commands fill, and the tables named in
the actions of every rule that is itself live. Over-approximating that set only keeps more rules, so the
analysis is conservative wherever it cannot tell (an unknown form keeps its rule).

The result prunes the rule text (a dead rule becomes blank lines, so egglog's line numbers stay the file's) and
names the rulesets left without a rule, whose stages need no run at all. Declarations no kept rule or fact names
go too; each constructor is declared on its own so that the unused ones do.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..rule_index import Declarations, IndexedRule, RuleIndex, rule_index
from ..rules import RuleFile, blanked
from ..sexp import Form
from .fact_table import packed_relations


@dataclass(frozen=True)
class Relevance:
    """The rule files as a program with these facts needs them: which rules can fire, which fact relations are
    worth loading, and (`files`, written out when first asked for) the text of the rules without the others."""

    source: tuple[RuleFile, ...]
    live_rulesets: frozenset[str] | None  # rulesets keeping a rule ("" the default one); None: all of them
    kept: int  # rules kept (-1: every rule, uncounted)
    dropped: int
    facts: frozenset[str] | None = None  # the fact relations worth loading (None: every filled one)
    rules: frozenset[str] | None = None  # the names of the rules kept (None: every rule)
    # the tables that can hold rows: the filled fact relations, those top-level commands fill, and those the kept
    # rules' actions name (None: any table)
    tables: frozenset[str] | None = None
    index: RuleIndex | None = field(default=None, compare=False)
    live: frozenset[int] = frozenset()  # the places of the kept rules in the index

    def runs(self, ruleset: str) -> bool:
        """Whether running the ruleset could change anything."""
        return self.live_rulesets is None or ruleset in self.live_rulesets

    @functools.cached_property
    def files(self) -> tuple[RuleFile, ...]:
        """The rule files with every rule not kept blanked out, and every declaration nothing left needs (a dead
        rule becomes blank lines, so egglog's positions stay the file's)."""
        index = self.index
        if index is None:
            return self.source
        kept = [index.rules[i] for i in sorted(self.live)]
        blanks = [(r.file, r.form) for i, r in enumerate(index.rules) if i not in self.live]
        blanks += _unused_declarations(index.declarations, kept, self.facts or frozenset())
        return blanked(self.source, blanks)


@functools.lru_cache(maxsize=64)
def relevant_rules(
    files: tuple[RuleFile, ...], filled: frozenset[str], reads: frozenset[str] | None = None
) -> Relevance:
    """Which rules can ever fire on `filled` (the non-empty fact relations, plus whatever the host asserts
    itself), and the rule files with every other rule blanked out, and every declaration nothing left needs.

    `reads`: the relations and functions the host reads besides the plans (`PLAN_TABLES`) and the plans' terms,
    when it reads nothing else (the pass; explain and the pictures, None, read every table and term): a rule
    whose actions write only tables nobody reads, directly or through the rules that are kept, is left out too
    (the operand lists of requests, which only user rules read; facts no decision asks for), and so are the fact
    relations only it read (`Relevance.facts`)."""
    try:
        index = rule_index(files)
    except ValueError:  # let egglog report the file's syntax; keep every rule of the set
        return all_rules(files)
    declared = index.declarations
    # the least fixpoint: a rule is live once every table its query names can hold rows, and its actions
    # then fill the tables they name
    populated = set(filled) | (declared.commanded & declared.tables)
    live: set[int] = set()
    changed = True
    while changed:
        changed = False
        for i, rule in enumerate(index.rules):
            for needs, fills in rule.directions:
                if needs <= populated and (i not in live or not fills <= populated):
                    live.add(i)
                    populated |= fills
                    changed = True
    plans_only = reads is not None
    if reads is not None:
        live = _rules_someone_reads(index, live, reads | PLAN_TABLES)
    kept = [index.rules[i] for i in sorted(live)]
    loaded = (
        frozenset(filled & (set().union(*(r.reads for r in kept)) | declared.commanded))
        if plans_only
        else filled
    )
    return Relevance(
        files,
        frozenset(r.ruleset for r in kept),
        kept=len(kept),
        dropped=len(index.rules) - len(kept),
        facts=loaded,
        rules=frozenset(r.name for r in kept),
        tables=frozenset(filled | (declared.commanded & declared.tables)).union(*(r.writes for r in kept)),
        index=index,
        live=frozenset(live),
    )


PLAN_TABLES = frozenset({"Chose", "Rank", "PlanClass"})  # what the host reads to find each statement's plan


def _rules_someone_reads(index: RuleIndex, live: set[int], reads: frozenset[str]) -> set[int]:
    """The live rules whose actions write a table someone reads: the relations and functions the host `reads`,
    the constructors of the sorts a plan's term holds, and, as a least fixpoint, the tables the queries of the
    rules so kept name."""
    needed = set(_plan_constructors(index.files)) | set(reads)
    kept: set[int] = set()
    changed = True
    while changed:
        changed = False
        for i in sorted(live - kept):
            rule = index.rules[i]
            if not rule.writes or rule.writes & needed:
                kept.add(i)
                needed |= rule.reads
                changed = True
    return kept


@functools.lru_cache(maxsize=8)
def _plan_constructors(files: tuple[RuleFile, ...]) -> frozenset[str]:
    """The constructors of the sorts a plan's term can hold (the host reads every one of them)."""
    declared = rule_index(files).declarations
    sort_of: dict[str, str] = dict(declared.variants)  # constructor -> its sort
    arguments: dict[str, set[str]] = {}  # sort -> the sorts its constructors take
    for name, (_, form, _) in declared.decls.items():
        tree = form.tree
        if tree[0] == "datatype":
            for v in tree[2:]:
                if isinstance(v, list):
                    arguments.setdefault(name, set()).update(a for a in v[1:] if isinstance(a, str))
        elif tree[0] == "constructor" and len(tree) > 3 and isinstance(tree[3], str):
            sort_of[name] = tree[3]
            if isinstance(tree[2], list):
                arguments.setdefault(tree[3], set()).update(a for a in tree[2] if isinstance(a, str))
    in_plans, todo = set(), ["Plan"]
    while todo:
        sort = todo.pop()
        if sort not in in_plans:
            in_plans.add(sort)
            todo.extend(arguments.get(sort, ()))
    return frozenset(t for t in declared.tables if t in sort_of and sort_of[t] in in_plans)


def _unused_declarations(
    declared: Declarations, live: list[IndexedRule], filled: frozenset[str]
) -> list[tuple[int, Form]]:
    """Declarations no live rule, fact or command names, and no kept declaration needs as its sort: each
    table egglog holds costs on every push, pop and command."""
    named = set(filled) | declared.commanded
    for rule in live:
        named.update(rule.names)
    # (and the tables egglog holds the packed ones in)
    named.update({stored.table for rel, stored in packed_relations().items() if rel in named})
    keep: set[str] = set()
    todo = [declared.sort_of(n) for n in named if declared.sort_of(n) in declared.decls]
    while todo:
        name = todo.pop()
        if name not in keep:
            keep.add(name)
            todo.extend(
                declared.sort_of(n) for n in declared.decls[name][2] if declared.sort_of(n) in declared.decls
            )
    return [(fi, f) for name, (fi, f, _) in declared.decls.items() if name not in keep]


def all_rules(files: Sequence[RuleFile]) -> Relevance:
    """Every rule kept (an e-graph that must answer for any facts, e.g. one a user builds by hand)."""
    return Relevance(tuple(files), None, -1, 0)
