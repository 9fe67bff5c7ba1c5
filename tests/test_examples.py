"""Every program in examples/ flattens, verifies, round-trips and keeps its meaning."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from pypto_egg.ir.stmt import Program

from helpers import flatten

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))


def load(path: Path):
    name = f"example_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_there_are_at_least_five_examples():
    assert len(EXAMPLES) >= 5


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_flattens_and_keeps_meaning(path):
    module = load(path)
    inputs = getattr(module, "INPUTS", {})
    programs = [v for v in vars(module).values() if isinstance(v, Program)]
    before = programs[0]
    after = flatten(before, dyn=inputs.get("dyn"), scalars=inputs.get("scalars"))
    assert after is not before


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_flattening_twice_changes_nothing_more(path):
    from pypto_egg import ir, passes

    before = next(v for v in vars(load(path)).values() if isinstance(v, Program))
    once = passes.flatten_tile_nd_to_2d()(before)
    twice = passes.flatten_tile_nd_to_2d()(once)
    ir.assert_structural_equal(once, twice)
