"""Which rules could ever fire on a program's facts, so the e-graph a program is pushed onto holds only those.

egglog copies every rule on `(push)` and frees it on `(pop)`: with all 325 shipped rules that copy costs more
than the rest of a small program's run. A rule matches only when every table its query names holds a row, so a
rule whose query names a table nothing can fill is dead for that program. The tables that can hold rows are a
least fixpoint: the encoder's non-empty relations, the tables top-level commands fill, and the tables named in
the actions of every rule that is itself live. Over-approximating that set only keeps more rules, so the
analysis is conservative wherever it cannot tell (an unknown form keeps its rule).

The result prunes the rule text (a dead rule becomes blank lines, so egglog's line numbers stay the file's) and
names the rulesets left without a rule, whose stages need no run at all.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .rules import Form, RuleFile, SExp, forms

_DECLARES_TABLE = {"relation", "function", "constructor"}
_RULE_FORMS = {"rule", "rewrite", "birewrite"}


def _symbols(tree: SExp) -> Iterable[str]:
    if isinstance(tree, str):
        yield tree
    else:
        for t in tree:
            yield from _symbols(t)


def _keyword(tree: list[SExp], key: str) -> SExp | None:
    for i, t in enumerate(tree):
        if t == key and i + 1 < len(tree):
            return tree[i + 1]
    return None


@dataclass(frozen=True)
class _Rule:
    file: int
    form: Form
    ruleset: str  # "" for the default ruleset


def _rule_directions(tree: list[SExp], tables: set[str]) -> list[tuple[frozenset[str], frozenset[str]]]:
    """(tables the query names, tables the actions name) of a rule form, one pair per direction."""

    def named(*parts: SExp | None) -> frozenset[str]:
        return frozenset(s for p in parts if p is not None for s in _symbols(p) if s in tables)

    head = tree[0]
    if head == "rule":
        return [(named(tree[1]), named(tree[2]))]
    when = _keyword(tree, ":when")
    lhs, rhs = tree[1], tree[2]
    pairs = [(named(lhs, when), named(rhs))]
    if head == "birewrite":
        pairs.append((named(rhs, when), named(lhs)))
    return pairs


@dataclass(frozen=True)
class Relevance:
    """The rule files as a program with these facts needs them."""

    files: tuple[RuleFile, ...]
    live_rulesets: frozenset[str] | None  # rulesets keeping a rule ("" the default one); None: all of them
    kept: int  # rules kept (-1: every rule, uncounted)
    dropped: int

    def runs(self, ruleset: str) -> bool:
        """Whether running the ruleset could change anything."""
        return self.live_rulesets is None or ruleset in self.live_rulesets


@dataclass
class _Declarations:
    """What the rule files declare and what their top-level commands name."""

    decls: dict[str, tuple[int, Form, frozenset[str]]]  # table or datatype -> file, form, names it mentions
    variants: dict[str, str]  # a datatype's variant (a table) -> its datatype
    commanded: set[str]  # names a top-level fact or command mentions

    @property
    def tables(self) -> set[str]:
        return {n for n, (_, f, _) in self.decls.items() if f.tree[0] != "datatype"} | set(self.variants)

    def sort_of(self, name: str) -> str:
        return self.variants.get(name, name)


def _declarations(parsed: list[list[Form]]) -> _Declarations:
    out = _Declarations({}, {}, set())
    for fi, file_forms in enumerate(parsed):
        for f in file_forms:
            t = f.tree
            if not isinstance(t, list) or not t or not isinstance(t[0], str):
                continue
            if t[0] in (*_DECLARES_TABLE, "datatype") and len(t) > 1 and isinstance(t[1], str):
                out.decls[t[1]] = (fi, f, frozenset(_symbols(t[2:])))
                if t[0] == "datatype":
                    out.variants.update(
                        (v[0], t[1]) for v in t[2:] if isinstance(v, list) and v and isinstance(v[0], str)
                    )
            elif t[0] not in _RULE_FORMS and t[0] not in ("sort", "ruleset"):
                out.commanded.update(_symbols(t))
    return out


@functools.lru_cache(maxsize=64)
def relevant_rules(files: tuple[RuleFile, ...], filled: frozenset[str]) -> Relevance:
    """The rule files with every rule that can never fire on `filled` (the non-empty fact relations, plus
    whatever the host asserts itself) blanked out, and every declaration nothing left needs."""
    try:
        parsed = [forms(rf.text) for rf in files]
    except ValueError:  # let egglog report the file's syntax; keep every rule of the set
        return all_rules(files)
    declared = _declarations(parsed)
    tables = declared.tables
    rules: list[tuple[_Rule, list[tuple[frozenset[str], frozenset[str]]]]] = []
    for fi, file_forms in enumerate(parsed):
        for f in file_forms:
            t = f.tree
            if isinstance(t, list) and t and t[0] in _RULE_FORMS:
                rs = _keyword(t, ":ruleset")
                rules.append((_Rule(fi, f, rs if isinstance(rs, str) else ""), _rule_directions(t, tables)))
    # the least fixpoint: a rule is live once every table its query names can hold rows, and its actions
    # then fill the tables they name
    populated = set(filled) | (declared.commanded & tables)
    live: set[int] = set()
    changed = True
    while changed:
        changed = False
        for i, (_, directions) in enumerate(rules):
            for needs, fills in directions:
                if needs <= populated and (i not in live or not fills <= populated):
                    live.add(i)
                    populated |= fills
                    changed = True
    kept = [rules[i][0] for i in sorted(live)]
    blanks = [(r.file, r.form) for i, (r, _) in enumerate(rules) if i not in live]
    blanks += _unused_declarations(declared, kept, filled)
    texts = [rf.text for rf in files]
    # blank from the end of each file backwards, so earlier spans stay valid
    for fi, form in sorted(blanks, key=lambda b: (b[0], -b[1].start)):
        text = texts[fi]
        span = text[form.start : form.end]
        texts[fi] = text[: form.start] + "\n" * span.count("\n") + text[form.end :]
    return Relevance(
        tuple(RuleFile(rf.path, text) for rf, text in zip(files, texts)),
        frozenset(r.ruleset for r in kept),
        kept=len(kept),
        dropped=len(rules) - len(kept),
    )


def _unused_declarations(
    declared: _Declarations, live: list[_Rule], filled: frozenset[str]
) -> list[tuple[int, Form]]:
    """Declarations no live rule, fact or command names, and no kept declaration needs as its sort: each
    table egglog holds costs on every push, pop and command."""
    named = set(filled) | declared.commanded
    for rule in live:
        named.update(_symbols(rule.form.tree))
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
