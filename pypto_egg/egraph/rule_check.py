"""A user's rule that never matched in a run, and why: the first atom of its query that nothing in the e-graph
satisfies. A misspelt op name (`"tile.mul"`) or relation matches nothing and changes nothing, silently; this
says so, with the rule's name, its place and the atom."""

from __future__ import annotations

import warnings
from typing import Any

from ..errors import UnmatchedRuleWarning
from ..extract.graph import EGraphView
from ..rules import schema
from .report import RunReport
from .rule_index import IndexedRule, SExp, rule_index
from .rules import RuleFile
from .shipped import is_shipped


def warn_unmatched(files: list[RuleFile], report: RunReport, view: EGraphView) -> None:
    """Add a warning to the report, and raise a `UnmatchedRuleWarning`, for each of a user's rules that matched
    nothing in the run."""
    for text in unmatched_rule_warnings(files, report, view):
        report.warnings.append(text)
        warnings.warn(text, UnmatchedRuleWarning, stacklevel=3)


def unmatched_rule_warnings(files: list[RuleFile], report: RunReport, view: EGraphView) -> list[str]:
    """A warning for each rule of a user's file that matched nothing in the run."""
    index = rule_index(tuple(files))
    tables = index.declarations.tables
    fired = report.rules_fired
    out = []
    for rule in index.rules:
        if is_shipped(rule.path) or fired.get(rule.name, 0):
            continue
        reason = _why_not(rule, tables, view)
        place = f"{rule.path.name}:{rule.line}"
        named = rule.name if rule.name == place else f"{rule.name} ({place})"
        out.append(f"rule {named} never matched in this run: {reason}")
    return out


def _why_not(rule: IndexedRule, tables: frozenset[str], view: EGraphView) -> str:
    query = rule.form.tree[1] if rule.form.tree[0] == "rule" else [rule.form.tree[1]]
    atoms = [a for a in _atoms(query) if a[0] in tables]
    ops = {n.op for nodes in view.classes.values() for n in nodes}
    for atom in atoms:
        name = atom[0]
        rows = view.relations.get(name)
        if not rows and name not in ops:
            return f"its query reads {name}, which holds nothing in this run"
        literals = {i: _literal(a) for i, a in enumerate(atom[1:]) if _literal(a) is not None}
        for i, value in literals.items():
            if rows and not any(r[i] == value for r in rows):
                seen = sorted({str(r[i]) for r in rows})[:6]
                return f"no {name} row has {atom[i + 1]} as its {_field(name, i)} (this run's: {', '.join(seen)})"
        if not rows and literals:
            nodes = [n for nodes in view.classes.values() for n in nodes if n.op == name]
            if not any(all(n.args[i] == v for i, v in literals.items() if i < len(n.args)) for n in nodes):
                return f"no {name} term has {' '.join(str(a) for a in atom[1:] if _literal(a) is not None)}"
    return "each atom of its query has rows, but never together"


def _atoms(tree: SExp) -> list[list[Any]]:
    """The atoms of a query, nested terms included, outermost first (an equality's sides are its atoms)."""
    out: list[list[Any]] = []
    items = tree if isinstance(tree, list) else []
    for t in items:
        if isinstance(t, list) and t and isinstance(t[0], str):
            if t[0] != "=":
                out.append(t)
            out += _atoms(t[1:])
    return out


def _literal(a: Any) -> Any:
    """A query argument's value when it is a literal (a string, an integer, a float), else None."""
    if not isinstance(a, str):
        return None
    if a.startswith('"') and a.endswith('"'):
        return a[1:-1]
    for kind in (int, float):
        try:
            return kind(a)
        except ValueError:
            pass
    return None


def _field(name: str, i: int) -> str:
    d = schema.schema().get(name)
    return d.fields[i] if d is not None and d.fields is not None and i < len(d.fields) else f"column {i + 1}"
