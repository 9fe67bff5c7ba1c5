"""pypto-egg's type deduction against PyPTO's, over the sample's real programs (issue: the last mile).

PyPTO prints every variable with its type, which for a tile op's result is PyPTO's own deduction. Each tile op of
every InCore function of the sample, before the pass and after it, is deduced again by pypto-egg's registry from
its operands and compared with that printed type, whole (shape, dtype, memory space, view), but for the buffer a
later PyPTO pass assigned (`pl.MemRef`), which no deduction makes.

One kind of statement shows no deduction: a tile whose printed shape re-shapes the deduced one to the same number
of elements (a flattened load's 2-D type, which the pass sets rather than deduces, or a program written already
flat, whose annotation PyPTO keeps as written). Those are counted and skipped."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import pypto_egg.language as pl
from pypto_egg.ir.deduce_common import static_count
from pypto_egg.ir.expr import Call
from pypto_egg.ir.ops import deduce_type, get_op
from pypto_egg.ir.printer import python_print
from pypto_egg.ir.stmt import AssignStmt
from pypto_egg.ir.tiles import retile
from pypto_egg.ir.types import TileType
from pypto_egg.ir.walk import blocks

from pypto_ref import SAMPLE, requires_sample


def tile_ops(path: Path) -> Iterator[tuple[AssignStmt, Call]]:
    program = pl.parse(path.read_text(), str(path))
    for fn in program.functions:
        if fn.type.is_incore and fn.source is None:
            for body in blocks(fn.body):
                for s in body:
                    if not isinstance(s, AssignStmt) or not isinstance(s.var.type, TileType):
                        continue
                    if (
                        isinstance(s.value, Call)
                        and s.value.op.startswith("tile.")
                        and get_op(s.value.op).deduces
                    ):
                        yield s, s.value


@requires_sample
@pytest.mark.parametrize("side", ["pre", "post"])
def test_every_tile_op_of_the_sample_deduces_the_type_pypto_printed(side):
    compared, set_not_deduced, differences = 0, 0, []
    for path in sorted((SAMPLE / side).glob("*.py")):
        for s, call in tile_ops(path):
            printed = retile(s.var.type, memref=None)
            deduced = deduce_type(call.op, call.args, dict(call.kwargs))
            assert isinstance(deduced, TileType), (path.name, call.op)
            deduced = retile(deduced, memref=None)
            if printed.shape != deduced.shape and static_count(printed.shape) == static_count(deduced.shape):
                set_not_deduced += 1
                continue
            compared += 1
            if printed != deduced:
                differences.append(f"{path.name}: {call.op}: PyPTO {python_print(printed)}, "
                                   f"pypto-egg {python_print(deduced)}")  # fmt: skip
    assert not differences, "\n".join(differences[:20])
    assert compared > 1500 and set_not_deduced < compared // 50
