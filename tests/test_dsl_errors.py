"""DSL errors point at file:line:col and say what was expected (issue: foundation)."""

from __future__ import annotations

import pytest

import pypto_egg.language as pl
from pypto_egg.errors import DSLError

from corpus import wrap


@pytest.mark.parametrize(
    ("body", "line", "pattern"),
    [
        ("t = pl.load(q, [0, 0, 0], [2, 3, 4])\nreturn out", 10, r"name 'q' is not defined"),
        ("t = pl.load(x, [0, 0], [2, 3])\nreturn out", 10, r"one entry per axis of the rank-3 tensor \[2, 3, 4\]"),
        ("t = pl.tile.frobnicate(x)\nreturn out", 10, r"unknown op 'pl.tile.frobnicate'"),
        ("t = pl.load(x, [0, 0, 0], [2, 3, 4], colour=1)\nreturn out", 10, r"tile.load has no keyword 'colour'"),
        ("t = pl.load(x, [0, 0, 0], [2, 3, 4])\nu = pl.tile.add(t, x)\nreturn out", 11, r"operand 'rhs' must be a tile"),
        ("t: pl.Tile[[2, 3, 4], pl.FP16] = pl.load(x, [0, 0, 0], [2, 3, 4])\nreturn out", 10,
         r"annotation pl.Tile\[\[2, 3, 4\], pl.FP16\] disagrees with the value's type pl.Tile\[\[2, 3, 4\], pl.FP32\]"),
        ("t: pl.Tile[[5, 4], pl.FP32] = pl.load(x, [0, 0, 0], [2, 3, 4])\nreturn out", 10, r"disagrees"),
        ("for a in pl.while_(init_values=(out,)):\n    r = pl.yield_(a)\nreturn out", 10, r"must start with pl.cond"),
        ("x += 1\nreturn out", 10, r"unsupported statement 'x \+= 1'"),
        ("t = pl.tile.exp()\nreturn out", 10, r"tile.exp is missing operand 'tile'"),
        ("with open('f'):\n    pass\nreturn out", 10, r"expected 'with pl.<scope>\(...\):'"),
        ("for i in range(3):\n    pass\nreturn out", 10, r"unsupported loop 'range\(3\)' \(expected pl.range"),
    ],
)  # fmt: skip
def test_dsl_errors_name_position_and_expectation(body, line, pattern):
    with pytest.raises(DSLError, match=pattern) as info:
        pl.parse(wrap(body), filename="kernel.py")
    assert str(info.value).startswith(f"kernel.py:{line}:")


def test_syntax_errors_and_missing_programs():
    with pytest.raises(DSLError, match=r"kernel.py:1:\d+: invalid Python syntax"):
        pl.parse("def (", filename="kernel.py")
    with pytest.raises(DSLError, match="no @pl.program class"):
        pl.parse("x = 1\n")
    with pytest.raises(DSLError, match="needs a @pl.function decorator"):
        pl.parse("import pypto_egg.language as pl\n@pl.program\nclass P:\n    def f(self):\n        pass\n")


def test_decorated_class_reports_its_own_file_position():
    with pytest.raises(DSLError) as info:

        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.InCore)
            def main(self, x: pl.Tensor[[2, 3, 4], pl.FP32]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
                t = pl.load(x, [0, 0, 0], [2, 3, 4], valid_shape=[2, 3])
                return x

    assert "test_dsl_errors.py:" in str(info.value)
    assert "valid_shape [2, 3]" in str(info.value)


def test_parameters_need_annotations_and_self():
    src = "import pypto_egg.language as pl\n@pl.program\nclass P:\n    @pl.function\n    def f(self, x):\n        return x\n"
    with pytest.raises(DSLError, match="parameter 'x' needs a type annotation"):
        pl.parse(src)
    with pytest.raises(DSLError, match="must take self as its first parameter"):
        pl.parse(src.replace("(self, x)", "(x: pl.Scalar[pl.INDEX])"))
