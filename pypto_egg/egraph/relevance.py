"""Which rules could ever fire on a program's facts, so the e-graph a program is pushed onto holds only those.

egglog copies every rule on `(push)` and frees it on `(pop)`: with all 322 shipped rules that copy costs more
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

from .rules import RuleFile

SExp = str | list["SExp"]

_DECLARES_TABLE = {"relation", "function", "constructor"}
_RULE_FORMS = {"rule", "rewrite", "birewrite"}


@dataclass(frozen=True)
class _Form:
    start: int  # offsets of the form in its file's text
    end: int
    tree: SExp


def _forms(text: str) -> list[_Form]:
    """The top-level s-expressions of egglog text, with their spans; strings are kept as one token."""
    out: list[_Form] = []
    stack: list[list[SExp]] = []
    start = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == ";":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if stack:
                stack[-1].append(text[i : j + 1])
            i = j + 1
            continue
        if c == "(":
            if not stack:
                start = i
            stack.append([])
        elif c == ")":
            if not stack:
                raise ValueError("unbalanced ')'")
            done = stack.pop()
            if stack:
                stack[-1].append(done)
            else:
                out.append(_Form(start, i + 1, done))
        elif not c.isspace():
            j = i
            while j < n and not text[j].isspace() and text[j] not in '();"':
                j += 1
            if stack:
                stack[-1].append(text[i:j])
            i = j
            continue
        i += 1
    if stack:
        raise ValueError("unbalanced '('")
    return out


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
    form: _Form
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


@functools.lru_cache(maxsize=64)
def relevant_rules(files: tuple[RuleFile, ...], filled: frozenset[str]) -> Relevance:
    """The rule files with every rule that can never fire on `filled` (the non-empty fact relations, plus
    whatever the host asserts itself) blanked out."""
    parsed: list[list[_Form]] = []
    for rf in files:
        try:
            parsed.append(_forms(rf.text))
        except ValueError:  # let egglog report the file's syntax; keep every rule of the set
            return all_rules(files)
    tables: set[str] = set()
    for forms in parsed:
        for f in forms:
            t = f.tree
            if isinstance(t, list) and t and t[0] in _DECLARES_TABLE and isinstance(t[1], str):
                tables.add(t[1])
            elif isinstance(t, list) and t and t[0] == "datatype":
                tables.update(v[0] for v in t[2:] if isinstance(v, list) and v and isinstance(v[0], str))
    rules: list[tuple[_Rule, list[tuple[frozenset[str], frozenset[str]]]]] = []
    populated = set(filled)
    for fi, forms in enumerate(parsed):
        for f in forms:
            t = f.tree
            if not isinstance(t, list) or not t:
                continue
            if t[0] in _RULE_FORMS:
                rs = _keyword(t, ":ruleset")
                rules.append((_Rule(fi, f, rs if isinstance(rs, str) else ""), _rule_directions(t, tables)))
            elif t[0] not in _DECLARES_TABLE and t[0] not in ("datatype", "sort", "ruleset"):
                populated.update(s for s in _symbols(t) if s in tables)  # a top-level fact or command
    live: set[int] = set()
    changed = True
    while changed:
        changed = False
        for i, (_, directions) in enumerate(rules):
            for needs, fills in directions:
                if needs <= populated and not fills <= populated:
                    populated |= fills
                    changed = True
                if needs <= populated and i not in live:
                    live.add(i)
                    changed = True
    dead = [rules[i][0] for i in range(len(rules)) if i not in live]
    blanks = [(r.file, r.form) for r in dead] + _unused_declarations(
        parsed, [rules[i][0] for i in live], filled
    )
    texts = [rf.text for rf in files]
    # blank from the end of each file backwards, so earlier spans stay valid
    for fi, form in sorted(blanks, key=lambda b: (b[0], -b[1].start)):
        text = texts[fi]
        span = text[form.start : form.end]
        texts[fi] = text[: form.start] + "\n" * span.count("\n") + text[form.end :]
    pruned = tuple(RuleFile(rf.path, text) for rf, text in zip(files, texts))
    return Relevance(
        pruned,
        frozenset(rules[i][0].ruleset for i in live),
        kept=len(live),
        dropped=len(rules) - len(live),
    )


def _unused_declarations(
    parsed: list[list[_Form]], live: list[_Rule], filled: frozenset[str]
) -> list[tuple[int, _Form]]:
    """Declarations no live rule, fact or command names, and no kept declaration needs as its sort: each
    table egglog holds costs on every push, pop and command."""
    decls: dict[str, tuple[int, _Form, frozenset[str]]] = {}  # table or sort -> where, names it mentions
    variants: dict[str, str] = {}  # a datatype's variant -> its sort
    named: set[str] = set(filled)
    for fi, forms in enumerate(parsed):
        for f in forms:
            t = f.tree
            if not isinstance(t, list) or not t or not isinstance(t[0], str):
                continue
            if t[0] in _DECLARES_TABLE and isinstance(t[1], str):
                decls[t[1]] = (fi, f, frozenset(_symbols(t[2:])))
            elif t[0] == "datatype" and isinstance(t[1], str):
                decls[t[1]] = (fi, f, frozenset(_symbols(t[2:])))
                variants.update(
                    (v[0], t[1]) for v in t[2:] if isinstance(v, list) and v and isinstance(v[0], str)
                )
            elif t[0] not in _RULE_FORMS and t[0] not in ("sort", "ruleset"):
                named.update(_symbols(t))  # a top-level fact or command
    for rule in live:
        named.update(_symbols(rule.form.tree))
    keep: set[str] = set()
    todo = [variants.get(n, n) for n in named if variants.get(n, n) in decls]
    while todo:
        name = todo.pop()
        if name not in keep:
            keep.add(name)
            todo.extend(variants.get(n, n) for n in decls[name][2] if variants.get(n, n) in decls)
    return [(fi, f) for name, (fi, f, _) in decls.items() if name not in keep]


def all_rules(files: Sequence[RuleFile]) -> Relevance:
    """Every rule kept (an e-graph that must answer for any facts, e.g. one a user builds by hand)."""
    return Relevance(tuple(files), None, -1, 0)
