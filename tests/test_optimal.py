"""The optimal strategy (issue: an optimizing mode): every legal route of each batched-matmul operand is in
the e-graph, the cost model picks; the reference strategy's output is unchanged (the rest of the suite)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pypto_egg.language as pl
from pypto_egg import passes
from pypto_egg.backend import Backend
from pypto_egg.errors import PassError, UserError
from pypto_egg.extract.cost import OptimalCostModel
from pypto_egg.ir import python_print
from pypto_egg.ir.tiles import tile_nbytes
from pypto_egg.ir.types import MemorySpace

from helpers import NON_CONTIGUOUS_RHS_BMM, check_meaning
from test_flatten_hypothesis import batch_matmul_programs

ROOT = Path(__file__).resolve().parents[1]


def bmm(
    lhs: list[int], rhs: list[int], out: list[int], dtype: str = "pl.FP32", extra: str = ""
) -> pl.Program:
    z = lambda d: str([0] * len(d))  # noqa: E731
    return pl.parse(f"""
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[{lhs}, {dtype}], b: pl.Tensor[{rhs}, {dtype}],
             out: pl.Out[pl.Tensor[{out}, pl.FP32]]) -> pl.Tensor[{out}, pl.FP32]:
        ta = pl.load(a, {z(lhs)}, {lhs})
        tb = pl.load(b, {z(rhs)}, {rhs})
{extra}        c = pl.tile.batch_matmul(ta, tb)
        out = pl.store(c, {z(out)}, out)
        return out
""")


def run(program: pl.Program, strategy: str, backend: str | Backend = "Ascend910B") -> pl.Program:
    after = passes.flatten_tile_nd_to_2d(backend=backend, strategy=strategy)(program)
    check_meaning(program, after, seeds=(0,))
    return after


def loads(program: pl.Program) -> list:
    return [
        s for s in program.functions[0].body if getattr(getattr(s, "value", None), "op", None) == "tile.load"
    ]


def gm_bytes(program: pl.Program) -> int:
    return sum(tile_nbytes(s.var.type) for s in loads(program))


def test_a_broadcast_operand_over_the_budget_is_loaded_once_instead_of_once_per_page():
    """Reference (B-116): 4 x 128 KiB + 128 KiB > 512 KiB, so both operands are re-loaded per batch and the
    single rhs page four times. Optimal: the rhs page stays whole in Mat beside one lhs page at a time."""
    program = bmm([4, 128, 256], [1, 256, 128], [4, 128, 128])
    reference, optimal = run(program, "reference"), run(program, "optimal")
    assert sum("rhs_pbload" in s.var.name for s in loads(reference)) == 4
    assert [s.var.name for s in loads(optimal) if "rhs" in s.var.name or s.var.name == "tb"] == ["tb"]
    assert gm_bytes(optimal) == gm_bytes(reference) - 3 * 256 * 128 * 4
    assert len(optimal.functions[0].body) < len(reference.functions[0].body)


def test_only_one_operand_fits_whole_so_the_routes_mix():
    """lhs 4 x 64 KiB = 256 KiB whole, rhs 4 x 128 KiB = 512 KiB: not both (768 KiB > 512 KiB); the lhs whole
    and one rhs page (256 + 128 KiB) fit, so the lhs is loaded once and sliced, the rhs re-loaded per page."""
    program = bmm([4, 64, 256], [4, 256, 128], [4, 64, 128])
    optimal = run(program, "optimal")
    names = [s.var.name for s in loads(optimal)]
    assert "ta" in names and "tb" not in names and sum("rhs_pbload" in n for n in names) == 4
    assert not any("lhs_pbload" in n for n in names)


def test_when_both_fit_the_plans_agree():
    program = bmm([2, 16, 32], [2, 32, 16], [2, 16, 16])
    assert python_print(run(program, "optimal")) == python_print(run(program, "reference"))


def test_a_non_contiguous_operand_stays_per_batch_whatever_it_costs():
    """B-117 is a hard guard: a multi-batch window that also cuts the row axis cannot be one 2-D load."""
    program = pl.parse(NON_CONTIGUOUS_RHS_BMM)
    optimal = run(program, "optimal")
    assert sum("rhs_pbload" in s.var.name for s in loads(optimal)) == 2
    assert python_print(optimal) == python_print(run(program, "reference"))


def test_a_tiny_mat_budget_keeps_the_references_routes():
    """Not even one whole operand beside a page fits: only the reference's combination is legal."""
    tiny = Backend("Tiny", {MemorySpace.Mat: 96 * 1024, MemorySpace.Acc: 128 * 1024})
    program = bmm([4, 64, 256], [4, 256, 128], [4, 64, 128])
    assert python_print(run(program, "optimal", tiny)) == python_print(run(program, "reference", tiny))


