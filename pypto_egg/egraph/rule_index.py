"""The one reading of egglog rule text: every rule of a set of rule files with its name, ruleset, file and line,
comment, behaviour numbers and the tables it reads and writes, beside the declarations and the schedule.

Relevance (which rules a program's facts can fire), explain (which rule chose a plan), the documentation's checks
and the engine's schedule all read the rules from here, so a rule means one thing to all of them. Includes are
expanded before (rules.py), as egglog itself would.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import RuleError
from .rules import RuleFile
from .sexp import Form, SExp, forms

DECLARES_TABLE = frozenset({"relation", "function", "constructor"})
RULE_FORMS = frozenset({"rule", "rewrite", "birewrite"})
_TAGS = re.compile(r"\b(?:B-\d{3}[a-z]?|D-\d{2}|R\d{1,2}W?|§[A-Z])\b")
_HEADER_LINES = 6  # a file's opening comment: the behaviours of a rule whose own comment names none


def symbols(tree: SExp) -> Iterable[str]:
    if isinstance(tree, str):
        yield tree
    else:
        for t in tree:
            yield from symbols(t)


def lists(tree: SExp) -> Iterable[list[SExp]]:
    """Every list of a form, the form itself first."""
    if isinstance(tree, list):
        yield tree
        for t in tree:
            yield from lists(t)


def keyword(tree: list[SExp], key: str) -> SExp | None:
    for i, t in enumerate(tree):
        if t == key and i + 1 < len(tree):
            return tree[i + 1]
    return None


@dataclass(frozen=True)
class Declarations:
    """What the rule files declare and what their top-level commands name."""

    decls: dict[str, tuple[int, Form, frozenset[str]]]  # table or datatype -> file, form, names it mentions
    variants: dict[str, str]  # a datatype's variant (a table) -> its datatype
    commanded: frozenset[str]  # names a top-level fact or command mentions

    @functools.cached_property
    def tables(self) -> frozenset[str]:
        return frozenset(n for n, (_, f, _) in self.decls.items() if f.tree[0] != "datatype") | set(
            self.variants
        )

    def sort_of(self, name: str) -> str:
        return self.variants.get(name, name)


@dataclass(frozen=True)
class IndexedRule:
    name: str  # its :name ("" when it has none)
    ruleset: str  # "" for the default ruleset
    file: int  # its file's place in the index
    path: Path
    line: int  # where the form starts in its file (1-based)
    form: Form
    comment: str  # the comment lines right above it
    tags: tuple[str, ...]  # the behaviours its comment names, else those of its file's opening comment
    directions: tuple[
        tuple[frozenset[str], frozenset[str]], ...
    ]  # (tables read, tables written), per direction

    @functools.cached_property
    def names(self) -> frozenset[str]:
        """Every symbol of the form."""
        return frozenset(symbols(self.form.tree))

    @functools.cached_property
    def reads(self) -> frozenset[str]:
        return frozenset().union(*(r for r, _ in self.directions))

    @functools.cached_property
    def writes(self) -> frozenset[str]:
        return frozenset().union(*(w for _, w in self.directions))


@dataclass(frozen=True)
class RuleIndex:
    files: tuple[RuleFile, ...]
    forms: tuple[tuple[Form, ...], ...]  # each file's top-level forms
    declarations: Declarations
    rules: tuple[IndexedRule, ...]  # in load order

    @functools.cached_property
    def written(self) -> frozenset[str]:
        """The tables some rule's actions write."""
        return frozenset().union(*(r.writes for r in self.rules))


