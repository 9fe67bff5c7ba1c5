"""The family sets: a program of a kind not seen before runs on the smallest coarse set holding its rules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pypto_egg.language as pl
from pypto_egg.egraph.accel import Acceleration
from pypto_egg.egraph.accel.rule_sets import RuleSetKey, family_relevances
from pypto_egg.egraph.engine import HOST_ASSERTED, HOST_READS, EGraphRun, accelerated_rule_files
from pypto_egg.extract.lower_matmul import MatmulLowerer

from helpers import RESIDENT_PROBE, one_op_kernel

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
READS = MatmulLowerer.FACTS | HOST_READS


def _key(path: Path, name: str | None = None) -> RuleSetKey:
    program = pl.parse_file(str(path), name) if name else pl.parse_file(str(path))
    incore = [fn.name for fn in program.functions if fn.type.is_incore]
    with EGraphRun(program, incore, "Ascend910B", reads=MatmulLowerer.FACTS) as eg:
        return RuleSetKey.of(eg.relevance)


def _families() -> list[RuleSetKey]:
    return [
        RuleSetKey.of(rel)
        for _, rel in family_relevances(tuple(accelerated_rule_files(Acceleration())), READS, HOST_ASSERTED)
    ]


def test_the_smaller_family_reads_no_batched_matmul_fact_and_is_held_by_the_larger():
    small, every = family_relevances(tuple(accelerated_rule_files(Acceleration())), READS, HOST_ASSERTED)
    assert small[1].rules is not None and every[1].rules is not None and small[1].facts is not None
    assert small[1].rules < every[1].rules
    assert not any(rel.startswith("Bmm") for rel in small[1].facts)
    assert RuleSetKey.of(small[1]).fits_within(RuleSetKey.of(every[1])) is not None


def test_each_example_fits_the_smallest_family_its_ops_allow():
    """Programs without a batched matmul fit the smaller family; those with one only the family of every program."""
    small, every = _families()
    for path, name, batched in [
        (EXAMPLES / "seed_example.py", "Before", False),
        (EXAMPLES / "nd_transpose.py", None, False),
        (EXAMPLES / "nd_assemble.py", None, False),
        (EXAMPLES / "batched_matmul.py", None, True),
    ]:
        key = _key(path, name)
        assert (key.fits_within(small) is None) == batched, path.name
        assert key.fits_within(every) is not None, path.name


_NEW_KINDS = (
    RESIDENT_PROBE
    + """
import dataclasses
import sys
import pypto_egg.language as pl
from pypto_egg import passes
from pypto_egg.ir import python_print
flatten = passes.flatten_tile_nd_to_2d()
from pypto_egg.egraph.accel import Acceleration
every = dataclasses.replace(flatten, acceleration=Acceleration(prune_rules=False))
def served(program):
    got, ran = served_by(lambda: python_print(flatten(program)))
    return got, ran[0]
programs = [pl.parse(text) for text in sys.argv[1:3]] + [pl.parse_file(sys.argv[3])]
first, small = served(programs[0])  # a new kind: both families load with it, and it runs on the smaller
assert len(loads) == 2, loads
second, same = served(programs[1])  # another new kind without a batched matmul: the same set, nothing loaded
assert same is small and len(loads) == 2
third, large = served(programs[2])  # a batched matmul: the family of every program
assert large is not small and len(loads) == 2
assert len(large.egraph.freeze().functions) > len(small.egraph.freeze().functions)
for program, got in zip(programs, [first, second, third]):
    assert got == python_print(every(program))
print("ok")
"""
)


def test_new_kinds_run_on_the_smallest_family_with_the_answer_of_every_rule():
    """A fresh process: its first program loads both families, the programs after it of kinds not seen before load
    nothing, and each answer is the one of every rule."""
    kinds = [one_op_kernel("pl.tile.exp(t)"), one_op_kernel("pl.tile.add(t, t)")]
    run = subprocess.run(
        [sys.executable, "-c", _NEW_KINDS, *kinds, str(EXAMPLES / "batched_matmul.py")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0 and run.stdout.split()[-1:] == ["ok"], run.stderr[-3000:]