def test_explain_shows_the_cost_of_every_alternative():
    program = bmm([4, 128, 256], [1, 256, 128], [4, 128, 128])
    path = ROOT / "tests" / "artifacts"
    path.mkdir(exist_ok=True)
    f = path / "broadcast_bmm.py"
    f.write_text(python_print(program))
    r = subprocess.run([sys.executable, "-m", "pypto_egg.cli", "explain", str(f), "--backend", "Ascend910B",
                        "--strategy", "optimal", "--json"], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    stmt = next(s for s in json.loads(r.stdout)["statements"] if "batch_matmul" in s["source"])
    assert stmt["term"].startswith("(BatchMatmul 'fused' 0 1 ")
    # the only other legal combination is the reference's: the lhs whole (512 KiB) beside an rhs page is over
    assert [a["term"].split(" ")[2:4] for a in stmt["alternatives"]] == [["0", "0"]]
    assert "costs less" in stmt["alternatives"][0]["lost_because"]
    assert "lhs re-loaded per batch, rhs whole, sliced per page" in stmt["plan"]


def test_an_unknown_strategy_is_a_user_error():
    with pytest.raises(UserError, match="unknown strategy 'fastest'"):
        passes.flatten_tile_nd_to_2d(strategy="fastest")


class PrefersStaging(OptimalCostModel):
    """A model under which gathering the pages in a staging tile is cheaper than fusing them into the store."""

    def node_cost(self, node):
        if node.op == "BatchMatmul" and node.args[0] == "general":
            return 0.5
        return super().node_cost(node)


def ops(program: pl.Program) -> list[str]:
    return [getattr(getattr(s, "value", None), "op", "") for s in program.functions[0].body]


def test_a_consumed_store_may_gather_its_pages_in_a_staging_tile_which_the_model_finds_dearer():
    """B-136 fuses a consumed store into one store per page; the optimal strategy also holds the staging-tile
    lowering of B-135 (its [B*M, N] tile fits Vec), and the default model keeps the fused one."""
    program = bmm([4, 16, 32], [4, 32, 16], [4, 16, 16])
    optimal = run(program, "optimal")
    assert python_print(optimal) == python_print(run(program, "reference"))
    assert ops(optimal).count("tile.store") == 4 and "tile.assemble" not in ops(optimal)
    from pypto_egg.explain import explain_program

    stmt = next(
        s for s in explain_program(program, strategy="optimal").statements if "batch_matmul" in s.source
    )
    assert stmt.term.startswith("(BatchMatmul 'fused' ")
    staging = [a for a in stmt.alternatives if a.term.startswith("(BatchMatmul 'general' ")]
    assert staging and all(a.cost > stmt.cost for a in staging)
    assert any(r.name == "optimal-staging-plan" for a in staging for r in a.rules)
    assert "gathered into a [B*M, N] Vec tile" in staging[0].plan


def test_the_staging_tile_lowering_is_stored_once_and_computes_the_same():
    program = bmm([4, 16, 32], [4, 32, 16], [4, 16, 16])
    after = passes.flatten_tile_nd_to_2d(strategy="optimal", cost_model=PrefersStaging())(program)
    check_meaning(program, after, seeds=(0, 1))
    assert ops(after).count("tile.store") == 1 and ops(after).count("tile.assemble") == 4
    assert "pl.Tile[[64, 16], pl.FP32, pl.Mem.Vec]" in python_print(after)


def test_a_staging_tile_over_the_vec_budget_is_not_an_option():
    tiny_vec = Backend(
        "TinyVec", {MemorySpace.Mat: 512 * 1024, MemorySpace.Vec: 4095, MemorySpace.Acc: 128 * 1024}
    )
    program = bmm([4, 16, 32], [4, 32, 16], [4, 16, 16])  # a [64, 16] FP32 staging tile: 4 KiB, a byte over
    after = passes.flatten_tile_nd_to_2d(backend=tiny_vec, strategy="optimal", cost_model=PrefersStaging())(
        program
    )
    check_meaning(program, after, seeds=(0,))
    assert ops(after).count("tile.store") == 4


@settings(max_examples=40, deadline=None)
@given(batch_matmul_programs(), st.integers(0, 2**16))
def test_generated_batched_matmuls_lowered_through_staging_tiles_compute_the_same(before, seed):
    """Wherever the staging tile is an option, the model above takes it: its lowering must mean the same."""
    try:
        after = passes.flatten_tile_nd_to_2d(strategy="optimal", cost_model=PrefersStaging())(before)
    except PassError as e:  # the documented rejections of accumulator chains, as in either strategy
        assert str(e).startswith("tile.batch_matmul_acc: cannot lower a batch-"), str(e)
        return
    passes.verify_tile_ops_2d(after)
    check_meaning(before, after, seeds=(seed,))


_NO_ROUTES = """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
        a = pl.tile.create([2, 3, 4], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        b = pl.tile.full([2, 3, 4], dtype=pl.FP32, value=1.0)
        c = pl.tile.add(a, b)
        out = pl.store(c, [0, 0, 0], out)
        return out
"""

_ON_ITS_OWN_SET = """
import sys
import pypto_egg.language as pl
from pypto_egg import passes
from pypto_egg.ir import python_print
optimal = passes.flatten_tile_nd_to_2d(strategy="optimal")
outs = {python_print(optimal(pl.parse(sys.argv[1]))) for _ in range(4)}  # the third loads the kind's own set
assert outs == {python_print(passes.flatten_tile_nd_to_2d()(pl.parse(sys.argv[1])))}, outs
print("ok")
"""


def test_a_program_no_rule_of_which_reads_the_routes_runs_on_its_own_pruned_set():
    """The optimal strategy settles the batched matmuls' routes; a program whose kept rules never read them runs on
    a pruned set that does not declare them, and settles nothing (a fresh process, so its own set loads)."""
    run = subprocess.run(
        [sys.executable, "-c", _ON_ITS_OWN_SET, _NO_ROUTES], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0 and run.stdout.split()[-1:] == ["ok"], run.stderr[-3000:]
    program = pl.parse(_NO_ROUTES)
    check_meaning(program, passes.flatten_tile_nd_to_2d(strategy="optimal")(program))
