"""`pypto-egg check`: each verdict and each reason on a small program, through the Python API and the command line
(against a given output; the C++ pass's outputs are tests/test_check_pypto.py's)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import pypto_egg.language as pl
from pypto_egg import ir, passes
from pypto_egg.check import Verdict
from pypto_egg.check.run import check_text

# one InCore kernel: a [2, 3, 4] tile computed from its input and stored (the pass flattens it to [6, 4])
KERNEL = """
import pypto_egg.language as pl

@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[2, 3, 4], pl.FP32], y: pl.Tensor[[2, 3, 4], pl.FP32],
             out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
        t = pl.load(x, [0, 0, 0], [2, 3, 4])
        s = pl.load(y, [0, 0, 0], [2, 3, 4])
        u = pl.tile.sub(t, s)
        out = pl.store(u, [0, 0, 0], out)
        return out
"""


def ours(text: str) -> str:
    """pypto-egg's output of a program, as text."""
    return ir.python_print(passes.flatten_tile_nd_to_2d(backend="Ascend910B")(pl.parse(text)))


def check(text: str, output: str) -> Verdict:
    (verdict,) = check_text(text, "<input>", output, "<output>")
    return verdict


def edited(output: str, old: str, new: str) -> str:
    assert old in output, f"{old!r} is not in the output:\n{output}"
    return output.replace(old, new, 1)


def test_pyptoeggs_own_answer_is_same():
    v = check(KERNEL, ours(KERNEL))
    assert (v.verdict, v.reason, v.program, v.function) == ("same", None, "K", "main")


def test_an_output_that_computes_something_else_is_wrong_by_meaning_naming_the_element_and_both_values():
    swapped = edited(ours(KERNEL), "pl.tile.sub(t, s)", "pl.tile.sub(s, t)")
    v = check(KERNEL, swapped)
    assert (v.verdict, v.reason) == ("wrong", "meaning")
    assert "output 'out' differs at index [0, 0, 0]" in v.detail
    assert "from the input" in v.detail and "from the output" in v.detail and "distinct values" in v.detail


def test_a_store_whose_window_cannot_hold_its_tile_is_wrong_by_meaning():
    # half the rows' window for the whole tile: the output stops where the input runs
    v = check(KERNEL, edited(ours(KERNEL), "out, [2, 3, 4])", "out, [1, 3, 4])"))
    assert (v.verdict, v.reason) == ("wrong", "meaning")
    assert (
        "the input runs but the output does not" in v.detail
        and "does not hold the [6, 4] valid tile" in v.detail
    )


def test_a_constant_window_outside_its_tensor_is_wrong_by_bounds_without_running():
    v = check(KERNEL, edited(ours(KERNEL), "out, [2, 3, 4])", "out, [1, 6, 4])"))
    assert (v.verdict, v.reason) == ("wrong", "bounds")
    assert "reaches outside its tensor [2, 3, 4] (axis 1: 0 + 6 > 3)" in v.detail


# a loop over the rows of a [2, 3, 4] tile: each row's window is at the loop's offset, so only running it tells
LOOPED = """
import pypto_egg.language as pl

@pl.program
class L:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
        t = pl.load(x, [0, 0, 0], [2, 3, 4])
        flat = pl.tile.reshape(t, [6, 4])
        acc = pl.tile.create([6, 4], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        for i, (a,) in pl.range(2, init_values=(acc,)):
            row = pl.tile.slice(flat, [3, 4], [i * 3, 0])
            e = pl.tile.exp(row)
            a2 = pl.tile.assemble(a, e, [i * 3, 0])
            r = pl.yield_(a2)
        u = pl.tile.reshape(r, [2, 3, 4])
        out = pl.store(u, [0, 0, 0], out)
        return out
"""


def test_a_window_outside_its_tile_that_only_running_shows_is_wrong_by_bounds():
    output = ours(LOOPED)
    assert "i * 3" in output
    v = check(LOOPED, output.replace("i * 3, 0]", "i * 4, 0]", 1))
    assert (v.verdict, v.reason) == ("wrong", "bounds")
    assert "reaches outside" in v.detail and "running the output" in v.detail


def test_a_tile_op_left_nd_breaks_the_contract():
    nd = ours(KERNEL).replace("pl.tile.sub(t, s)", "pl.tile.sub(t, s)")
    nd = edited(nd, "u: pl.Tile[[6, 4], pl.FP32, pl.Mem.Vec] = pl.tile.sub(t, s)",
                "u3: pl.Tile[[2, 3, 4], pl.FP32, pl.Mem.Vec] = pl.tile.reshape(pl.tile.sub(t, s), [2, 3, 4])\n"
                "        u: pl.Tile[[6, 4], pl.FP32, pl.Mem.Vec] = pl.tile.reshape(u3, [6, 4])")  # fmt: skip
    v = check(KERNEL, nd)
    assert (v.verdict, v.reason) == ("wrong", "contract")
    assert "produces >2D tile" in v.detail and "D-8" in v.detail


def test_a_call_its_op_refuses_breaks_the_contract_and_names_the_listed_difference():
    v = check(KERNEL, edited(ours(KERNEL), "out, [2, 3, 4])", "out, [2, 3, 4], [6, 4])"))
    assert (v.verdict, v.reason) == ("wrong", "contract")
    assert "tile.store takes at most 4 operands" in v.detail and "D-2" in v.detail


def test_a_type_its_ops_deduction_does_not_give_breaks_the_contract():
    v = check(KERNEL, edited(ours(KERNEL), "u: pl.Tile[[6, 4], pl.FP32", "u: pl.Tile[[6, 4], pl.FP16"))
    assert (v.verdict, v.reason) == ("wrong", "contract")
    assert "the op gives FP32, the output declares FP16" in v.detail


