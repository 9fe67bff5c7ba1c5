"""`pypto-egg check` on PyPTO's C++ FlattenTileNdTo2D: what it finds in the pass's output (a window past its tensor,
a reshape left N-D, a re-deduced layout), on every program of the sample, and inside PyPTO's pipeline."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

import pypto_egg.language as epl
from pypto_egg import ir, passes
from pypto_egg.check import Verdict, counts
from pypto_egg.check.run import check_text
from pypto_egg.pypto import CheckError, CheckWarning, checking_flatten, load_pypto
from pypto_egg.pypto.compare import DETERMINISTIC, compare_checked_file

from pypto_ref import requires_pypto, requires_sample, sample_programs, set_reference_backend

pytestmark = requires_pypto

HEADER = "import pypto.language as pl\n\n@pl.program\n"

# a [6, 8] tile stored into a [2, 3, 8] tensor: the build's partition window is [1, 6, 8], six rows into three
GATHERED = (
    HEADER
    + """class Gathered:
    @pl.function(type=pl.FunctionType.InCore)
    def main_incore_0(self, x: pl.Tensor[[6, 8], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 8], pl.FP32]]) -> pl.Tensor[[2, 3, 8], pl.FP32]:
        t: pl.Tile[[6, 8], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [6, 8], [6, 8], target_memory=pl.Mem.Vec)
        out_1: pl.Tensor[[2, 3, 8], pl.FP32] = pl.tile.store(t, [0, 0, 0], out)
        return out_1