@functools.lru_cache(maxsize=16)
def rule_index(files: tuple[RuleFile, ...]) -> RuleIndex:
    """The index of these rule files (ValueError where a file's parentheses do not balance)."""
    parsed = tuple(tuple(forms(rf.text)) for rf in files)
    declared = _declarations(parsed)
    tables = declared.tables
    rules: list[IndexedRule] = []
    for fi, (rf, file_forms) in enumerate(zip(files, parsed)):
        lines = rf.text.splitlines()  # padded: line numbers are the file's
        header = _header(rf.path)
        for f in file_forms:
            t = f.tree
            if not (isinstance(t, list) and t and t[0] in RULE_FORMS):
                continue
            line = rf.text.count("\n", 0, f.start)
            comment: list[str] = []
            j = line - 1
            while j >= 0 and lines[j].startswith(";;"):
                comment.insert(0, lines[j][2:].strip())
                j -= 1
            note = " ".join(comment)
            name, ruleset = keyword(t, ":name"), keyword(t, ":ruleset")
            rules.append(IndexedRule(
                name.strip('"') if isinstance(name, str) else "", ruleset if isinstance(ruleset, str) else "",
                fi, Path(rf.path), line + 1, f, note,
                tuple(dict.fromkeys(_TAGS.findall(note) or _TAGS.findall(header)[:3])),
                tuple(_directions(t, tables)),
            ))  # fmt: skip
    return RuleIndex(tuple(files), parsed, declared, tuple(rules))


@functools.cache
def _header(path: Path) -> str:
    p = Path(path)
    head = p.read_text().splitlines()[:_HEADER_LINES] if p.is_file() else []
    return " ".join(ln for ln in head if ln.startswith(";;"))


def _declarations(parsed: tuple[tuple[Form, ...], ...]) -> Declarations:
    decls: dict[str, tuple[int, Form, frozenset[str]]] = {}
    variants: dict[str, str] = {}
    commanded: set[str] = set()
    for fi, file_forms in enumerate(parsed):
        for f in file_forms:
            t = f.tree
            if not isinstance(t, list) or not t or not isinstance(t[0], str):
                continue
            if t[0] in (*DECLARES_TABLE, "datatype") and len(t) > 1 and isinstance(t[1], str):
                decls[t[1]] = (fi, f, frozenset(symbols(t[2:])))
                if t[0] == "datatype":
                    variants.update(
                        (v[0], t[1]) for v in t[2:] if isinstance(v, list) and v and isinstance(v[0], str)
                    )
            elif t[0] not in RULE_FORMS and t[0] not in ("sort", "ruleset"):
                commanded.update(symbols(t))
    return Declarations(decls, variants, frozenset(commanded))


def _directions(tree: list[SExp], tables: frozenset[str]) -> list[tuple[frozenset[str], frozenset[str]]]:
    """(tables the query names, tables the actions name) of a rule form, one pair per direction."""

    def named(*parts: SExp | None) -> frozenset[str]:
        return frozenset(s for p in parts if p is not None for s in symbols(p) if s in tables)

    head = tree[0]
    if head == "rule":
        return [(named(tree[1]), named(tree[2]))]
    when = keyword(tree, ":when")
    lhs, rhs = tree[1], tree[2]
    pairs = [(named(lhs, when), named(rhs))]
    if head == "birewrite":
        pairs.append((named(rhs, when), named(lhs)))
    return pairs


# ---------------------------------------------------------------- the schedule


@dataclass(frozen=True)
class Stage:
    rulesets: tuple[
        str, ...
    ]  # run in this order, repeatedly, until none changes the e-graph ("" is the default)


@functools.cache
def parse_schedule(text: str) -> tuple[Stage, ...]:
    """The stages of rules/schedule.egg: each `(saturate (run a) (run b) ..)` of its `run-schedule`."""
    try:
        trees = [f.tree for f in forms(text)]
    except ValueError as e:
        raise RuleError(f"rules/schedule.egg: {e}") from None
    stages: list[Stage] = []
    for tree in trees:
        if isinstance(tree, list) and tree and tree[0] == "run-schedule":
            for step in tree[1:]:
                if isinstance(step, list) and step and step[0] == "saturate":
                    runs = [r for r in step[1:] if isinstance(r, list) and r and r[0] == "run"]
                    stages.append(Stage(tuple(str(r[1]) if len(r) > 1 else "" for r in runs)))
    if not stages:
        raise RuleError("rules/schedule.egg has no (saturate (run ...)) stage")
    return tuple(stages)
