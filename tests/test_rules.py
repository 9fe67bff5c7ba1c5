"""The rule files: their self-checks, loading errors, user files and the schedule (issue: the egglog engine)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import egglog.bindings as eb
import pytest

import pypto_egg.language as pl
from pypto_egg import passes
from pypto_egg.egraph import (
    FlattenEGraph,
    Limits,
    parse_schedule,
    read_rule_files,
    rules_dir,
    shipped_rule_files,
)
from pypto_egg.egraph.decisions import _carried_kinds, _rule_index
from pypto_egg.egraph.engine import with_packed_tables
from pypto_egg.egraph.rule_index import rule_index
from pypto_egg.egraph.rules import _form_texts, load_rule_file, run_text
from pypto_egg.egraph.sexp import forms
from pypto_egg.egraph.shipped import SELF_CHECKS
from pypto_egg.egraph.words import plan_words
from pypto_egg.errors import RuleError, ScheduleLimitError
from pypto_egg.extract.lower_matmul import MatmulLowerer
from pypto_egg.extract.term import Term
from pypto_egg.ir import python_print

from helpers import one_op_kernel

SEED = one_op_kernel("pl.tile.muls(t, 1.0)")

CHECKED = sorted(p.name for p in rules_dir().glob("*.egg") if SELF_CHECKS in p.read_text())


def test_every_concern_has_its_own_file_and_rules_carry_comments():
    names = {p.name for p in rules_dir().glob("*.egg")}
    assert {"arith.egg", "shape.egg", "offsets.egg", "contiguity.egg", "load.egg", "store.egg", "alloc.egg",
            "assemble.egg", "reshape.egg", "transpose.egg", "generic.egg", "schedule.egg"} <= names  # fmt: skip
    for path in rules_dir().glob("*.egg"):
        lines = path.read_text().partition(SELF_CHECKS)[0].splitlines()
        for i, line in enumerate(lines):
            if line.startswith(("(rule ", "(rewrite ")):
                # a rule sits under a comment, or in a block of rules that one comment introduces
                j = i - 1
                while j >= 0 and (
                    lines[j].startswith(("(rule ", "(rewrite ", " ")) and not lines[j].startswith(";;")
                ):
                    j -= 1
                assert j >= 0 and lines[j].strip().startswith(";;"), f"{path.name}:{i + 1} has no comment"


def test_every_rule_file_with_rules_checks_itself():
    """The files without self-checks are the ones with no rule to check: declarations, includes, the schedule."""
    for path in rules_dir().glob("*.egg"):
        has_rules = any(line.startswith(("(rule ", "(rewrite ")) for line in path.read_text().splitlines())
        assert (path.name in CHECKED) == has_rules, path.name
    assert sorted(set(p.name for p in rules_dir().glob("*.egg")) - set(CHECKED)) == [
        "flatten.egg",
        "rulesets.egg",
        "schedule.egg",
        "sorts.egg",
    ]


def test_plain_egglog_runs_the_rules_as_written(monkeypatch):
    """rules/flatten.egg, then rules/schedule.egg, in plain egglog: its includes resolved from the working
    directory (egglog's own way), every file's self-checks run where the file is included, each between push
    and pop, and the schedule runs on what they leave: the files are the pass as written, nothing rewritten."""
    monkeypatch.chdir(rules_dir())
    eg = eb.EGraph()
    for name in ("flatten.egg", "schedule.egg"):
        eg.run_program(*eg.parse_program(Path(name).read_text(), filename=name))
    # the checks left nothing behind: the statement ids they used have no plan
    assert eg.run_program(*eg.parse_program("(fail (check (Chose 1 p)))")) is not None


def test_plain_egglog_reports_a_failing_self_check(monkeypatch, tmp_path):
    """A self-check that does not hold stops the plain run with egglog's error, naming the check."""
    for rf in rules_dir().glob("*.egg"):
        (tmp_path / rf.name).write_text(rf.read_text())
    shape = tmp_path / "shape.egg"
    shape.write_text(shape.read_text().replace("(check (= (Len $s3) 3))", "(check (= (Len $s3) 4))"))
    monkeypatch.chdir(tmp_path)
    eg = eb.EGraph()
    with pytest.raises(eb.EggSmolError, match=r"Len \$s3"):
        eg.run_program(*eg.parse_program((tmp_path / "flatten.egg").read_text(), filename="flatten.egg"))


@pytest.mark.parametrize("name", CHECKED)
def test_rule_file_self_checks(name):
    """Each file's checks run on a fresh e-graph with every shipped rule loaded as the accelerated runner loads them
    (its packed tables declared, each packed relation's atoms rewritten)."""
    eg = eb.EGraph()
    shipped = with_packed_tables(shipped_rule_files())
    own = [] if any(rf.name == name for rf in shipped) else read_rule_files(rules_dir() / name)
    for rf in [*shipped, *own]:  # a file flatten.egg does not include (narrow.egg) brings its own rules
        load_rule_file(eg, rf)
    checks = (rules_dir() / name).read_text().partition(SELF_CHECKS)[2]
    run_text(eg, checks, name)


def test_schedule_is_read_from_the_rules_folder():
    stages = parse_schedule((rules_dir() / "schedule.egg").read_text())
    assert stages[0].rulesets == ("build",)
    assert "store" in stages[-2].rulesets and "" in stages[-2].rulesets
    # the plans of every statement are ordered once every decision is in
    assert stages[-1].rulesets == ("rank",)


def test_malformed_rule_file_names_file_line_and_egglog_message(tmp_path):
    bad = tmp_path / "bad.egg"
    bad.write_text(";; a comment\n\n(rule ((Nope x)) ((Chose 0 (Keep))))\n")
    with pytest.raises(RuleError) as info:
        FlattenEGraph(pl.parse(SEED), "main", extra_rules=[bad])
    text = str(info.value)
    assert text.startswith(f"{bad}:3:") and "Unbound function Nope" in text


def test_syntax_error_in_rule_file(tmp_path):
    bad = tmp_path / "syntax.egg"
    bad.write_text("(rule ((Keep)) \n")
    with pytest.raises(RuleError, match=r"syntax.egg:1:1: this form is never closed"):
        FlattenEGraph(pl.parse(SEED), "main", extra_rules=[bad])
    bad.write_text("(rule ((Keep)) ( ) ( ) ( ))\n")
    with pytest.raises(RuleError, match=r"syntax.egg:\d+:\d+: egglog rejected the rules"):
        FlattenEGraph(pl.parse(SEED), "main", extra_rules=[bad])


def test_missing_include_is_an_error_not_a_panic(tmp_path):
    entry = tmp_path / "entry.egg"
    entry.write_text('(include "missing.egg")\n')
    with pytest.raises(RuleError, match=r"missing.egg does not exist \(included from .*entry.egg\)"):
        FlattenEGraph(pl.parse(SEED), "main", extra_rules=[entry])


def test_includes_resolve_relative_to_the_including_file(tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "inner.egg").write_text(
        ";; muls by one forwards its operand\n"
        '(rule ((GenericReq s "tile.muls" (OCons (OVar x) (OCons (OFloat 1.0) (ONil))) sh)) ((Chose s (Forward x))))\n'
    )
    (tmp_path / "outer.egg").write_text('(include "sub/inner.egg")\n')
    out = passes.flatten_tile_nd_to_2d(extra_rules=[tmp_path / "outer.egg"])(pl.parse(SEED))
    assert [s.value.op for s in out.functions[0].body[:-1]] == ["tile.load", "tile.store"]


def test_user_rules_see_a_function_with_nothing_to_flatten(tmp_path):
    """A 2-D kernel skips the e-graph only when no user rule could act on it."""
    rules = tmp_path / "forward.egg"
    rules.write_text(
        ";; muls by one forwards its operand\n"
        '(rule ((GenericReq s "tile.muls" (OCons (OVar x) (OCons (OFloat 1.0) (ONil))) sh)) ((Chose s (Forward x))))\n'
    )
    flat = SEED.replace("[2, 3, 4]", "[6, 4]").replace("[0, 0, 0]", "[0, 0]")
    plain = passes.flatten_tile_nd_to_2d()(pl.parse(flat))
    assert "tile.muls" in python_print(plain)
    out = passes.flatten_tile_nd_to_2d(extra_rules=[rules])(pl.parse(flat))
    assert [s.value.op for s in out.functions[0].body[:-1]] == ["tile.load", "tile.store"]


def test_a_rule_that_never_saturates_hits_the_iteration_limit(tmp_path):
    runaway = tmp_path / "runaway.egg"
    runaway.write_text(";; grows forever\n(rule ((= d (DC a)) (< a 1000000)) ((DC (+ a 1))))\n")
    eg = FlattenEGraph(pl.parse(SEED), "main", extra_rules=[runaway], limits=Limits(max_iterations=25))
    with pytest.raises(ScheduleLimitError, match=r"iteration limit \(25\)"):
        eg.saturate()


def test_a_runaway_rule_hits_the_enode_limit(tmp_path):
    runaway = tmp_path / "runaway.egg"
    runaway.write_text(
        ";; grows forever\n(rule ((= d (DC a)) (< a 1000000)) ((DC (+ a 1)) (DC (+ a 100000))))\n"
    )
    eg = FlattenEGraph(pl.parse(SEED), "main", extra_rules=[runaway], limits=Limits(max_enodes=300))
    with pytest.raises(ScheduleLimitError, match=r"e-node limit \(300"):
        eg.saturate()


def test_a_runaway_rule_hits_the_time_limit(tmp_path):
    runaway = tmp_path / "runaway.egg"
    runaway.write_text(";; grows forever\n(rule ((= d (DC a)) (< a 100000000)) ((DC (+ a 1))))\n")
    # the other limits out of reach, so only time can stop it, however fast the machine
    limits = Limits(timeout_s=0.2, max_iterations=10**12, max_enodes=10**12)
    eg = FlattenEGraph(pl.parse(SEED), "main", extra_rules=[runaway], limits=limits)
    with pytest.raises(ScheduleLimitError, match=r"time limit \(0.2 s\)"):
        eg.saturate()


def test_the_shipped_rules_rerun_on_what_a_user_rule_adds(tmp_path):
    # the final stage runs the shipped decisions and the user's rules (the default ruleset) in turn until
    # neither adds anything: a term a user rule builds is normalised by the shipped arithmetic
    user = tmp_path / "user.egg"
    user.write_text(
        ";; a user rule that builds a dimension term\n(rule ((GenericReq s op args sh)) ((DAdd (DC 3) (DC 4))))\n"
    )
    eg = FlattenEGraph(pl.parse(SEED), "main", extra_rules=[user])
    eg.saturate()
    assert eg.report.rules_fired.get("fold-add", 0) >= 1
    view = eg.view()
    sums = [n.eclass for ns in view.classes.values() for n in ns if n.op == "DAdd"]
    sevens = [n.eclass for ns in view.classes.values() for n in ns if n.op == "DC" and n.args == (7,)]
    assert sums and sums == sevens
    eg.close()


ROOT = Path(__file__).resolve().parents[1]


def _plan_constructors() -> dict[str, list[str]]:
    """The Plan datatype of rules/sorts.egg, as the rule index reads it: each constructor and its argument sorts."""
    decls = rule_index(tuple(shipped_rule_files())).declarations.decls
    return {
        name: [str(a) for a in form.tree[2]]
        for name, (_, form, _) in decls.items()
        if form.tree[0] == "constructor" and form.tree[3] == "Plan"
    }


def test_the_rule_files_table_of_docs_rules_md_is_the_index():
    """docs/rules.md lists every rule file with the rulesets its rules run in, as the rule index reads them."""
    table = {
        m[0]: set(re.findall(r"`([\w-]+)`", m[1]))
        for m in re.findall(r"^\| `(\w+\.egg)` \| ([^|]*) \|", (ROOT / "docs" / "rules.md").read_text(), re.M)
    }
    files = {rf.name for rf in shipped_rule_files()} | {"narrow.egg"}
    assert set(table) >= files, files - set(table)
    for name in files:
        own = [rf for rf in read_rule_files(rules_dir() / name) if rf.name == name]
        rulesets = {r.ruleset for r in rule_index(tuple(own)).rules if r.ruleset}
        assert rulesets <= table[name], (name, rulesets - table[name])


def test_every_plan_is_lowered_worded_and_documented():
    """A plan is declared once (rules/sorts.egg); the lowering, explain's words and docs/rules.md follow it."""
    plans = _plan_constructors()
    assert len(plans) >= 20
    assert set(MatmulLowerer.HANDLERS) == set(plans)
    sample = {"Dims": Term("DNil", ()), "i64": 1, "String": "fast", "Plan": Term("Keep", ())}
    for name, sorts in plans.items():
        term = Term(name, tuple(sample[s] for s in sorts))
        assert plan_words(term) != str(term), f"explain has no words for {name}"
    documented = set(
        re.findall(r"^\| `\((\w+)|/ `\((\w+)", (ROOT / "docs" / "rules.md").read_text(), re.MULTILINE)
    )
    assert {n for pair in documented for n in pair if n} == set(plans)


def test_the_loader_splits_the_shipped_files_into_the_forms_the_relevance_reader_sees():
    """The loader's quick split (form texts only) and relevance's reader (form trees) must agree on every file."""
    for rf in shipped_rule_files():
        assert _form_texts(rf.text) == [rf.text[f.start : f.end] for f in forms(rf.text)], rf.name
    assert _form_texts('(a ";)" (b)) ; (c\n(d)') == ['(a ";)" (b))', "(d)"]


def test_explain_carries_a_request_kind_through_the_rows_joined_from_it():
    """A decision that reads a row joined from a request (store.egg's `OwnWindow`, from `StoreReq`) decides that
    kind of statement, so explain lists it among a store's guards; a relation written from two kinds of request
    (`GivenWindow`: `StoreReq` and `StoreGivenReq`) stands for neither (B-056)."""
    rules = rule_index(tuple(shipped_rule_files())).rules
    carried = _carried_kinds(rules)
    assert carried["OwnWindow"] == {"StoreReq"}
    assert "GivenWindow" not in carried and "Chose" not in carried
    kinds = {r.ref.name: r.kinds for r in _rule_index(tuple(shipped_rule_files()))}
    for name in ("store-2d-keep", "store-aligned-window", "store-aligned-window-same-rank",
                 "store-tile-rank-exceeds-tensor", "store-collapsed-start"):  # fmt: skip
        assert "StoreReq" in kinds[name], name
    # a rule on one kind of batched matmul is not a guard of the other's (BmmReq's kind: 0 plain, 1 accumulating)
    variants = {r.ref.name: r.variants for r in _rule_index(tuple(shipped_rule_files()))}
    assert variants["bmm-acc-dynamic"] == {"1"} and variants["bmm-fast-path"] == {"0"}
    assert variants["bmm-batch-mismatch"] == frozenset()


def test_a_rule_file_pickled_into_another_process_hashes_as_that_process_hashes_it():
    """A rule file keeps its hash (caches keyed by the files look it up every program); a copy made by pickling
    works it out again, since strings hash differently in each process."""
    import pickle

    from pypto_egg.egraph.rules import shipped_rule_files

    rf = shipped_rule_files()[0]
    check = "import pickle, sys; r = pickle.loads(sys.stdin.buffer.read()); print(hash(r) == hash((r.path, r.text)))"
    run = subprocess.run(
        [sys.executable, "-c", check], input=pickle.dumps(rf), capture_output=True, timeout=120
    )
    assert run.stdout.split() == [b"True"], run.stderr[-2000:]


def test_the_fields_table_of_docs_rules_md_is_made_from_the_declarations():
    """docs/rules.md lists every declared field as rules/schema.py reads the declarations; each declaration's
    fields match its columns."""
    from pypto_egg.rules.schema import fields_table, schema

    text = (ROOT / "docs" / "rules.md").read_text()
    start = text.index("<!-- fields: generated")
    table = text[text.index("\n", start) + 1 : text.index("<!-- /fields -->")]
    assert table == fields_table()
    for d in schema().values():
        assert d.fields is None or len(d.fields) == len(d.sorts), f"{d.name} ({d.file}:{d.line})"
