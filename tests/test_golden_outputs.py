"""The printed output of the pass on every example, corpus and reference-form program, pinned byte for byte.

The pass's answers are checked against the reference elsewhere (test_dropin, test_pypto_*); these files hold
them still while the code is reshaped: a refactoring that changes one character of any output fails here.
Each file lists, program by program, the text the pass prints, or the message of the error it raises, for one
strategy on one backend. `PYPTO_EGG_UPDATE_GOLDEN=1 pytest tests/test_golden_outputs.py` rewrites them (a
change of output is then reviewed in the diff, like any other change of behaviour).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_examples import EXAMPLES, load

import pypto_egg.language as pl
from pypto_egg import passes
from pypto_egg.errors import UserError
from pypto_egg.ir import python_print
from pypto_egg.ir.stmt import Program

from corpus import PROGRAMS
from pypto_ref import requires_sample, sample_programs

GOLDEN = Path(__file__).resolve().parent / "golden" / "outputs"
FORMS = Path(__file__).resolve().parent / "programs" / "reference_forms.py"
RUNS = [("reference", None), ("reference", "Ascend910B"), ("optimal", "Ascend910B")]


def programs() -> Iterator[tuple[str, Program]]:
    for path in EXAMPLES:
        module = load(path)
        yield f"example {path.stem}", next(v for v in vars(module).values() if isinstance(v, Program))
    for name, text in PROGRAMS.items():
        yield f"corpus {name}", pl.parse(text)
    yield "reference_forms", pl.parse_file(FORMS)


def outputs(strategy: str, backend: str | None) -> str:
    flatten = passes.flatten_tile_nd_to_2d(backend=backend, strategy=strategy)
    parts = []
    for name, program in programs():
        try:
            text = python_print(flatten(program))
        except UserError as e:
            text = f"error {type(e).__name__}: {e}\n"
        parts.append(f"### {name}\n{text}")
    return "".join(parts)


@pytest.mark.parametrize(("strategy", "backend"), RUNS, ids=[f"{s}-{b or 'none'}" for s, b in RUNS])
def test_outputs_are_byte_identical_to_the_pinned_ones(strategy: str, backend: str | None) -> None:
    path = GOLDEN / f"{strategy}-{backend or 'none'}.txt"
    got = outputs(strategy, backend)
    if os.environ.get("PYPTO_EGG_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(got)
    want = path.read_text()
    assert got == want, f"the pass's output differs from {path.name}; diff it with PYPTO_EGG_UPDATE_GOLDEN=1"


def test_the_pinned_outputs_cover_every_program() -> None:
    names = [name for name, _ in programs()]
    text = (GOLDEN / "reference-none.txt").read_text()
    assert [line[4:] for line in text.splitlines() if line.startswith("### ")] == names


SAMPLE_RUNS = [("reference", "Ascend910B"), ("optimal", "Ascend910B")]


def _sample_outputs(strategy: str, names: list[str] | None) -> str:
    flatten = passes.flatten_tile_nd_to_2d(backend="Ascend910B", strategy=strategy)
    parts = []
    for path in sample_programs():
        if names is not None and path.stem not in names:
            continue
        program = pl.parse_file(path)
        try:
            text = python_print(flatten(program))
        except UserError as e:
            text = f"error {type(e).__name__}: {e}\n"
        if names is None and text == python_print(program):
            continue  # a program the pass leaves as it is: test_dropin holds those
        parts.append(f"### {path.stem}\n{text}")
    return "".join(parts)


@requires_sample
@pytest.mark.parametrize(("strategy", "backend"), SAMPLE_RUNS, ids=[s for s, _ in SAMPLE_RUNS])
def test_the_rewritten_sample_programs_are_byte_identical_to_the_pinned_ones(
    strategy: str, backend: str
) -> None:
    path = GOLDEN / f"sample-{strategy}-{backend}.txt"
    if os.environ.get("PYPTO_EGG_UPDATE_GOLDEN"):
        path.write_text(_sample_outputs(strategy, None))
    want = path.read_text()
    names = [line[4:] for line in want.splitlines() if line.startswith("### ")]
    assert _sample_outputs(strategy, names) == want, f"the pass's output differs from {path.name}"


def test_the_rules_pick_one_plan_for_every_statement() -> None:
    """rules/choose.egg orders every statement's plans: no two picked plans of a statement tie, on any program
    here, in either strategy (the optimal strategy's batched-matmul routes are the model's to choose)."""
    for strategy, backend in RUNS:
        flatten = passes.flatten_tile_nd_to_2d(backend=backend, strategy=strategy)
        for name, program in programs():
            with contextlib.suppress(UserError):
                flatten(program)
            assert all(r.ties == 0 for r in flatten.reports), (strategy, name)


@requires_sample
def test_the_rules_pick_one_plan_for_every_statement_of_the_sample() -> None:
    for strategy in ("reference", "optimal"):
        flatten = passes.flatten_tile_nd_to_2d(backend="Ascend910B", strategy=strategy)
        for path in sample_programs():
            with contextlib.suppress(UserError):
                flatten(pl.parse_file(path))
            assert all(r.ties == 0 for r in flatten.reports), (strategy, path.stem)
