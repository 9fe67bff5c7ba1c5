"""benchmarks/bench_floor.py counts as the output's cost only the nodes the pass had to make: none for a program
it leaves as it is, and for one it flattens exactly those its input does not hold, each rebuilt equal to itself."""

from __future__ import annotations

import dataclasses
import importlib.util
import random
import sys
from pathlib import Path
from types import ModuleType

import pypto_egg.language as pl
from pypto_egg import passes

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def bench_floor() -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))  # (its sibling modules, as when run as a script)
    try:
        spec = importlib.util.spec_from_file_location("bench_floor", BENCHMARKS / "bench_floor.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["bench_floor"] = module  # (its dataclass looks its module up)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCHMARKS))


def test_a_program_the_pass_leaves_as_it_is_costs_no_output_node():
    floor = bench_floor()
    workloads = sys.modules["bench_workloads"]  # (the generator the benchmarks take their programs from)
    program = pl.parse(workloads.program([workloads.kernel("k", 3, 4, 3, rank3=False)]))
    assert floor.new_nodes(program, passes.flatten_tile_nd_to_2d()(program)) == []


def test_the_output_nodes_counted_are_those_the_input_lacks_each_rebuilt_equal():
    floor = bench_floor()
    program = pl.parse(sys.modules["bench_workloads"].seed(random.Random(1)))
    out = passes.flatten_tile_nd_to_2d()(program)
    built = floor.new_nodes(program, out)
    old: dict[int, object] = {}
    floor._nodes(program, old)
    new: dict[int, object] = {}
    floor._nodes(out, new)
    assert len(built) == len(set(new) - set(old)) > 0
    for (cls, fields), node in zip(built, (n for k, n in new.items() if k not in old)):
        assert type(node) is cls
        rebuilt = cls(*fields)
        assert all(getattr(rebuilt, f.name) is getattr(node, f.name) for f in dataclasses.fields(node))
    assert floor.build_ms(built, repeat=1) > 0
