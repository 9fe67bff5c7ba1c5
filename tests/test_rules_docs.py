"""The forms the documentation shows are the ones the rule files declare: every `(Name field ...)` written in the
docs has its declaration's arity (docs/rules.md: its field names too), and a rule written from each documented
form, and from each declaration of the fields table, is one egglog loads and runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import pypto_egg.language as pl
from pypto_egg import passes
from pypto_egg.egraph import FlattenEGraph
from pypto_egg.errors import RuleError
from pypto_egg.ir import python_print
from pypto_egg.rules.schema import Declared, schema

from helpers import one_op_kernel

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([*ROOT.glob("docs/*.md"), ROOT / "README.md"])
SEED = one_op_kernel("pl.tile.muls(t, 1.0)")
_FORM = re.compile(r"`(\([A-Z][\w-]*(?:[^`])*\))`")


def top_level(form: str) -> list[str]:
    """The head and arguments of one parenthesised form: nested forms and strings kept whole."""
    out: list[str] = []
    depth, token, quoted = 0, "", False
    for ch in form[1:-1]:
        if ch == '"':
            quoted = not quoted
        if not quoted and ch == "(":
            depth += 1
        elif not quoted and ch == ")":
            depth -= 1
        if not quoted and depth == 0 and ch.isspace():
            if token:
                out.append(token)
            token = ""
        else:
            token += ch
    return [*out, token] if token else out


def documented_forms() -> list[tuple[str, str, list[str]]]:
    """(doc, form, its tokens) of every backquoted form the docs show whose head the rule files declare."""
    found = []
    for doc in DOCS:
        for form in _FORM.findall(doc.read_text()):
            tokens = top_level(form)
            if tokens[0] in schema() and ".." not in form:
                found.append((doc.name, form, tokens))
    return found


def test_the_docs_show_forms():
    docs = {doc for doc, _, _ in documented_forms()}
    assert {"rules.md", "guide.md", "architecture.md"} <= docs
    assert len([f for d, f, _ in documented_forms() if d == "rules.md"]) >= 25


@pytest.mark.parametrize(
    ("doc", "form", "tokens"), documented_forms(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_a_documented_form_has_its_declarations_fields(doc, form, tokens):
    d = schema()[tokens[0]]
    assert len(tokens) - 1 == len(d.sorts), (
        f"{doc}: {form} has {len(tokens) - 1} fields; {d.file}:{d.line} declares {d.fields}"
    )
    if doc == "rules.md" and d.fields is not None:
        assert tuple(tokens[1:]) == d.fields, (
            f"{doc}: {form} names other fields than {d.file}:{d.line}: {d.fields}"
        )


def rule_reading(d: Declared) -> str:
    """A rule whose query is the declaration written out with its fields as variables: egglog checks its arity and
    every sort when it loads the rule."""
    args = " ".join(f"doc_{f}" for f in d.fields or [f"a{i}" for i in range(len(d.sorts))])
    atom = f"({d.name}{' ' + args if args else ''})"
    if d.kind == "relation":
        query = atom
    elif d.kind == "constructor" and d.output == "Plan":
        query = f"(Chose doc_stmt_of_plan {atom})"
    else:
        query = f"(= doc_value {atom})"
    return f';; {d.name} as the docs show it ({d.file}:{d.line})\n(rule ({query}) () :name "doc-{d.name}")\n'


@pytest.mark.filterwarnings("ignore::pypto_egg.errors.UnmatchedRuleWarning")  # most read nothing here
def test_a_rule_written_from_every_documented_form_loads_and_runs(tmp_path):
    names = {tokens[0] for _, _, tokens in documented_forms()}
    names |= {d.name for d in schema().values() if d.fields is not None}  # the fields table
    assert {"BatchMatmul", "Chose", "Fail", "LoadReq", "BmmReq"} <= names
    rules = tmp_path / "documented.egg"
    rules.write_text("".join(rule_reading(schema()[n]) for n in sorted(names)))
    plain = python_print(passes.flatten_tile_nd_to_2d()(pl.parse(SEED)))
    eg = FlattenEGraph(pl.parse(SEED), "main", extra_rules=[rules])
    eg.saturate()
    eg.close()
    assert python_print(passes.flatten_tile_nd_to_2d(extra_rules=[rules])(pl.parse(SEED))) == plain


def test_a_rule_written_from_a_form_with_fields_missing_is_refused(tmp_path):
    rules = tmp_path / "short.egg"
    rules.write_text("(rule ((Chose s (BatchMatmul mode))) ((Chose s (Keep))))\n")
    # refused though no statement asks for a batched matmul (the accelerated run would not load the rule at all)
    with pytest.raises(RuleError, match=r"short.egg:1:\d+: .*(rity|argument)"):
        FlattenEGraph(pl.parse(SEED), "main", extra_rules=[rules])
    with pytest.raises(RuleError, match=r"short.egg:1:\d+: .*(rity|argument)"):
        passes.flatten_tile_nd_to_2d(extra_rules=[rules])(pl.parse(SEED))
