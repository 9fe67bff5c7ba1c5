"""Helpers every pass test uses: run the pass, compare structurally, and check meaning with the interpreter."""

from __future__ import annotations

from typing import Any

import pypto_egg.language as pl
from pypto_egg import interp, ir, passes
from pypto_egg.backend import Backend
from pypto_egg.ir import python_print
from pypto_egg.ir.stmt import Program


def one_op_kernel(value: str) -> str:
    """A program of one InCore kernel over [2, 3, 4] FP32: load `t`, compute `u = value`, store `u` (the small
    program several tests start from)."""
    return f"""
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
        t = pl.load(x, [0, 0, 0], [2, 3, 4])
        u = {value}
        out = pl.store(u, [0, 0, 0], out)
        return out
"""


# a batched matmul of [4, 128, 256] operands, the right one through a legacy transpose (whose rules, in
# transpose.egg, state the operand's base themselves), over the Mat budget
LEGACY_TRANSPOSE_BMM = """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[[4, 128, 256], pl.FP32], b: pl.Tensor[[4, 128, 256], pl.FP32],
             out: pl.Out[pl.Tensor[[4, 128, 128], pl.FP32]]) -> pl.Tensor[[4, 128, 128], pl.FP32]:
        ta = pl.load(a, [0, 0, 0], [4, 128, 256])
        tb = pl.load(b, [0, 0, 0], [4, 128, 256])
        bt = pl.tile.transpose(tb, 1, 2)
        c = pl.tile.batch_matmul(ta, bt)
        out = pl.store(c, [0, 0, 0], out)
        return out
"""


# a batched matmul whose rhs window [2, 32, 16] at row 8 of [2, 48, 16] leaves gaps between its batches (B-117,
# B-138): each page is re-loaded per batch, whatever the strategy
NON_CONTIGUOUS_RHS_BMM = """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[[2, 16, 32], pl.FP16], b: pl.Tensor[[2, 48, 16], pl.FP16],
             out: pl.Out[pl.Tensor[[2, 16, 16], pl.FP32]]) -> pl.Tensor[[2, 16, 16], pl.FP32]:
        ta = pl.load(a, [0, 0, 0], [2, 16, 32])
        tb = pl.load(b, [0, 8, 0], [2, 32, 16])
        c = pl.tile.batch_matmul(ta, tb)
        out = pl.store(c, [0, 0, 0], out)
        return out
"""

# the prelude of a test's subprocess that watches the resident rule sets: `loads` lists the key of each set loaded,
# and `served_by(call)` gives call()'s result and the sets that served it
RESIDENT_PROBE = """
from pypto_egg.egraph.accel import resident
loads = []
_finish = resident.ResidentRules.finish
def _counted(self):
    if not self.ready:
        loads.append(self.key)
    _finish(self)
resident.ResidentRules.finish = _counted
def served_by(call):
    before = {rr.key: rr.served for rr in resident.registry().rules.values() if rr.ready}
    result = call()
    return result, [rr for rr in resident.registry().rules.values() if rr.served > before.get(rr.key, 0)]
"""


def roundtrip(program: Program) -> Program:
    """Print, parse back, and require structural equality."""
    text = python_print(program)
    again = pl.parse(text)
    ir.assert_structural_equal(program, again)
    return again


def check_meaning(
    before: Program,
    after: Program,
    seeds: tuple[int, ...] = (0, 1),
    dyn: dict[str, int] | None = None,
    scalars: dict[str, Any] | None = None,
    functions: list[str] | None = None,
) -> None:
    """Every InCore function gives the same stored outputs before and after, on random inputs."""
    names = functions or [f.name for f in before.functions if f.type.is_incore]
    for name in names:
        for seed in seeds:
            inputs = interp.random_inputs(before.function(name), seed, dyn=dyn, scalars=scalars)
            want = interp.run(before, name, inputs)
            got = interp.run(after, name, inputs)
            diffs = interp.output_differences(want, got)
            assert not diffs, f"{name} (seed {seed}) changed meaning: {diffs}\n{python_print(after)}"


def flatten(
    before: Program,
    expected: Program | None = None,
    *,
    backend: str | Backend | None = None,
    verify: bool = True,
    meaning: bool = True,
    dyn: dict[str, int] | None = None,
    scalars: dict[str, Any] | None = None,
    seeds: tuple[int, ...] = (0, 1),
) -> Program:
    """Run the pass; check it did not mutate its input, matches `expected`, round-trips, and keeps meaning."""
    text_before = python_print(before)
    flatten_pass = passes.flatten_tile_nd_to_2d(backend=backend, verify=verify)
    after = flatten_pass(before)
    assert all(r.ties == 0 for r in flatten_pass.reports), "the rules left a statement two equal plans"
    assert python_print(before) == text_before, "the pass mutated its input"
    if expected is not None:
        ir.assert_structural_equal(after, expected)
    roundtrip(after)
    if meaning:
        check_meaning(before, after, seeds, dyn, scalars)
    return after
