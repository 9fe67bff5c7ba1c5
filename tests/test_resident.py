"""The resident e-graphs: rules loaded once per process, every program's rows taken off again afterwards."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import pypto_egg.language as pl
from pypto_egg import passes
from pypto_egg.egraph.accel import resident
from pypto_egg.egraph.accel.resident import ResidentRules, run_on_owner
from pypto_egg.errors import PassError, UnmatchedRuleWarning
from pypto_egg.ir import python_print

from helpers import RESIDENT_PROBE, check_meaning

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

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
    for rr in resident.registry().rules.values():
        if not rr.ready:  # (still loading in the background)
            continue
        rr.clean()  # the last program's reset, which the next program on the set would run first
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
    # the loaded facts themselves (DC 0, FailOrder, ...) are back: on the pass's sets (the loop-carry repair's own
    # set, resident after a test that repaired a carry, loads no facts)
    assert any(sum(now.values()) > 0 for _, now, _ in counts)


def test_rule_files_of_a_user_keep_push_and_pop(tmp_path):
    rules = tmp_path / "mine.egg"
    rules.write_text(
        ';; tile.muls(x, 1.0) is x\n(rule ((GenericReq s "tile.muls" (OCons (OVar x) (OCons (OFloat 1.0) (ONil))) sh))'
        " ((Chose s (Forward x))))\n"
    )
    flatten = passes.flatten_tile_nd_to_2d(extra_rules=[rules])
    program = pl.parse(SRC.format(rows=3))
    with pytest.warns(UnmatchedRuleWarning, match="mine.egg:2 never matched"):  # the program has no tile.muls
        check_meaning(program, flatten(program))
    assert any(not rr.resets for rr in run_on_owner(lambda: list(resident.registry().rules.values())))


def test_a_set_that_ran_many_programs_is_replaced_by_a_fresh_copy(monkeypatch):
    """egglog keeps a report of every iteration an e-graph ran: after `_RECYCLE` programs a fresh copy loads (in
    the background, or at once `_RENEW_WAIT` programs later) and takes the set's place, answers unchanged."""
    monkeypatch.setattr(resident, "_RECYCLE", 2)
    monkeypatch.setattr(resident, "_RENEW_WAIT", 1)
    flatten = passes.flatten_tile_nd_to_2d()
    program = pl.parse(SRC.format(rows=11))
    first = python_print(flatten(program))

    def sets() -> list[int]:
        return [id(rr) for rr in resident.registry().rules.values()]

    before = run_on_owner(sets)
    for _ in range(6):
        assert python_print(flatten(program)) == first
    after = run_on_owner(sets)
    assert set(before) - set(after), "no set was replaced"
    check_meaning(program, flatten(program))


def test_the_owner_thread_drops_every_e_graph_it_made(tmp_path):
    """At exit every e-graph, loaded, loading in the background or failed, is dropped on the owner thread (egglog
    refuses a drop on another thread, and says so on stderr)."""
    script = tmp_path / "run.py"
    script.write_text(
        "import pypto_egg.language as pl\nfrom pypto_egg import passes\n"
        f"p = pl.parse({SRC.format(rows=13)!r})\npasses.flatten_tile_nd_to_2d()(p)\n"
        f"try:\n    passes.flatten_tile_nd_to_2d()(pl.parse({BAD_STORE!r}))\nexcept Exception:\n    pass\n"
    )
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "unsendable" not in run.stderr and "dropped on another thread" not in run.stderr


BIGGER = SRC.replace("b = pl.tile.add(a, a)", "c = pl.tile.exp(a)\n        b = pl.tile.add(c, a)")

_ON_A_BIGGER_SET = (
    RESIDENT_PROBE
    + """
import dataclasses
import sys
import pypto_egg.language as pl
from pypto_egg import passes
from pypto_egg.egraph.accel.rule_sets import RuleSetKey
from pypto_egg.ir import python_print
bigger, small = sys.argv[1], sys.argv[2]
flatten = passes.flatten_tile_nd_to_2d()
for rows in (17, 18):
    flatten(pl.parse(bigger.format(rows=rows)))
_, own = served_by(lambda: flatten(pl.parse(bigger.format(rows=19))))  # asked for a third time: its own set loads
got, ran = served_by(lambda: python_print(flatten(pl.parse(small.format(rows=21)))))
assert [rr.key for rr in own] == [rr.key for rr in ran] and isinstance(ran[0].key, RuleSetKey), (own, ran)
from pypto_egg.egraph.accel import Acceleration
everything = dataclasses.replace(flatten, acceleration=Acceleration(prune_rules=False))
assert got == python_print(everything(pl.parse(small.format(rows=21))))
print("ok")
"""
)


def test_a_new_kind_runs_on_the_smallest_loaded_set_that_holds_its_rules():
    """Until its own set is loaded, a program runs on a loaded set of another kind whose rules and fact relations
    include its own (the add is a part of the exp-and-add kernel), not on the set of every rule; the answer is the
    one of every rule (a fresh process: the kinds are new to it)."""
    run = subprocess.run(
        [sys.executable, "-c", _ON_A_BIGGER_SET, BIGGER, SRC], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0 and run.stdout.split()[-1:] == ["ok"], run.stderr[-3000:]


_TAKING_TURNS = (
    RESIDENT_PROBE
    + """
import sys
import pypto_egg.language as pl
from pypto_egg import passes
from pypto_egg.ir import python_print
resident._MAX_LOADED = 3  # the two families' sets and one kind's own
flatten = passes.flatten_tile_nd_to_2d()
kinds = [(path, name or None) for path, name in zip(sys.argv[1::2], sys.argv[2::2])]
first = [python_print(flatten(pl.parse_file(*k))) for k in kinds]
for _ in range(6):
    assert [python_print(flatten(pl.parse_file(*k))) for k in kinds] == first
assert len(loads) == len(set(loads)) == 3, len(loads)  # the families' sets, then the first kind back three times
print("ok")
"""
)


def test_kinds_taking_turns_do_not_push_each_others_sets_out():
    """More kinds taking turns than own sets fit: the first kind asked for three times keeps its set, the others
    run on a loaded set that holds their rules, and no set is loaded again (a load costs more than the programs
    it serves save); the answers never change."""
    kinds = [("seed_example.py", "Before"), ("nd_transpose.py", ""), ("batched_matmul.py", "")]
    args = [x for path, name in kinds for x in (str(EXAMPLES / path), name)]
    run = subprocess.run(
        [sys.executable, "-c", _TAKING_TURNS, *args], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0 and run.stdout.split()[-1:] == ["ok"], run.stderr[-3000:]
