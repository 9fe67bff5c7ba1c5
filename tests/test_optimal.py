"""The optimal strategy (issue: an optimizing mode): every legal route of each batched-matmul operand is in
the e-graph, the cost model picks; the reference strategy's output is unchanged (the rest of the suite)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import pypto_egg.language as pl
from pypto_egg import passes
from pypto_egg.backend import Backend
from pypto_egg.errors import UserError
from pypto_egg.ir.types import MemorySpace

from helpers import check_meaning

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
    return sum(s.var.type.nbytes for s in loads(program))


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
    assert run(program, "optimal").as_python() == run(program, "reference").as_python()


def test_a_non_contiguous_operand_stays_per_batch_whatever_it_costs():
    """B-117 is a hard guard: a multi-batch window that also cuts the row axis cannot be one 2-D load."""
    program = pl.parse("""
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
""")
    optimal = run(program, "optimal")
    assert sum("rhs_pbload" in s.var.name for s in loads(optimal)) == 2
    assert optimal.as_python() == run(program, "reference").as_python()


def test_a_tiny_mat_budget_keeps_the_references_routes():
    """Not even one whole operand beside a page fits: only the reference's combination is legal."""
    tiny = Backend("Tiny", {MemorySpace.Mat: 96 * 1024, MemorySpace.Acc: 128 * 1024})
    program = bmm([4, 64, 256], [4, 256, 128], [4, 64, 128])
    assert run(program, "optimal", tiny).as_python() == run(program, "reference", tiny).as_python()


def test_explain_shows_the_cost_of_every_alternative():
    program = bmm([4, 128, 256], [1, 256, 128], [4, 128, 128])
    path = ROOT / "tests" / "artifacts"
    path.mkdir(exist_ok=True)
    f = path / "broadcast_bmm.py"
    f.write_text(program.as_python())
    r = subprocess.run([sys.executable, "-m", "pypto_egg.cli", "explain", str(f), "--backend", "Ascend910B",
                        "--strategy", "optimal", "--json"], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    stmt = next(s for s in json.loads(r.stdout)["statements"] if "batch_matmul" in s["source"])
    assert stmt["term"].startswith("(BatchMatmul 'fused' 0 1 ")
    # the only other legal combination is the reference's: the lhs whole (512 KiB) beside an rhs page is over
    assert [a["term"].split(" ")[2:4] for a in stmt["alternatives"]] == [["0", "0"]]
    assert "higher cost" in stmt["alternatives"][0]["lost_because"]
    assert "lhs re-loaded per batch, rhs whole, sliced per page" in stmt["plan"]


def test_an_unknown_strategy_is_a_user_error():
    with pytest.raises(UserError, match="unknown strategy 'fastest'"):
        passes.flatten_tile_nd_to_2d(strategy="fastest")
