"""print → parse gives a structurally equal program, for every construct (issue: foundation)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pypto_egg.language as pl
from pypto_egg import ir

from corpus import PROGRAMS, wrap
from test_flatten_hypothesis import programs as generated_programs


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_print_parse_roundtrip(name):
    program = pl.parse(PROGRAMS[name])
    text = ir.python_print(program)
    again = pl.parse(text)
    ir.assert_structural_equal(program, again)
    assert ir.python_print(again) == text  # printing is a fixpoint


def test_corpus_is_large_and_uses_every_registered_op():
    assert len(PROGRAMS) >= 40
    used: set[str] = set()
    for text in PROGRAMS.values():
        for fn in pl.parse(text).functions:
            from pypto_egg.ir.walk import walk_calls

            used |= {call.op for _, call in walk_calls(fn.body)}
    missing = {op for op, d in ir.REGISTRY.items() if d.deduces} - used
    assert not missing, f"ops without a round-trip program: {sorted(missing)}"


ANNOTATED_OPS = sorted(op for op, d in ir.REGISTRY.items() if not d.deduces)


@pytest.mark.parametrize("op", ANNOTATED_OPS)
def test_every_annotated_op_roundtrips_with_its_signature(op):
    """An op without deduction takes its annotation, keeps its operands and keywords, and prints back."""
    d = ir.REGISTRY[op]
    args = ["t", "3", "[0, i]", "pl.Mem.Vec", "'name'", "1.5", "pl.const(2, pl.INT32)", "[t, t]"]
    positional = ", ".join(args[i % len(args)] for i in range(len(d.params)))
    kw = f", {d.params[-1]}=i" if d.params and len(d.params) > 1 else ""
    if kw:
        positional = ", ".join(args[i % len(args)] for i in range(len(d.params) - 1))
    sep = ", " if positional and kw else ""
    spelled = op if op.startswith("pld.") else f"pl.{op}"
    text = wrap(
        f"t = pl.load(x, [0, 0, 0], [2, 3, 4])\ni = pl.cast(2, pl.INDEX)\n"
        f"r: pl.Tile[[2, 3, 4], pl.FP16, pl.Mem.Vec] = {spelled}({positional}{sep}{kw.lstrip(', ')})\n"
        f"{spelled}({positional})\nreturn out"
    )
    program = pl.parse(text)
    assign = program.functions[0].body[2]
    assert assign.value.op == op and assign.var.type == ir.make_tile_type(
        (ir.ConstInt(2), ir.ConstInt(3), ir.ConstInt(4)), ir.DataType.FP16, ir.MemorySpace.Vec
    )
    printed = ir.python_print(program)
    assert f"= {spelled}({positional}{sep}{kw.lstrip(', ')})" in printed
    ir.assert_structural_equal(program, pl.parse(printed))


def test_annotated_op_rejects_unknown_keywords_and_extra_operands():
    with pytest.raises(pl.DSLError, match=r"tile.extract has no keyword 'colour'"):
        pl.parse(
            wrap(
                "t = pl.load(x, [0, 0, 0], [2, 3, 4])\nr: pl.Tile[[2, 4], pl.FP32] = pl.tile.extract(t, 0, 0, [2, 4], colour=1)\nreturn out"
            )
        )
    with pytest.raises(pl.DSLError, match=r"tile.get_block_idx takes at most 0 operands"):
        pl.parse(wrap("i: pl.Scalar[pl.INDEX] = pl.tile.get_block_idx(1)\nreturn out"))


def test_printer_form_follows_the_reference():
    text = ir.python_print(pl.parse(PROGRAMS["seed"]))
    assert text.startswith("# pypto.program: P\nimport pypto_egg.language as pl\n")
    assert 'N = pl.dynamic("N")' not in text  # only dims the program uses are declared
    assert "out_1: pl.Tensor[[2, 3, 4], pl.FP32] = pl.tile.store(u, [0, 0, 0], out)" in text
    assert "t: pl.Tile[[2, 3, 4], pl.FP32] = pl.tile.load(x, [0, 0, 0], [2, 3, 4], [2, 3, 4])" in text
    dyn = ir.python_print(pl.parse(PROGRAMS["dynamic_valid"]))
    assert 'S = pl.dynamic("S")' in dyn
    assert "pl.TileView(valid_shape=[1, v, 64])" in dyn
    cast = ir.python_print(pl.parse(PROGRAMS["cast"]))
    assert "mode='round'" in cast
    full = ir.python_print(pl.parse(PROGRAMS["create_full"]))
    assert "pl.tile.full([2, 3, 4], dtype=pl.FP32, value=2.0)" in full
    calls = ir.python_print(pl.parse(PROGRAMS["calls"]))
    assert (
        "@pl.function(type=pl.FunctionType.InCore, level=pl.Level.CHIP_DIE, role=pl.Role.SubWorker)" in calls
    )
    assert "def worker(x: pl.Tensor[[2, 3, 4], pl.FP32])" in calls


def test_implicit_tile_view_is_canonicalised_away():
    text = PROGRAMS["seed"].replace(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])",
        "t: pl.Tile[[2, 3, 4], pl.FP32, pl.Mem.Mat, pl.TileView(valid_shape=[2, 3, 4], blayout=pl.TileLayout.col_major, "
        "slayout=pl.TileLayout.row_major, fractal=512)] = pl.load(x, [0, 0, 0], [2, 3, 4], target_memory=pl.Mem.Mat)",
    )
    t = pl.parse(text).functions[0].body[0].var.type
    assert t.view is None


@settings(max_examples=60)
@given(generated_programs())
def test_generated_programs_roundtrip(program):
    before, _ = program
    ir.assert_structural_equal(before, pl.parse(ir.python_print(before)))


@given(st.integers(min_value=-50, max_value=50), st.integers(min_value=1, max_value=9))
def test_expression_printing_keeps_structure(a, b):
    text = PROGRAMS["scalar_arith"].replace("a = k * 2 + 1", f"a = k * {b} - ({a} - k) // {b}")
    program = pl.parse(text)
    ir.assert_structural_equal(program, pl.parse(ir.python_print(program)))
