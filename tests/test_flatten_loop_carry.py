"""§Q loop-carry valid-shape repair: B-200 (decision), B-201 (rewrite), B-202 (left alone)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pypto_egg.language as pl
from pypto_egg import interp, ir
from pypto_egg.backend import ASCEND_910B, Backend
from pypto_egg.ir import python_print
from pypto_egg.ir.walk import blocks

from corpus import wrap
from helpers import flatten

PARAMS = (
    "x: pl.Tensor[[{m}, 32], pl.FP16], w: pl.Tensor[[32, 256], pl.FP16], v: pl.Scalar[pl.INDEX], "
    "out: pl.Out[pl.Tensor[[{m}, 256], pl.FP32]]"
)


def carry_program(
    body: str, m: int = 64, memory: str = "Acc", rows: str = "v", narrow: str = "v"
) -> ir.Program:
    """An accumulator seeded by tile.create and carried through a loop whose yield is narrowed to `narrow` rows."""
    text = f"""
acc = pl.tile.create([{m}, 256], dtype=pl.FP32, target_memory=pl.Mem.{memory})
for i, (c,) in pl.range(2, init_values=(acc,)):
    a = pl.load(x, [0, 0], [{m}, 32])
    b = pl.load(w, [0, 0], [32, 256])
{body}
    n = pl.tile.set_validshape(d, {narrow}, 256)
    r = pl.yield_(n)
s = pl.tile.set_validshape(r, {rows}, 256)
out = pl.store(s, [0, 0], out)
return out"""
    return pl.parse(wrap(text, PARAMS.format(m=m), f"pl.Tensor[[{m}, 256], pl.FP32]"))


MATMUL = "    d = pl.tile.matmul_acc(c, a, b)"


def carry_of(after: ir.Program) -> ir.ForStmt:
    return next(s for s in after.functions[0].body if isinstance(s, ir.ForStmt))


def test_b200_b201_row_narrowed_acc_carry_is_reseeded_with_a_compact_storage_and_its_valid_shape():
    before = carry_program(MATMUL)
    after = flatten(before, scalars={"v": 37})
    text = python_print(after)
    assert (
        "acc_narrowed_storage: pl.Tile[[64, 256], pl.FP32, pl.Mem.Acc, pl.TileView(compact=pl.CompactMode.normal)] = "
        "pl.tile.create([64, 256], dtype=pl.FP32, target_memory=pl.Mem.Acc, compact=True)"
    ) in text
    assert "acc_narrowed: pl.Tile[[64, 256], pl.FP32, pl.Mem.Acc, pl.TileView(valid_shape=[v, 256], " in text
    assert "= pl.tile.set_validshape(acc_narrowed_storage, v, 256)" in text
    loop = carry_of(after)
    assert loop.iter_args[0].init.name == "acc_narrowed"
    for var in (loop.iter_args[0].var, loop.return_vars[0]):
        assert [str(getattr(d, "name", getattr(d, "value", d))) for d in var.type.valid_shape] == ["v", "256"]
    matmul = next(s for s in loop.body if isinstance(s, ir.AssignStmt) and s.value.op == "tile.matmul_acc")
    assert matmul.var.type.valid_shape[0].name == "v"  # re-typed through the op's own deduction


def test_b200_static_narrow_rows_whose_pitch_differs_are_reseeded():
    after = flatten(carry_program(MATMUL, rows="40", narrow="40"))
    assert "pl.tile.set_validshape(acc_narrowed_storage, 40, 256)" in python_print(after)


@pytest.mark.parametrize(
    ("why", "program"),
    [
        ("pitch coincides: ceil(50/16)*16 == 64", lambda: carry_program(MATMUL, rows="50", narrow="50")),
        ("single-fractal [16, N] box", lambda: carry_program(MATMUL, m=16, rows="v", narrow="v")),
        ("Vec carry", lambda: carry_program("    d = pl.tile.add(c, c)", memory="Vec")),
        (
            "extent computed in the body",
            lambda: carry_program(MATMUL + "\n    u = pl.min(v + i, 64)", rows="v", narrow="u"),
        ),
    ],
)
def test_b202_carries_left_alone(why, program):
    after = flatten(program(), scalars={"v": 9})
    assert "_narrowed" not in python_print(after), why


def test_b202_full_height_carry_is_left_alone():
    text = """
