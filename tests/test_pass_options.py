"""The pass's options that only make it cheaper never change an answer: loading only the rules a program's facts
could fire (`prune_rules`, egraph/relevance.py), and one request for the statements that ask the same question
(`share_requests`, egraph/shared_requests.py). Each is turned off against the same programs: the corpus, the
examples in both strategies, and generated programs, whose outputs the pass's `validate` interprets before and
after."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings

import pypto_egg.language as pl
from pypto_egg import ir
from pypto_egg.passes.flatten import FlattenTileNdTo2D

from corpus import PROGRAMS
from test_flatten_hypothesis import batch_matmul_programs, programs

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
OPTIONS = ["prune_rules", "share_requests"]


def outcome(program: ir.Program, option: str, on: bool, strategy: str = "reference") -> ir.Program | str:
    """The pass's answer with `option` on or off (interpreted before and after on random inputs: `validate`), or
    its error."""
    try:
        return FlattenTileNdTo2D(strategy=strategy, validate=True, **{option: on})(program)
    except Exception as e:
        return f"{type(e).__name__}: {e}"


def assert_same_with_and_without(program: ir.Program, option: str, strategy: str = "reference") -> None:
    with_it, without = outcome(program, option, True, strategy), outcome(program, option, False, strategy)
    if isinstance(with_it, str) or isinstance(without, str):
        assert with_it == without
    else:
        ir.assert_structural_equal(with_it, without)


@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_corpus_program_gets_the_same_answer_with_the_option_off(name, option):
    try:
        program = pl.parse(PROGRAMS[name])
    except Exception:  # the corpus also holds programs the reader rejects
        return
    assert_same_with_and_without(program, option)


@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.py")), ids=lambda p: p.stem)
@pytest.mark.parametrize("strategy", ["reference", "optimal"])
def test_every_example_gets_the_same_answer_with_the_option_off(path, strategy, option):
    for program in pl.parse_all(path.read_text()):
        assert_same_with_and_without(program, option, strategy)


@pytest.mark.parametrize("option", OPTIONS)
@settings(max_examples=40, deadline=None)
@given(case=programs())
def test_generated_programs_get_the_same_answer_with_the_option_off(case, option):
    assert_same_with_and_without(case[0], option)


@pytest.mark.parametrize("option", OPTIONS)
@settings(max_examples=30, deadline=None)
@given(before=batch_matmul_programs())
def test_generated_batched_matmuls_get_the_same_answer_with_the_option_off(before, option):
    assert_same_with_and_without(before, option)
    assert_same_with_and_without(before, option, "optimal")
