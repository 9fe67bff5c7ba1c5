"""Structural equality: equal up to a consistent renaming of variables (issue: foundation)."""

from __future__ import annotations

import re

import pytest

import pypto_egg.language as pl
from pypto_egg import ir

from corpus import PROGRAMS


def parse(name: str, **subs: str):
    text = PROGRAMS[name]
    for old, new in subs.items():
        text = text.replace(old.replace("_SP_", " "), new)
    return pl.parse(text)


def test_renamed_variables_are_equal():
    a = pl.parse(PROGRAMS["sub_mul_div"])
    b = pl.parse(re.sub(r"\ba\b", "alpha", PROGRAMS["sub_mul_div"]))
    assert ir.structural_equal(a, b)


@pytest.mark.parametrize(
    ("name", "old", "new", "path"),
    [
        (
            "seed",
            "t = pl.load(x, [0, 0, 0], [2, 3, 4])",
            "t = pl.load(x, [0, 0, 0], [1, 3, 4])",
            "body[0].value.args[2]",
        ),
        ("seed", "pl.tile.add(t, t)", "pl.tile.sub(t, t)", "body[1].value"),
        ("cast", "target_type=pl.FP16", "target_type=pl.BF16", "body[1].value"),
    ],
    ids=["shape", "op", "dtype"],
)
def test_changes_are_unequal_and_named_by_path(name, old, new, path):
    a = pl.parse(PROGRAMS[name])
    b = pl.parse(PROGRAMS[name].replace(old, new))
    assert not ir.structural_equal(a, b)
    with pytest.raises(ir.StructuralMismatch) as info:
        ir.assert_structural_equal(a, b)
    assert path in info.value.path and "function 'main'" in info.value.path
    assert "lhs:" in str(info.value) and "rhs:" in str(info.value)


def test_kwarg_and_statement_order_matter():
    a = pl.parse(PROGRAMS["move"])
    b = pl.parse(
        PROGRAMS["move"].replace(
            "a = pl.tile.move(t, target_memory=pl.Mem.Mat)", "a = pl.tile.move(t, target_memory=pl.Mem.Left)"
        )
    )
    assert not ir.structural_equal(a, b)
    c = pl.parse(PROGRAMS["unary"])
    d = pl.parse(
        PROGRAMS["unary"].replace(
            "a = pl.tile.exp(t)\n        b = pl.tile.neg(a)", "b = pl.tile.neg(t)\n        a = pl.tile.exp(b)"
        )
    )
    assert not ir.structural_equal(c, d)


def test_inconsistent_renaming_is_unequal():
    a = pl.parse(PROGRAMS["sub_mul_div"])
    b = pl.parse(PROGRAMS["sub_mul_div"].replace("c = pl.tile.div(b, t)", "c = pl.tile.div(a, t)"))
    with pytest.raises(ir.StructuralMismatch, match="does not correspond"):
        ir.assert_structural_equal(a, b)


def test_extra_statement_is_reported():
    a = pl.parse(PROGRAMS["seed"])
    b = pl.parse(
        PROGRAMS["seed"].replace("u = pl.tile.add(t, t)", "u = pl.tile.add(t, t)\n        w = pl.tile.exp(u)")
    )
    with pytest.raises(ir.StructuralMismatch):
        ir.assert_structural_equal(a, b)
