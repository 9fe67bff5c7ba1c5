"""The core runner (egraph/core.py) is the pass as the rules state it; the accelerated engine must give its answer
byte for byte (issue: one seam between meaning and speed). The examples, the sample's N-D programs, generated
programs (all of them under PYPTO_EGG_HYPOTHESIS=long), the optimal strategy, a user's rules and a rejected
program each run through both."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from test_flatten_alloc_assemble_reshape import nd_assemble

import pypto_egg.language as pl
from pypto_egg import passes
from pypto_egg.errors import PassError, UserError
from pypto_egg.ir import Program, python_print

from helpers import one_op_kernel
from pypto_ref import SAMPLE, requires_sample
from test_flatten_hypothesis import batch_matmul_programs, programs

ROOT = Path(__file__).resolve().parents[1]
LONG = os.environ.get("PYPTO_EGG_HYPOTHESIS") == "long"


def answer(program: Program, runner: str, **options: object) -> str:
    """The pass's output as text, or its error's message."""
    try:
        return python_print(passes.flatten_tile_nd_to_2d(runner=runner, **options)(program))  # type: ignore[arg-type]
    except PassError as e:
        return f"PassError: {e}"


def assert_same_answer(program: Program, **options: object) -> str:
    core = answer(program, "core", **options)
    assert answer(program, "accelerated", **options) == core
    return core


EXAMPLES = [(path.name, p.name) for path in sorted((ROOT / "examples").glob("*.py"))
            for p in pl.parse_all(path.read_text(), str(path))]  # fmt: skip


@pytest.mark.parametrize(("file", "program"), EXAMPLES)
@pytest.mark.parametrize("backend", ["Ascend910B", None])
def test_every_example_flattens_the_same_under_both_runners(file, program, backend):
    path = ROOT / "examples" / file
    assert_same_answer(pl.parse(path.read_text(), str(path), program), backend=backend)


def test_the_optimal_strategy_settles_the_same_routes_under_both_runners():
    path = ROOT / "examples" / "batched_matmul.py"
    for program in pl.parse_all(path.read_text(), str(path)):
        assert_same_answer(program, backend="Ascend910B", strategy="optimal")


def test_a_users_rules_run_the_same_under_both_runners():
    program = pl.parse(one_op_kernel("pl.tile.muls(t, 1.0)"))
    out = assert_same_answer(program, extra_rules=[ROOT / "examples" / "my_rules.egg"])
    assert "tile.muls" not in out  # the user's rule forwarded the operand, under both


def test_a_rejected_program_is_rejected_with_the_same_words_under_both_runners():
    """D-07, a rule's Fail plan: the written region of an N-D assemble must be a contiguous row band."""
    out = assert_same_answer(nd_assemble("[0, 0, 0]", target="[2, 4, 16]", source="[2, 2, 16]"))
    assert out.startswith("PassError") and "contiguous row band" in out


def test_an_unknown_runner_is_a_user_error():
    with pytest.raises(UserError, match="unknown runner 'fast'; choose one of accelerated, core"):
        passes.flatten_tile_nd_to_2d(runner="fast")


@functools.cache
def sample_nd() -> list[Path]:
    """The sample's programs the pass changes (its N-D ones)."""
    if not (SAMPLE / "pre").is_dir():
        return []
    out = []
    for path in sorted((SAMPLE / "pre").glob("*.py")):
        program = pl.parse(path.read_text(), str(path))
        if answer(program, "accelerated", backend="Ascend910B") != python_print(program):
            out.append(path)
    return out


@requires_sample
def test_the_samples_nd_programs_flatten_the_same_under_both_runners():
    nd = sample_nd()
    assert len(nd) >= 25
    for path in nd:
        assert_same_answer(pl.parse(path.read_text(), str(path)), backend="Ascend910B")


@settings(max_examples=4000 if LONG else 25, deadline=None)
@given(programs())
def test_generated_kernels_flatten_the_same_under_both_runners(case):
    assert_same_answer(case[0], backend="Ascend910B")


@settings(max_examples=1000 if LONG else 15, deadline=None)
@given(batch_matmul_programs())
def test_generated_batched_matmuls_flatten_the_same_under_both_runners(before):
    assert_same_answer(before, backend="Ascend910B")