acc = pl.tile.create([64, 256], dtype=pl.FP32, target_memory=pl.Mem.Acc)
for i, (c,) in pl.range(2, init_values=(acc,)):
    a = pl.load(x, [0, 0], [64, 32])
    b = pl.load(w, [0, 0], [32, 256])
    d = pl.tile.matmul_acc(c, a, b)
    n = pl.tile.set_validshape(d, 64, v)
    r = pl.yield_(n)
out = pl.store(r, [0, 0], out)
return out"""
    before = pl.parse(wrap(text, PARAMS.format(m=64), "pl.Tensor[[64, 256], pl.FP32]"))
    after = flatten(before, scalars={"v": 256})
    assert "_narrowed" not in python_print(after)


def test_b201_aliases_if_results_and_later_loops_are_retyped():
    text = """
acc = pl.tile.create([64, 256], dtype=pl.FP32, target_memory=pl.Mem.Acc)
for i, (c,) in pl.range(2, init_values=(acc,)):
    e = c
    a = pl.load(x, [0, 0], [64, 32])
    b = pl.load(w, [0, 0], [32, 256])
    if i == 0:
        d0 = pl.tile.matmul_acc(e, a, b)
        d = pl.yield_(d0)
    else:
        d1 = pl.tile.matmul_acc(e, a, b)
        d = pl.yield_(d1)
    n = pl.tile.set_validshape(d, v, 256)
    r = pl.yield_(n)
for j, (g,) in pl.range(1, init_values=(r,)):
    h = pl.tile.set_validshape(g, v, 256)
    q = pl.yield_(h)
z = pl.tile.set_validshape(q, v, 256)
out = pl.store(z, [0, 0], out)
return out"""
    before = pl.parse(wrap(text, PARAMS.format(m=64), "pl.Tensor[[64, 256], pl.FP32]"))
    after = flatten(before, scalars={"v": 21})
    loops = [s for s in after.functions[0].body if isinstance(s, ir.ForStmt)]
    alias = loops[0].body[0]
    assert isinstance(alias, ir.AssignStmt) and alias.var.type.valid_shape[0].name == "v"
    branch = next(s for s in loops[0].body if isinstance(s, ir.IfStmt))
    assert branch.return_vars[0].type.valid_shape[0].name == "v"
    assert loops[1].iter_args[0].var.type.valid_shape[0].name == "v"  # the later loop re-minted its carry


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from([16, 32, 48, 64]),
    st.sampled_from(["v", "static", "body"]),
    st.sampled_from(["Acc", "Vec"]),
    st.integers(1, 16),
)
def test_generated_accumulator_loops_whose_yields_narrow(m, kind, memory, v):
    """Whatever the box, extent and space: the meaning is kept, and a re-seeded carry advertises the yields' rows
    while a carry left alone is one B-202 names."""
    static = max(1, m - 3 * v) if kind == "static" else None
    narrow = {"v": "v", "static": str(static), "body": "u"}[kind]
    body = MATMUL if memory == "Acc" else "    d = pl.tile.add(c, c)"
    if kind == "body":
        body += "\n    u = pl.min(v + i, 16)"
    before = carry_program(body, m=m, memory=memory, rows=narrow if kind != "body" else "v", narrow=narrow)
    after = flatten(before, scalars={"v": v})
    loop = carry_of(after)
    rows = loop.iter_args[0].var.type.valid_shape[0]
    if "_narrowed" in python_print(after):
        assert memory == "Acc" and kind != "body" and m > 16
        assert str(getattr(rows, "name", getattr(rows, "value", ""))) == narrow
    else:
        pitch = static is not None and -(-static // 16) * 16 == m
        assert memory == "Vec" or kind == "body" or m <= 16 or pitch


ND_SEED = """
acc = pl.tile.create([1, 64, 256], dtype=pl.INT32, target_memory=pl.Mem.Acc)
for k, (c,) in pl.range(4, init_values=(acc,)):
    a = pl.load(x, [0, 0, k * 512], [1, 64, 512], [1, v, 512], target_memory=pl.Mem.Mat)
    b = pl.load(w, [0, k * 512, 0], [1, 512, 256], target_memory=pl.Mem.Mat)
    if k == 0:
        d = pl.tile.batch_matmul(a, b)
        e = pl.yield_(d)
    else:
        d2 = pl.tile.batch_matmul_acc(c, a, b)
        e = pl.yield_(d2)
    r = pl.yield_(e)
