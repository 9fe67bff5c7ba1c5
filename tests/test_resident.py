"""The resident e-graphs: rules loaded once per process, every program's rows taken off again afterwards."""

from __future__ import annotations

import pytest

import pypto_egg.language as pl
from pypto_egg import passes
from pypto_egg.egraph import resident
from pypto_egg.egraph.resident import ResidentRules, run_on_owner
from pypto_egg.errors import PassError
from pypto_egg.ir import python_print

from helpers import check_meaning

SRC = """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[2, {rows}, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, {rows}, 4], pl.FP32]]
             ) -> pl.Tensor[[2, {rows}, 4], pl.FP32]:
        a = pl.load(x, [0, 0, 0], [2, {rows}, 4])
        b = pl.tile.add(a, a)
        out = pl.store(b, [0, 0, 0], out)
        return out
"""

# a 6x8 tile stored at row 1 of an axis of 3 it fills whole (D-13): the rules ran, then the pass fails
BAD_STORE = """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[6, 8], pl.FP32], out: pl.Out[pl.Tensor[[4, 3, 8], pl.FP32]]
             ) -> pl.Tensor[[4, 3, 8], pl.FP32]:
        t = pl.load(x, [0, 0], [6, 8])
        out = pl.store(t, [0, 1, 0], out)
        return out
"""


def _rows(rr: ResidentRules) -> dict[str, int]:
    return {name: len(fn.rows) for name, fn in rr.egraph.freeze().functions.items()}


def _resident_counts() -> list[tuple[bool, dict[str, int], dict[str, int]]]:
    """Each resident shipped rule set's rows now, beside the rows the same rules hold when freshly loaded."""
    out = []
    for rr in resident.owner().rules.values():
        if not rr.ready:  # (still loading in the background)
            continue
        fresh = ResidentRules(list(rr.rule_files), rr.load)
        fresh.finish()
        out.append((rr.resets, _rows(rr), _rows(fresh)))
        del fresh
    return out


def test_a_program_leaves_the_resident_rules_as_loading_left_them():
    flatten = passes.flatten_tile_nd_to_2d()
    for rows in (3, 5, 3):
        program = pl.parse(SRC.format(rows=rows))
        after = flatten(program)
        assert "pl.Tile[[" + str(2 * rows) + ", 4]" in python_print(after)
        check_meaning(program, after)
    with pytest.raises(PassError):
        flatten(pl.parse(BAD_STORE))
    counts = run_on_owner(_resident_counts)
    assert counts and all(resets for resets, _, _ in counts)
    for _, now, fresh in counts:
        assert now == fresh
        assert sum(now.values()) > 0  # the loaded facts themselves (DC 0, FailOrder, ...) are back


def test_rule_files_of_a_user_keep_push_and_pop(tmp_path):
    rules = tmp_path / "mine.egg"
    rules.write_text(
        ';; tile.muls(x, 1.0) is x\n(rule ((GenericReq s "tile.muls" (OCons (OVar x) (OCons (OFloat 1.0) (ONil))) sh))'
        " ((Chose s (Forward x))))\n"
    )
    flatten = passes.flatten_tile_nd_to_2d(extra_rules=[rules])
    program = pl.parse(SRC.format(rows=3))
    check_meaning(program, flatten(program))
    assert any(not rr.resets for rr in run_on_owner(lambda: list(resident.owner().rules.values())))
