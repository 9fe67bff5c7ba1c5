"""Programs print back in the dialect they were read in, and name their variables as PyPTO's printer does."""

from __future__ import annotations

import pytest

import pypto_egg.language as pl
from pypto_egg import ir, passes
from pypto_egg.ir.printer import print_program_lines, python_print

from helpers import check_meaning

OWN = """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
        t: pl.Tile[[2, 3, 4], pl.FP32] = pl.load(x, [0, 0, 0], [2, 3, 4])
        out = pl.store(t, [0, 0, 0], out)
        return out
"""
PYPTO = OWN.replace("import pypto_egg.language as pl", "import pypto.language as pl")


def test_a_program_read_in_pyptos_dialect_prints_pyptos_header():
    program = pl.parse(PYPTO)
    assert program.dialect == "pypto"
    assert "\nimport pypto.language as pl\n" in python_print(program)
    assert pl.parse(OWN).dialect == "pypto_egg"
    assert "\nimport pypto_egg.language as pl\n" in python_print(pl.parse(OWN))


def test_the_pass_keeps_the_dialect_and_meaning():
    before = pl.parse(PYPTO)
    after = passes.flatten_tile_nd_to_2d()(before)
    assert after.dialect == "pypto"
    assert python_print(after).count("import pypto.language as pl") == 1
    check_meaning(before, after)


def test_the_dialect_can_be_chosen_when_printing_and_is_not_part_of_equality():
    program = pl.parse(OWN)
    assert "import pypto.language as pl" in python_print(program, dialect="pypto")
    assert "import pypto_egg.language as pl" in python_print(program, dialect="pypto_egg")
    ir.assert_structural_equal(pl.parse(python_print(program, dialect="pypto")), pl.parse(PYPTO))
    with pytest.raises(ValueError, match="unknown dialect 'torch'"):
        python_print(program, dialect="torch")


def test_an_omitted_load_memory_is_vec_in_pyptos_dialect_and_unset_in_pypto_eggs():
    """PyPTO's DSL fills `target_memory=pl.Mem.Vec` into a load that names none; the specification's newer
    DSL leaves it to the compiler (a batched-matmul operand load then becomes a Mat load, B-042)."""
    load = lambda text: pl.parse(text).function("main").body[0].value  # noqa: E731
    assert dict(load(PYPTO).kwargs) == {"target_memory": pl.Mem.Vec}
    assert dict(load(OWN).kwargs) == {}


def test_a_module_importing_the_pypto_package_reads_as_its_dialect():
    assert (
        pl.parse(OWN.replace("import pypto_egg.language as pl", "from pypto import language as pl")).dialect
        == "pypto"
    )


WHILE = """
import pypto.language as pl

@pl.program
class W:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        for (i,) in pl.while_(init_values=(0,)):
            pl.cond(i < n)
            j: pl.Scalar[pl.INDEX] = i + 1
            i_out: pl.Scalar[pl.INDEX] = pl.yield_(j)
        return i_out

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def cb(x: pl.Tensor[[4], pl.FP16]) -> pl.Tensor[[4], pl.FP16]:
        pl.func_attr({"tag": 1})
        ...
"""


def test_a_while_loop_prints_the_tuple_target_pyptos_reader_requires_and_an_empty_body_prints_as_dots():
    text = python_print(pl.parse(WHILE))
    assert "for (i,) in pl.while_(init_values=(0,)):" in text
    assert (
        "pl.func_attr({'tag': 1})\n        ...\n" in text or 'pl.func_attr({"tag": 1})\n        ...\n' in text
    )
    ir.assert_structural_equal(pl.parse(text), pl.parse(WHILE))


SHADOWED = """
import pypto.language as pl

@pl.program
class S:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        a: pl.Scalar[pl.INDEX] = x + 1
        x_1: pl.Scalar[pl.INDEX] = a + 1
        b: pl.Scalar[pl.INDEX] = x_1 + 2
        return b
"""


def test_variables_that_share_a_hint_print_as_pyptos_printer_names_them():
    """PyPTO's printer: a hint of one variable prints as itself; several variables of one hint print as
    `x`, `x_1`, ... skipping those names. With hints `x` (twice) and `x_1`, the second `x` is `x_2`."""
    hints = {"main": {"a": "x"}}  # the variable printed `a` was hinted `x`, as the parameter is
    program = pl.parse(SHADOWED, name_hints=hints)
    fn = program.function("main")
    assert [fn.params[0].var.name, fn.body[0].var.name, fn.body[1].var.name] == ["x", "x", "x_1"]
    text = python_print(program)
    assert "x_2: pl.Scalar[pl.INDEX] = x + 1" in text
    assert "x_1: pl.Scalar[pl.INDEX] = x_2 + 1" in text
    ir.assert_structural_equal(pl.parse(text), program)


def test_names_the_pass_makes_come_from_the_hints():
    """A per-batch store result is named after the store's variable: its hint, not its printed name."""
    text = """
import pypto.language as pl

@pl.program
class B:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[[2, 16, 32], pl.FP16], b: pl.Tensor[[2, 32, 16], pl.FP16], out: pl.Out[pl.Tensor[[2, 16, 16], pl.FP32]]) -> pl.Tensor[[2, 16, 16], pl.FP32]:
        at: pl.Tile[[2, 16, 32], pl.FP16, pl.Mem.Mat] = pl.tile.load(a, [0, 0, 0], [2, 16, 32], target_memory=pl.Mem.Mat)
        bt: pl.Tile[[2, 32, 16], pl.FP16, pl.Mem.Mat] = pl.tile.load(b, [0, 0, 0], [2, 32, 16], target_memory=pl.Mem.Mat)
        c: pl.Tile[[2, 16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.batch_matmul(at, bt)
        out_1: pl.Tensor[[2, 16, 16], pl.FP32] = pl.tile.store(c, [0, 0, 0], out)
        return out_1
"""
    before = pl.parse(text, name_hints={"main": {"out_1": "out"}})
    after = passes.flatten_tile_nd_to_2d()(before)
    printed = python_print(after)
    assert "out_0: pl.Tensor[[2, 16, 16], pl.FP32] = pl.tile.store(" in printed
    assert "out_1_0" not in printed
    check_meaning(before, after)


def test_each_printed_line_knows_the_statement_it_prints():
    program = pl.parse(OWN, "own.py")
    text, spans = print_program_lines(program)
    lines = text.splitlines()
    store = next(i for i, line in enumerate(lines) if "store(" in line)
    assert spans[store] is not None and spans[store].line == 9
    assert all(s is None for s in spans[:3])  # the header
    assert len(spans) == len(lines)