out = pl.store(r, [0, 0, 0], out)
return out"""
ND_PARAMS = (
    "x: pl.Tensor[[1, 64, 2048], pl.INT8], w: pl.Tensor[[1, 2048, 256], pl.INT8], v: pl.Scalar[pl.INDEX], "
    "out: pl.Out[pl.Tensor[[1, 64, 256], pl.INT32]]"
)


@pytest.mark.unvalidated
def test_b200_b201_an_nd_seed_carried_through_batched_matmul_pages_is_reseeded():
    """§Q with an N-D seed: the pages of a left operand loaded with valid rows v keep them (a window is valid
    where its source is), the 2-D matmuls give the narrowed compact Acc, and the carry is repaired."""
    before = pl.parse(wrap(ND_SEED, ND_PARAMS, "pl.Tensor[[1, 64, 256], pl.INT32]"))
    # rows >= v of the accumulator are what no mad wrote (the repair's reason): the seed's type claims them, the
    # repaired carry does not, so the store writes v rows. The rows both programs define are compared.
    after = flatten(before, meaning=False)
    for v in (37, 64):
        inputs = interp.random_inputs(before.function("main"), v, scalars={"v": v})
        want, got = (interp.run(p, "main", inputs)["out"] for p in (before, after))
        np.testing.assert_array_equal(got[:, :v], want[:, :v])
    text = python_print(after)
    narrowed = (
        "pl.TileView(valid_shape=[pl.min(v, pl.const(64, pl.INDEX)), 256], compact=pl.CompactMode.normal)"
    )
    assert (
        "lhs_slice_0: pl.Tile[[64, 512], pl.INT8, pl.Mem.Mat, pl.TileView(valid_shape=[pl.min(v, pl.const(64, "
        "pl.INDEX)), 512])] = pl.tile.slice(a, [64, 512], [0, 0])"
    ) in text
    assert f"d: pl.Tile[[64, 256], pl.INT32, pl.Mem.Acc, {narrowed}] = pl.tile.matmul(" in text
    assert "pl.tile.create([64, 256], dtype=pl.INT32, target_memory=pl.Mem.Acc, compact=True)" in text
    assert (
        f"acc_narrowed: pl.Tile[[64, 256], pl.INT32, pl.Mem.Acc, {narrowed}] = pl.tile.set_validshape("
        in text
    )
    loop = carry_of(after)
    assert loop.iter_args[0].init.name == "acc_narrowed"
    assert f"r: pl.Tile[[64, 256], pl.INT32, pl.Mem.Acc, {narrowed}] = pl.yield_(e)" in text


@pytest.mark.parametrize("rows", [16, 64])
def test_b202_an_nd_seed_whose_pages_are_whole_is_left_alone(rows):
    """Whole pages (the operand's valid rows are its box) narrow nothing, so the N-D seed is only flattened."""
    text = ND_SEED.replace("[1, v, 512]", f"[1, {rows}, 512]").replace("64", str(rows))
    params = ND_PARAMS.replace("64", str(rows))
    after = flatten(pl.parse(wrap(text, params, f"pl.Tensor[[1, {rows}, 256], pl.INT32]")), scalars={"v": 7})
    assert "acc_narrowed" not in python_print(after)
    assert carry_of(after).iter_args[0].init.name == "acc"


def test_b202_the_fractal_height_is_the_backends():
    """A [32, 256] carry narrowed to v rows is re-seeded on a 16-row fractal, and left alone on a backend
    whose fractal is 32 rows high (its box is then one fractal block: both readings agree)."""
    before = carry_program(MATMUL, m=32)
    assert "acc_narrowed" in python_print(flatten(before, backend="Ascend910B", scalars={"v": 7}))
    tall = Backend("TallFractal", ASCEND_910B.capacity, fractal_rows=32)
    after = flatten(before, backend=tall, scalars={"v": 7})
    assert "acc_narrowed" not in python_print(after)


def test_b200_the_rules_decide_which_carries_are_reseeded(monkeypatch):
    """The repair states facts and applies decisions; rules/narrow.egg makes them. With the rules' answer
    replaced by "left alone" the carry stays as it was, and the facts of the narrowed carry above reach the
    rules as the decision to re-seed it compactly, at the yield's rows and the seed's columns."""
    from pypto_egg.egraph import narrowing
    from pypto_egg.extract.narrow_carry import CarryAxis, CarryFacts, Reseed

    facts = CarryFacts(2, 2, True, True, 64, (CarryAxis(False, True, False, False, 64, -1, False, False),
                                            CarryAxis(True, True, True, True, 256, 256, False, False)))  # fmt: skip
    assert narrowing.decide_reseeds([facts], 16) == [Reseed((True, False), "compact")]
    # a carry in Vec, and the same carry of a single fractal block, are left alone (B-202)
    vec = CarryFacts(2, 2, False, True, 64, facts.axes)
    block = CarryFacts(2, 2, True, True, 16, facts.axes)
    assert narrowing.decide_reseeds([vec, facts, block], 16) == [None, Reseed((True, False), "compact"), None]

    monkeypatch.setattr(narrowing, "decide_reseeds", lambda carries, fractal: [None] * len(carries))
    text = python_print(flatten(carry_program(MATMUL), scalars={"v": 37}))
    assert "acc_narrowed" not in text


FLAT_OUT = ND_PARAMS.replace(
    "pl.Out[pl.Tensor[[1, 64, 256], pl.INT32]]", "pl.Out[pl.Tensor[[64, 256], pl.INT32]]"
)
NARROWED_ROWS = "valid_shape=[pl.min(v, pl.const(64, pl.INDEX)), 256]"
# where the repaired carry's value flows after its loop, and the variable the store then reads
AFTER_THE_LOOP = {
    "a reshape": ("flat = pl.tile.reshape(r, [64, 256])\nout = pl.store(flat, [0, 0], out)", ["flat"]),
    "a bare alias, then a reshape": (
        "z = r\nflat = pl.tile.reshape(z, [64, 256])\nout = pl.store(flat, [0, 0], out)", ["z", "flat"]),
    "a second loop that carries it": (
        "for j, (g,) in pl.range(2, init_values=(r,)):\n    q = pl.yield_(g)\nout = pl.store(q, [0, 0], out)",
        ["q"]),
    "a reshape inside a second loop": (
        "for j, (g,) in pl.range(2, init_values=(r,)):\n    g2 = pl.tile.reshape(g, [64, 256])\n"
        "    q = pl.yield_(g2)\nflat = pl.tile.reshape(q, [64, 256])\nout = pl.store(flat, [0, 0], out)",
        ["g2", "q", "flat"]),
    "a reshape to other rows": (
        "flat = pl.tile.reshape(r, [1, 64, 256])\nout = pl.store(flat, [0, 0, 0], out)", ["flat"]),
}  # fmt: skip


@pytest.mark.unvalidated  # the rows past v are what no mad wrote: the rows both programs define are compared below
@pytest.mark.parametrize("where", sorted(AFTER_THE_LOOP))
def test_b201_the_narrowed_rows_follow_the_carry_wherever_its_value_flows(where):
    """§Q: the def-use closure of a repaired carry is re-typed through the ops' own deductions, after the loop
    too: an alias, a later loop's carry, and tile.reshape, whose deduction maps the valid shape as the
    reference's does (ComputeReshapeValidShape), so the store reads the narrowed rows, not the full box."""
    tail, names = AFTER_THE_LOOP[where]
    out_shape = "[1, 64, 256]" if "[1, 64, 256]" in tail else "[64, 256]"
    params = FLAT_OUT if out_shape == "[64, 256]" else ND_PARAMS
    before = pl.parse(wrap(ND_SEED.replace("out = pl.store(r, [0, 0, 0], out)", tail), params,
                           f"pl.Tensor[{out_shape}, pl.INT32]"))  # fmt: skip
    after = flatten(before, meaning=False)
    for v in (37, 64):
        inputs = interp.random_inputs(before.function("main"), v, scalars={"v": v})
        want, got = (interp.run(p, "main", inputs)["out"].reshape(64, 256) for p in (before, after))
        np.testing.assert_array_equal(got[:v], want[:v])
    typed = {
        line.split(":")[0].strip(): line for line in python_print(after).splitlines() if ": pl.Tile[" in line
    }
    for name in names:
        assert NARROWED_ROWS in typed[name], typed[name]


@pytest.mark.parametrize(
    ("shape", "valid", "new", "want"),
    [
        ([64, 256], [37, 256], [64, 256], [37, 256]),  # the same shape keeps its box
        ([1, 64, 256], [1, 37, 256], [64, 256], [37, 256]),  # a unit axis erased (case 3)
        ([64, 256], [37, 256], [1, 64, 256], [1, 37, 256]),  # a unit axis inserted
        ([64, 256], [32, 256], [32, 512], [16, 512]),  # a flat prefix of whole rows (case 4)
        ([4, 8, 16], [2, 8, 16], [64, 16], [16, 16]),
        ([64, 256], [64, 256], [16384], [16384]),  # whole stays whole
        ([64, 256], [0, 256], [256, 64], [0, 0]),  # empty stays empty
    ],
)
def test_reshape_maps_the_valid_shape_as_the_reference_does(shape, valid, new, want):
    from pypto_egg.ir import ConstInt
    from pypto_egg.ir.deduce_reshape import reshape_valid

    got = reshape_valid("tile.reshape", [ConstInt(d) for d in valid], [ConstInt(d) for d in shape],
                        [ConstInt(d) for d in new], True)  # fmt: skip
    assert [d.value for d in got] == want


@pytest.mark.parametrize(
    ("shape", "valid", "new", "row_major", "why"),
    [
        ([64, 256], [64, 100], [256, 64], True, "Dimension 1 is valid for only part"),
        ([4, 5], [3, 5], [2, 10], True, r"no region of \[2, 10\] covers exactly"),
        ([64, 256], [37, 256], [128, 128], False, "not stored row-major"),
    ],
)
def test_a_reshape_no_box_can_describe_is_an_error_that_says_why(shape, valid, new, row_major, why):
    from pypto_egg.errors import TypeDeductionError
    from pypto_egg.ir import ConstInt
    from pypto_egg.ir.deduce_reshape import reshape_valid

    with pytest.raises(TypeDeductionError, match=why):
        reshape_valid("tile.reshape", [ConstInt(d) for d in valid], [ConstInt(d) for d in shape],
                      [ConstInt(d) for d in new], row_major)  # fmt: skip


ACC_NZ = (ir.TileLayout.col_major, ir.TileLayout.row_major, 1024)
# where the repaired carry goes after its loop, and the variable whose type gains an explicit view
LAYOUT_KEPT = {
    "a reshape": ("flat = pl.tile.reshape(r, [64, 256])\nout = pl.store(flat, [0, 0], out)", "flat", "[64, 256]"),
    "a reshape to other rows": (
        "flat = pl.tile.reshape(r, [1, 64, 256])\nout = pl.store(flat, [0, 0, 0], out)", "flat", "[1, 64, 256]"),
    "a reinterpreted view": (
        "flat = pl.tile.reinterpret_view(r, pl.FP32)\nout = pl.store(flat, [0, 0], out)", "flat", "[64, 256]"),
}  # fmt: skip


@pytest.mark.unvalidated  # the rows past v are what no mad wrote: the rows both programs define are compared below
@pytest.mark.parametrize("where", sorted(LAYOUT_KEPT))
def test_a_type_that_gains_an_explicit_view_keeps_its_memory_spaces_layout(where):
    """§Q: the repaired carry's narrowed rows follow it into the reshape or reinterpretation after the loop, in an
    explicit view on an Acc tile: the layout is the Acc's NZ (col_major, row_major, 1024), never Vec's defaults
    (row_major, none_box, 512)."""
    from pypto_egg.ir.tiles import tile_layouts

    tail, name, out_shape = LAYOUT_KEPT[where]
    dtype = "pl.FP32" if "reinterpret" in tail else "pl.INT32"
    params = ND_PARAMS.replace(
        "pl.Out[pl.Tensor[[1, 64, 256], pl.INT32]]", f"pl.Out[pl.Tensor[{out_shape}, {dtype}]]"
    )
    before = pl.parse(wrap(ND_SEED.replace("out = pl.store(r, [0, 0, 0], out)", tail), params,
                           f"pl.Tensor[{out_shape}, {dtype}]"))  # fmt: skip
    after = flatten(before, meaning=False)
    typed = next(s.var.type for body in blocks(after.functions[0].body) for s in body
                 if isinstance(s, ir.AssignStmt) and s.var.name == name)  # fmt: skip
    assert (
        typed.memory is ir.MemorySpace.Acc and typed.view is not None and typed.view.valid_shape is not None
    )
    assert tile_layouts(typed) == ACC_NZ, python_print(typed)
    for v in (37, 64):
        inputs = interp.random_inputs(before.function("main"), v, scalars={"v": v})
        want, got = (interp.run(p, "main", inputs)["out"].reshape(64, 256) for p in (before, after))
        np.testing.assert_array_equal(got[:v], want[:v])
