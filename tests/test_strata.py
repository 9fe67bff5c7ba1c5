"""The order a stage's rules run in (egraph/accel/strata.py): each rule once its inputs are complete, and only rules
that feed each other iterate together; the steps reach the stage's fixpoint."""

from __future__ import annotations

from pathlib import Path

import egglog.bindings as eb
import pytest

import pypto_egg.language as pl
from pypto_egg import passes
from pypto_egg.egraph.accel import strata
from pypto_egg.egraph.rule_index import parse_schedule, rule_index
from pypto_egg.egraph.rules import RuleFile, schedule_text, shipped_rule_files
from pypto_egg.errors import InternalError

from helpers import check_meaning, one_op_kernel

DECLS = """
(sort D)
(constructor C (i64) D)
(constructor Mul (D D) D)
(constructor Head (D) D)
(relation A (i64))
(relation B (i64))
(relation E (i64))
(relation Val (D i64))
(relation Twice (D))
"""


def flows_of(rules: str) -> dict[str, strata.Flow]:
    return strata.flows((RuleFile(Path("/tmp/synthetic.egg"), DECLS + rules),))


def test_a_chain_runs_each_rule_once_in_the_order_of_its_flow():
    rules = """
(rule ((B x)) ((E x)) :ruleset s :name "b-to-e")
(rule ((A x)) ((B x)) :ruleset s :name "a-to-b")
"""
    steps = strata.steps(flows_of(rules), ["b-to-e", "a-to-b"])
    assert [(s.rules, s.once) for s in steps] == [(("a-to-b",), True), (("b-to-e",), True)]


def test_a_walk_iterates_on_its_own_and_an_independent_rule_of_its_layer_runs_once():
    """Neither rule feeds the other, so they share a layer; the walk feeds itself and repeats, and the other rule
    is not run again with each of its iterations."""
    rules = """
(rule ((A x) (< x 10)) ((A (+ x 1))) :ruleset s :name "count-up")
(rule ((B x)) ((E x)) :ruleset s :name "b-to-e")
"""
    steps = strata.steps(flows_of(rules), ["count-up", "b-to-e"])
    assert [(s.rules, s.once) for s in steps] == [(("b-to-e",), True), (("count-up",), False)]


def test_the_split_layer_reaches_the_fixpoint_of_the_stage_run_as_one_ruleset() -> None:
    """Run as its steps (each rule in a ruleset of its own, a step their combination, once or to its fixpoint),
    the layer holds what the two rules give run together: the walk's ten iterations, and the once-run rule's row."""
    rules = {
        "count-up": '(rule ((A x) (< x 10)) ((A (+ x 1))) :ruleset own__count-up :name "count-up")',
        "b-to-e": '(rule ((B x)) ((E x)) :ruleset own__b-to-e :name "b-to-e")',
    }
    flows = flows_of("\n".join(r.replace(":ruleset own__" + n, ":ruleset s") for n, r in rules.items()))
    steps = strata.steps(flows, list(rules))
    egraph = eb.EGraph()
    text = [DECLS, *(f"(ruleset own__{n})" for n in rules), *rules.values(), "(A 0)", "(B 7)"]
    for i, step in enumerate(steps):
        text.append(f"(unstable-combined-ruleset step{i} {' '.join('own__' + n for n in step.rules)})")
        text.append(f"(run step{i} 1)" if step.once else f"(run-schedule (saturate (run step{i})))")
    egraph.run_program(*egraph.parse_program("\n".join(text)))
    egraph.run_program(*egraph.parse_program("(check (A 10) (E 7))"))
    with pytest.raises(eb.EggSmolError):
        egraph.run_program(*egraph.parse_program("(check (A 11))"))


