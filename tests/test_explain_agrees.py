"""What `explain` reports is what the pass did (issue: one seam between meaning and speed): for every statement of
every example and of the sample's N-D programs (all 675 under PYPTO_EGG_HYPOTHESIS=long), the plan explain
reports is the plan the lowering took. The pass runs on the core runner here, so that every statement of every
InCore function goes through a plan (the accelerated one lowers a function with nothing to flatten itself)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import pypto_egg.language as pl
from pypto_egg import passes
from pypto_egg.errors import PassError
from pypto_egg.explain import explain_program
from pypto_egg.ir import Program

from pypto_ref import SAMPLE, requires_sample

ROOT = Path(__file__).resolve().parents[1]
LONG = os.environ.get("PYPTO_EGG_HYPOTHESIS") == "long"


def disagreements(program: Program) -> list[str]:
    flatten = passes.flatten_tile_nd_to_2d(backend="Ascend910B", runner="core")
    try:
        flatten(program)
    except PassError:
        return []  # nothing was lowered
    told = {
        (s.function, s.statement): s.term for s in explain_program(program, backend="Ascend910B").statements
    }
    done = {(fn, k): str(plan) for fn, plans in flatten.lowered.items() for k, plan in plans.items()}
    return [f"{program.name}.{fn} statement {k}: explain {told.get((fn, k))}, lowered {done.get((fn, k))}"
            for fn, k in sorted(set(told) | set(done)) if told.get((fn, k)) != done.get((fn, k))]  # fmt: skip


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.py")), ids=lambda p: p.name)
def test_explain_reports_the_plan_the_lowering_took_on_every_example(path):
    for program in pl.parse_all(path.read_text(), str(path)):
        assert not disagreements(program)


def test_a_store_the_pages_write_is_explained_as_theirs():
    """B-136: the consuming store of a fused batched matmul is explained as the pages' store, as it is lowered."""
    path = ROOT / "examples" / "batched_matmul.py"
    (store,) = (
        explain_program(pl.parse(path.read_text(), str(path)), backend="Ascend910B").only_line(28).statements
    )
    assert store.term.startswith("(StoreByPages ") and "one store per page" in store.plan
    assert store.rules[0].name == "bmm-fused-store-by-pages"


@requires_sample
def test_explain_reports_the_plan_the_lowering_took_on_the_sample():
    from test_core_runner import sample_nd

    paths = sorted((SAMPLE / "pre").glob("*.py")) if LONG else sample_nd()
    wrong = [d for path in paths for d in disagreements(pl.parse(path.read_text(), str(path)))]
    assert not wrong, "\n".join(wrong[:20])


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.py")), ids=lambda p: p.name)
def test_no_rule_is_said_both_to_hold_and_not_to_hold(path):
    """A rule that chose the plan, or held another plan of the statement, is never among its guards that did not
    hold."""
    for program in pl.parse_all(path.read_text(), str(path)):
        for s in explain_program(program, backend="Ascend910B").statements:
            held = {r.name for r in s.rules} | {r.name for a in s.alternatives for r in a.rules}
            assert not held & set(s.not_chosen_by), (s.line, held & set(s.not_chosen_by))
