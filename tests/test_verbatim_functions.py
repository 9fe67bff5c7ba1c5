"""Functions the DSL's reader cannot read: kept as their text where the pass never has to change them, an error
naming the construct where it may (issue: the last mile; PyPTO's programs hold orchestration code in Python
that only PyPTO's own tools run)."""

from __future__ import annotations

import textwrap

import pytest

import pypto_egg.language as pl
from pypto_egg import interp, passes
from pypto_egg.errors import DSLError
from pypto_egg.interp.interpreter import InterpError
from pypto_egg.ir import python_print

HEAD = """
import pypto.language as pl


@pl.program
class Mixed:
    @pl.function(type=pl.FunctionType.InCore)
    def nd_incore(self, x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
        t: pl.Tile[[2, 3, 4], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0, 0], [2, 3, 4])
        u: pl.Tile[[2, 3, 4], pl.FP32, pl.Mem.Vec] = pl.tile.add(t, t)
        out_1: pl.Tensor[[2, 3, 4], pl.FP32] = pl.tile.store(u, [0, 0, 0], out)
        return out_1
"""

UNREADABLE = {
    "torch calls and an import": """
    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, x: pl.Tensor[[2, 3, 4], pl.FP32]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
        import torch
        y = torch.full((2, 3, 4), 0.0)
        z = torch.add(y, y)
        out: pl.Tensor[[2, 3, 4], pl.FP32] = self.nd_incore(x, z)
        return out
""",
    "is not None": """
    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, x: pl.Tensor[[2, 3, 4], pl.FP32], f: pl.Scalar[pl.INDEX]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
        if f is not None:
            out: pl.Tensor[[2, 3, 4], pl.FP32] = self.nd_incore(x, x)
        return out
""",
    "branches that yield different names": """
    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, x: pl.Tensor[[2, 3, 4], pl.FP32], f: pl.Scalar[pl.INDEX]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
        if f == 0:
            a: pl.Tensor[[2, 3, 4], pl.FP32] = self.nd_incore(x, x)
        else:
            b: pl.Tensor[[2, 3, 4], pl.FP32] = pl.yield_(x)
        return x
""",
    "three offsets into a rank-2 tensor, the extra one not 0, nothing to flatten": """
    @pl.function(type=pl.FunctionType.InCore)
    def flat_incore(self, x: pl.Tensor[[8, 16], pl.FP32], out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        t: pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [8, 16])
        out_1: pl.Tensor[[8, 16], pl.FP32] = pl.tile.store(t, [1, 0, 0], out)
        return out_1
""",
}


@pytest.mark.parametrize("construct", sorted(UNREADABLE))
def test_a_function_the_pass_never_changes_goes_out_as_it_came_in(construct):
    text = HEAD + UNREADABLE[construct]
    before = pl.parse(text)
    kept = before.functions[1]
    assert kept.source == textwrap.dedent(UNREADABLE[construct]).strip("\n")
    after = passes.flatten_tile_nd_to_2d(backend="Ascend910B")(before)
    out = python_print(after)
    assert textwrap.indent(kept.source, "    ") in out  # verbatim, at the class's indentation
    assert "pl.Tile[[6, 4], pl.FP32" in out  # the function with something to flatten is flattened
    assert pl.parse(out).functions[1] == kept  # and it reads back as the same text
    inputs = interp.random_inputs(before.function("nd_incore"), seed=0)
    assert interp.outputs_equal(
        interp.run(before, "nd_incore", inputs), interp.run(after, "nd_incore", inputs)
    )


def test_a_kept_function_cannot_be_interpreted_and_says_so():
    before = pl.parse(HEAD + UNREADABLE["torch calls and an import"])
    with pytest.raises(InterpError, match="'orch' was kept as its text"):
        interp.run(before, "orch", {"x": None})


@pytest.mark.parametrize(
    ("line", "construct"),
    [
        ("        k = torch.full((2,), 0.0)\n", "unsupported call 'torch.full'"),
        ("        k: pl.Scalar[pl.INDEX] = 1 if x is not None else 0\n", "unsupported expression"),
    ],
)
def test_a_function_with_something_to_flatten_that_cannot_be_read_is_an_error_naming_the_construct(
    line, construct
):
    lines = HEAD.splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if "u: pl.Tile" in ln)
    text = "".join([*lines[:at], line, *lines[at:]])
    with pytest.raises(DSLError, match=rf"<pl>:{at + 1}:\d+: {construct}"):
        pl.parse(text)


def test_in_pypto_eggs_own_dialect_an_unreadable_function_is_the_users_error_unless_asked():
    """Text in pypto-egg's dialect is the user's own source: every error is reported, unless they ask to keep
    what cannot be read; PyPTO's dialect keeps it by default (PyPTO printed it from a program it accepted)."""
    text = (HEAD + UNREADABLE["torch calls and an import"]).replace(
        "import pypto.language", "import pypto_egg.language"
    )
    with pytest.raises(DSLError, match=r"import statements are not supported|unsupported"):
        pl.parse(text)
    assert pl.parse(text, keep_unreadable=True).functions[1].source is not None
    with pytest.raises(DSLError):
        pl.parse(HEAD + UNREADABLE["torch calls and an import"], keep_unreadable=False)