def test_a_rule_that_joins_values_of_a_sort_waits_for_the_rewrites_that_merge_them():
    """`fold` unions D classes; `same-twice` joins two D values (nested terms), so a union can give it a match it
    had not: it runs after the fold. `tag` matches a single term without a join, so unions give it nothing new."""
    rules = """
(rewrite (Mul (C a) (C b)) (C (* a b)) :ruleset s :name "fold")
(rule ((Val (Mul x y) n) (= x y)) ((Twice x)) :ruleset s :name "same-twice")
(rule ((Val d n)) ((A n)) :ruleset s :name "tag")
"""
    flows = flows_of(rules)
    assert flows["fold"].unions >= {"D"} and "D" in flows["same-twice"].notices
    assert "D" not in flows["tag"].notices
    steps = strata.steps(flows, ["same-twice", "tag", "fold"])
    order = [r for s in steps for r in s.rules]
    assert order.index("fold") < order.index("same-twice")


def test_a_function_keyed_by_a_sort_notices_its_unions():
    """Merging two keys merges their values: a rule reading such a function must wait for the unions too."""
    rules = """
(function Size (D) i64 :merge (max old new))
(rule ((= n (Size d))) ((A n)) :ruleset s :name "read-size")
"""
    assert "D" in flows_of(rules)["read-size"].notices


def test_every_shipped_stage_is_planned_and_most_steps_run_once():
    files = tuple(shipped_rule_files())
    plan = strata.stage_plan(files, parse_schedule(schedule_text()))
    index = rule_index(files)
    planned = {r for steps in plan.stages for s in steps for r in s.rules}
    assert planned == {r.name for r in index.rules if r.ruleset}  # (the normalising rules in two stages)
    assert (
        sum(s.once for steps in plan.stages for s in steps) > len([s for st in plan.stages for s in st]) / 2
    )
    assert all(d.startswith(f"(unstable-combined-ruleset {n} ") for n, d in plan.declarations.items())


SEED = one_op_kernel("pl.tile.exp(t)")


def test_the_suite_checks_each_stage_reaches_its_fixpoint_and_the_check_finds_a_short_plan(monkeypatch):
    """tests/conftest.py turns the check on (check_schedule=True): after each stage's steps, the stage as one
    ruleset runs once more and must change nothing. A plan that runs an iterating step only once is caught (a
    dynamic valid shape's merge walks its list, an iteration a dim)."""
    program = pl.parse(SEED)
    check_meaning(program, passes.flatten_tile_nd_to_2d()(program))
    walked = (
        SEED.replace("pl.FP32]]) ->", "pl.FP32]], n: pl.Scalar[pl.INDEX]) ->")
        .replace("[2, 3, 4])\n", "[2, 3, 4], valid_shapes=[2, n, 4])\n")
        .replace("[2, 3, 4]", "[2, 5, 4]")
    )
    assert "valid_shapes=[2, n, 4]" in walked
    real = strata.steps

    def once_only(flows: dict[str, strata.Flow], rules: list[str]) -> list[strata.Step]:
        return [strata.Step(s.rules, True) for s in real(flows, rules)]

    monkeypatch.setattr(strata, "steps", once_only)
    strata.stage_plan.cache_clear()
    try:
        with pytest.raises(InternalError, match="stopped short of its fixpoint"):
            passes.flatten_tile_nd_to_2d()(pl.parse(walked))
    finally:
        strata.stage_plan.cache_clear()


def test_a_term_whose_class_another_atom_binds_is_no_read_of_its_table():
    """A new e-node has a new e-class, which rows of `Val` cannot hold unless `Val` itself changes (a read) or a
    union merges them (noticed): so `split` reads Val, not Mul; a rewrite rooted at Mul reads Mul."""
    rules = """
(rule ((Val d n) (= d (Mul x y))) ((Twice x)) :ruleset s :name "split")
(rewrite (Mul (C a) (C b)) (C (* a b)) :ruleset s :name "fold")
(rule ((= d (Mul x y))) ((Twice d)) :ruleset s :name "any-product")
"""
    flows = flows_of(rules)
    assert flows["split"].reads == {"Val"} and "D" in flows["split"].notices
    assert "Mul" in flows["fold"].reads
    assert flows["any-product"].reads == {"Mul"}