"""
)

# a reshape to [4, 1, 8]: the build leaves it N-D
RESHAPED_UP = (
    HEADER
    + """class ReshapeUp:
    @pl.function(type=pl.FunctionType.InCore)
    def main_incore_0(self, x: pl.Tensor[[4, 8], pl.FP32], out: pl.Out[pl.Tensor[[4, 1, 8], pl.FP32]]) -> pl.Tensor[[4, 1, 8], pl.FP32]:
        t: pl.Tile[[4, 8], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [4, 8], [4, 8], target_memory=pl.Mem.Vec)
        r: pl.Tile[[4, 1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.reshape(t, [4, 1, 8])
        e: pl.Tile[[4, 1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.exp(r)
        out_1: pl.Tensor[[4, 1, 8], pl.FP32] = pl.tile.store(e, [0, 0, 0], out)
        return out_1
"""
)

# a load into an NZ tile (PyPTO's own memory-reuse test): the build re-deduces it row-major
NZ_LOAD = (
    HEADER
    + """class NzLoad:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, inp: pl.Tensor[[64, 64], pl.BF16], out_nd: pl.Out[pl.Tensor[[64, 64], pl.BF16]], out_nz: pl.Out[pl.Tensor[[64, 64], pl.BF16]]) -> pl.Tensor[[64, 64], pl.BF16]:
        tile_nd: pl.Tile[[64, 64], pl.BF16, pl.Mem.Vec] = pl.tile.load(inp, [0, 0], [64, 64], target_memory=pl.Mem.Vec)
        _a: pl.Tensor[[64, 64], pl.BF16] = pl.tile.store(tile_nd, [0, 0], out_nd)
        tile_nz: pl.Tile[[64, 64], pl.BF16, pl.Mem.Vec, pl.TileView(blayout=pl.TileLayout.col_major, slayout=pl.TileLayout.row_major, fractal=1024)] = pl.tile.load(inp, [0, 0], [64, 64], target_memory=pl.Mem.Vec)
        result: pl.Tensor[[64, 64], pl.BF16] = pl.tile.store(tile_nz, [0, 0], out_nz)
        return result
"""
)


def only(text: str) -> Verdict:
    set_reference_backend()
    (verdict,) = check_text(text, "<program>")
    return verdict


def test_the_builds_six_rows_into_an_axis_of_three_is_wrong_by_bounds_as_d5():
    v = only(GATHERED)
    assert (v.verdict, v.reason) == ("wrong", "bounds")
    assert "[1, 6, 8]" in v.detail and "reaches outside its tensor [2, 3, 8] (axis 1: 0 + 6 > 3)" in v.detail
    assert "D-5" in v.detail


def test_the_builds_reshape_left_nd_breaks_tileops2d_as_d8():
    v = only(RESHAPED_UP)
    assert (v.verdict, v.reason) == ("wrong", "contract")
    assert "tile.reshape" in v.detail and "produces >2D tile" in v.detail and "D-8" in v.detail


def test_the_builds_rededuced_nz_load_is_listed_as_d6():
    v = only(NZ_LOAD)
    assert (v.verdict, v.reason) == ("listed", "D-6")


def _check_sample(path: str) -> tuple[str, list[Verdict] | str]:
    set_reference_backend()
    try:
        return path, check_text(Path(path).read_text(), path)
    except Exception as e:  # a crash is what this test counts
        return path, f"{type(e).__name__}: {e}"


@requires_sample
def test_every_function_of_the_sample_gets_a_verdict_and_the_wrong_ones_are_the_builds_refused_stores(
    tmp_path,
):
    paths = [str(p) for p in sample_programs()]
    with ProcessPoolExecutor(max_workers=max(1, min(2, os.cpu_count() or 1)),
                             mp_context=multiprocessing.get_context("spawn")) as pool:  # fmt: skip
        results = dict(pool.map(_check_sample, paths, chunksize=16))
    crashes = {p: r for p, r in results.items() if isinstance(r, str)}
    assert not crashes, crashes
    verdicts = [v for r in results.values() if not isinstance(r, str) for v in r]
    incore = sum(1 for p in paths for f in epl.parse(Path(p).read_text()).functions if f.type.is_incore)
    assert len(verdicts) == incore == 649
    tally = counts(verdicts)
    # the README's table: the sample's three programs that went through the pass once already (D-1) make the
    # build append a fifth operand to their stores (D-2)
    assert tally == {
        "wrong": 3,
        "unexplained": 0,
        "not-checkable": 0,
        "listed": 0,
        "same": 646,
        "wrong/contract": 3,
    }
    assert all("tile.store takes at most 4 operands" in v.detail and "D-2" in v.detail
               for v in verdicts if v.verdict == "wrong")  # fmt: skip


@requires_sample
def test_each_wrong_verdict_of_the_sample_has_a_reproducer_that_shows_it_again(tmp_path):
    wrong = [p for p in sample_programs() if "test_flatten_tile_nd_to_2d__main__8" in p.name]
    run = subprocess.run([sys.executable, "-m", "pypto_egg.cli", "check", str(wrong[0]), "--json",
                          "--reproducers", str(tmp_path / "r")], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert run.returncode == 1, run.stderr
    (found,) = [json.loads(line) for line in run.stdout.splitlines()]
    (repro,) = (tmp_path / "r").glob("*.py")
    assert f"reproducer: {repro}" in found["detail"]
    again = subprocess.run([sys.executable, "-m", "pypto_egg.cli", "check", str(repro), "--json",
                            "--reproducers", str(tmp_path / "r2")], capture_output=True, text=True, timeout=300)  # fmt: skip
    (shown,) = [json.loads(line) for line in again.stdout.splitlines()]
    assert again.returncode == 1
    assert (shown["verdict"], shown["reason"]) == (found["verdict"], found["reason"]) == ("wrong", "contract")
    assert len(repro.read_text().splitlines()) < len(wrong[0].read_text().splitlines()) + 8


@requires_sample
def test_pyptoeggs_own_output_is_never_wrong_on_the_sample(tmp_path):
    flatten = passes.flatten_tile_nd_to_2d(backend="Ascend910B", validate=False)
    verdicts: list[Verdict] = []
    for path in sample_programs():
        text = path.read_text()
        verdicts += check_text(text, str(path), ir.python_print(flatten(epl.parse(text, str(path)))))
    assert not [v.line() for v in verdicts if v.verdict == "wrong"]
    assert counts(verdicts)["same"] == len(verdicts) == 649


def test_checking_flatten_warns_raises_or_calls_back_and_returns_the_builds_output(tmp_path):
    pto = load_pypto()
    set_reference_backend()
    program = pto.language.parse(GATHERED)
    plain = pto.passes.flatten_tile_nd_to_2d()(program)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with checking_flatten() as log:
            pto.ir.compile(pto.language.parse(GATHERED), output_dir=str(tmp_path / "warn"), **DETERMINISTIC)
    (warned,) = [w.message for w in caught if isinstance(w.message, CheckWarning)]
    assert (warned.verdict.verdict, warned.verdict.reason) == ("wrong", "bounds")
    assert [v.verdict for v in log.verdicts] == ["wrong"] and len(log.seconds) == 1
    with pytest.raises(CheckError) as raised, checking_flatten(on_wrong="raise"):
        pto.ir.compile(pto.language.parse(GATHERED), output_dir=str(tmp_path / "raise"), **DETERMINISTIC)
    assert raised.value.verdict.reason == "bounds"
    seen: list[Verdict] = []
    with checking_flatten(on_wrong=seen.append):
        pto.passes.flatten_tile_nd_to_2d()  # (the pass the pipeline makes inside the block is the checked one)
        after = pto.ir.compile(
            pto.language.parse(GATHERED), output_dir=str(tmp_path / "call"), **DETERMINISTIC
        )
    assert [v.reason for v in seen] == ["bounds"]
    assert after is not None and pto.ir.structural_equal(plain, pto.passes.flatten_tile_nd_to_2d()(program))
    with pytest.raises(ValueError, match="on_wrong must be"), checking_flatten(on_wrong="ignore"):
        pass


@requires_sample
def test_a_checked_pipeline_writes_the_plain_pipelines_code_on_the_sample():
    paths = [str(p) for p in sample_programs()]
    with ProcessPoolExecutor(max_workers=max(1, min(2, os.cpu_count() or 1)),
                             mp_context=multiprocessing.get_context("spawn")) as pool:  # fmt: skip
        results = dict(pool.map(compare_checked_file, paths, chunksize=8))
    compiled = {p: r for p, r in results.items() if r.code.compiled}
    assert len(compiled) >= 390, len(compiled)
    failed = {p: r.code.egg_error for p, r in compiled.items() if r.code.egg_error is not None}
    assert not failed, failed
    assert not {p: r.code.differing for p, r in compiled.items() if not r.code.same}
    verdicts = [v for r in compiled.values() for v in r.verdicts]
    assert len(verdicts) >= 300 and not [v.line() for v in verdicts if v.verdict == "wrong"]


def test_compile_check_writes_the_builds_code_and_exits_1_on_a_wrong_output(tmp_path):
    source = tmp_path / "gathered.py"
    source.write_text(GATHERED)
    run = subprocess.run([sys.executable, "-m", "pypto_egg.cli", "compile", str(source), "--check", "-o",
                          str(tmp_path / "build")], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert run.returncode == 1, run.stderr
    assert "pypto-egg compile --check: Gathered:main_incore_0: wrong (bounds)" in run.stderr
    assert "with the C++ pass; checked 1 function(s): 1 wrong" in run.stdout
    assert list((tmp_path / "build" / "kernels").rglob("*.*"))