def test_the_same_meaning_another_way_is_unexplained_naming_the_statement_and_pyptoeggs_plan():
    doubled = KERNEL.replace("pl.tile.sub(t, s)", "pl.tile.add(t, t)")
    other = edited(ours(doubled), "pl.tile.add(t, t)", "pl.tile.muls(t, 2.0)")
    v = check(doubled, other)
    assert (v.verdict, v.reason) == ("unexplained", None)
    assert "first difference at body[2].value" in v.detail and "pl.tile.muls(t, 2.0)" in v.detail
    assert "pypto-egg's explain of line 11 (`u = pl.tile.add(t, t)`)" in v.detail
    assert "the same outputs on 3 input(s)" in v.detail


# an AIV kernel whose first tile comes from the cube core: the interpreter, one core, has nothing to give it
CROSS_CORE = """
import pypto_egg.language as pl

@pl.program
class C:
    @pl.function(type=pl.FunctionType.AIV)
    def main(self, x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
        p: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)
        t = pl.load(x, [0, 0, 0], [2, 3, 4])
        u = pl.tile.add(t, t)
        out = pl.store(u, [0, 0, 0], out)
        return out
"""


def test_an_output_the_interpreter_cannot_run_is_not_checkable_naming_the_op():
    other = edited(ours(CROSS_CORE), "pl.tile.add(t, t)", "pl.tile.muls(t, 2.0)")
    v = check(CROSS_CORE, other)
    assert (v.verdict, v.reason) == ("not-checkable", "no-semantics")
    assert "tile.tpop_from_aic" in v.detail


# a 2-D Mat load with an explicit NZ view, in a function the pass rewrites (its N-D load)
NZ_LOAD = """
import pypto_egg.language as pl

@pl.program
class N:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[[16, 16], pl.FP16], x: pl.Tensor[[2, 3, 4], pl.FP32],
             out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
        m: pl.Tile[[16, 16], pl.FP16, pl.Mem.Vec, pl.TileView(blayout=pl.TileLayout.col_major, slayout=pl.TileLayout.row_major, fractal=1024)] = pl.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
        t = pl.load(x, [0, 0, 0], [2, 3, 4])
        e = pl.tile.exp(t)
        out = pl.store(e, [0, 0, 0], out)
        return out
"""


def test_a_load_retyped_to_its_deduction_is_listed_as_d6():
    output = ours(NZ_LOAD)
    view = "pl.TileView(blayout=pl.TileLayout.col_major, slayout=pl.TileLayout.row_major, fractal=1024)"
    v = check(NZ_LOAD, edited(output, f"pl.Mem.Vec, {view}]", "pl.Mem.Vec]"))
    assert (v.verdict, v.reason) == ("listed", "D-6")
    assert "keeps the type it was printed with" in v.detail


def test_verdicts_are_json_objects_of_exactly_five_fields():
    v = check(KERNEL, ours(KERNEL))
    assert list(json.loads(v.json())) == ["program", "function", "verdict", "reason", "detail"]


# ---------------------------------------------------------------- the command


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pypto_egg.cli", "check", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)  # fmt: skip


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "in" / "k.py").write_text(KERNEL)
    (tmp_path / "out" / "k.py").write_text(ours(KERNEL))
    (tmp_path / "in" / "j.py").write_text(KERNEL.replace("class K", "class J"))
    (tmp_path / "out" / "j.py").write_text(edited(ours(KERNEL), "pl.tile.sub(t, s)", "pl.tile.sub(s, t)")
                                           .replace("class K", "class J"))  # fmt: skip
    return tmp_path


def test_check_prints_json_lines_exits_1_on_a_wrong_function_and_writes_a_reproducer_that_shows_it(files):
    r = cli("in", "--output", "out", "--json", "-j", "2", "--reproducers", "repro", cwd=files)
    assert r.returncode == 1, r.stderr
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    by_program = {d["program"]: d for d in lines}
    assert by_program["K"]["verdict"] == "same"
    assert (by_program["J"]["verdict"], by_program["J"]["reason"]) == ("wrong", "meaning")
    assert "2 function(s): 1 wrong, 1 same" in r.stderr
    repro = files / "repro" / "J__main.py"
    assert repro.is_file() and "reproducer: repro/J__main.py" in by_program["J"]["detail"]
    header = repro.read_text().splitlines()[:6]
    assert any(line == "# shown by: pypto-egg check repro/J__main.py --output out/j.py" for line in header)
    again = cli(str(repro), "--output", "out/j.py", "--json", "--reproducers", "repro2", cwd=files)
    (found,) = [json.loads(line) for line in again.stdout.splitlines()]
    assert again.returncode == 1 and (found["verdict"], found["reason"]) == ("wrong", "meaning")


def test_check_exits_0_when_nothing_is_wrong_and_2_on_bad_input(files):
    r = cli("in/k.py", "--output", "out/k.py", cwd=files)
    assert r.returncode == 0 and r.stdout.startswith("K:main: same")
    (files / "bad.py").write_text("import pypto_egg.language as pl\n@pl.program\nclass B:\n    x = (\n")
    r = cli("bad.py", "--output", "out/k.py", cwd=files)
    assert r.returncode == 2 and "bad.py:4" in r.stderr and "invalid Python syntax" in r.stderr
    r = cli("in", "--output", "out/k.py", cwd=files)
    assert r.returncode == 2 and "one file for 2 inputs; give a directory" in r.stderr
    r = cli("in/k.py", "--output", "out/k.py", "-j", "0", cwd=files)
    assert r.returncode == 2 and "-j 0: at least one worker" in r.stderr
