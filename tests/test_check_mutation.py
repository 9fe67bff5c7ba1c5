"""Mutation test of `pypto-egg check`: outputs the checker calls `same`, changed one fact at a time (an offset, a window,
a shape, a valid shape, an operand swapped or replaced, a statement dropped), are `wrong` wherever the change
changed their meaning.

The outputs are pypto-egg's own, which are what the C++ pass writes wherever the checker calls its output `same`
(every function of the sample but the three D-1 programs). Whether a mutant's meaning changed is decided apart from
the checker's verdict: the mutant breaks the pass's contract, or the interpreter, run strictly on more inputs than
the checker takes (eight random sets besides the distinct values), finds an output that differs or a window outside
its bounds. A mutant the interpreter cannot run is left out. The survivors are listed in the assertion, with why.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import pypto_egg.language as pl
from pypto_egg.check.bounds import static_bounds
from pypto_egg.check.contract import contract_problems
from pypto_egg.check.meaning import compare_meaning
from pypto_egg.check.outputs import Output, our_answer
from pypto_egg.check.program import Sides, check_function
from pypto_egg.check.reproduce import edited, statements
from pypto_egg.ir.expr import Call, ConstInt, MakeTuple, Var
from pypto_egg.ir.node import replaced
from pypto_egg.ir.stmt import AssignStmt, Function, Program, Stmt
from pypto_egg.ir.types import TileType, TileView

from pypto_ref import SAMPLE

ROOT = Path(__file__).resolve().parents[1]
GROUND_TRUTH_SEEDS = 9  # the distinct values and eight random sets
MUTANTS_PER_PROGRAM = 24
GOAL = 0.95


@dataclass(frozen=True)
class Mutant:
    what: str
    function: Function


def _corpus() -> list[tuple[str, Program]]:
    texts = [(p.name, p.read_text()) for p in sorted((ROOT / "examples").glob("*.py"))]
    meta = SAMPLE / "pre"
    if meta.is_dir():
        texts += [(p.name, p.read_text()) for p in sorted(meta.glob("*.py"))
                  if json.loads(p.with_suffix(".json").read_text()).get("nd")]  # fmt: skip
    out = []
    for name, text in texts:
        for program in pl.parse_all(text, name):
            out.append((name, program))
    return out


def _tuple_edits(call: Call) -> Iterator[tuple[str, int]]:
    """(what, operand) of each operand of a call that is an offsets or window literal."""
    places = {"tile.load": ((1, "offset"), (2, "window"), (3, "valid shape")), "tile.store": ((1, "offset"), (3, "window")),
              "tile.slice": ((1, "window"), (2, "offset")), "tile.assemble": ((2, "offset"),)}  # fmt: skip
    for i, what in places.get(call.op, ()):
        if i < len(call.args) and isinstance(call.args[i], MakeTuple):
            yield what, i


def _bumped(t: MakeTuple, k: int, by: int) -> MakeTuple | None:
    e = t.elements[k]
    if not isinstance(e, ConstInt) or e.value + by < 0:
        return None
    return MakeTuple((*t.elements[:k], ConstInt(e.value + by, e.dtype, e.span), *t.elements[k + 1 :]), t.span)


def _mutations(fn: Function) -> Iterator[tuple[str, int, Callable[[Stmt], Stmt | None]]]:
    stmts = statements(fn.body)
    defined: list[Var] = [p.var for p in fn.params]
    for index, s in enumerate(stmts):
        if not isinstance(s, AssignStmt):
            continue
        yield f"drop statement {index} ({s.var.name})", index, lambda s: None
        call = s.value
        if isinstance(call, Call) and not call.is_function:
            for what, i in _tuple_edits(call):
                literal = call.args[i]
                assert isinstance(literal, MakeTuple)
                for k in range(len(literal.elements)):
                    for by in (1, -1):
                        new = _bumped(literal, k, by)
                        if new is not None:
                            args = (*call.args[:i], new, *call.args[i + 1 :])
                            yield (f"{what} of {s.var.name} axis {k} {by:+d}", index,
                                   lambda s, args=args: replaced(s, value=replaced(s.value, args=args)))  # fmt: skip
            tiles = [
                k for k, a in enumerate(call.args) if isinstance(a, Var) and isinstance(a.type, TileType)
            ]
            if len(tiles) >= 2 and call.args[tiles[0]] is not call.args[tiles[1]]:
                a, b = tiles[:2]
                args = list(call.args)
                args[a], args[b] = args[b], args[a]
                yield f"swap operands of {s.var.name}", index, lambda s, args=tuple(args): replaced(
                    s, value=replaced(s.value, args=args))  # fmt: skip
            for k in tiles[:1]:
                other = [v for v in defined if v is not call.args[k] and v.type == call.args[k].type]
                if other:
                    args = (*call.args[:k], other[-1], *call.args[k + 1 :])
                    yield f"replace operand {k} of {s.var.name}", index, lambda s, args=args: replaced(
                        s, value=replaced(s.value, args=args))  # fmt: skip
        t = s.var.type
        if isinstance(t, TileType):
            for k, d in enumerate(t.shape):
                if isinstance(d, ConstInt):
                    shape = (*t.shape[:k], ConstInt(d.value + 1), *t.shape[k + 1 :])
                    yield f"shape of {s.var.name} axis {k} +1", index, _retyped(replaced(t, shape=shape))
            valid = t.valid_shape
            for k, d in enumerate(valid):
                if isinstance(d, ConstInt) and d.value > 1:
                    v = (*valid[:k], ConstInt(d.value - 1), *valid[k + 1 :])
                    view = replaced(t.view, valid_shape=v) if t.view is not None else TileView(valid_shape=v)
                    yield f"valid shape of {s.var.name} axis {k} -1", index, _retyped(replaced(t, view=view))
        defined.append(s.var)


def _retyped(ty: TileType) -> Callable[[Stmt], Stmt | None]:
    def edit(s: Stmt) -> Stmt:
        assert isinstance(s, AssignStmt)
        var = Var(s.var.name, ty, s.var.span, s.var.uid)  # (the same variable: its uses read the new type)
        value = replaced(s.value, type=ty) if isinstance(s.value, Call) else s.value
        return replaced(s, var=var, value=value)

    return edit


def mutants(fn: Function, rng: random.Random) -> list[Mutant]:
    found = []
    for what, index, edit in _mutations(fn):
        body = edited(fn.body, index, edit)
        if body is not None:
            found.append(Mutant(what, replaced(fn, body=body)))
    rng.shuffle(found)
    return found[:MUTANTS_PER_PROGRAM]


def meaning_changed(before: Program, mutant: Program, name: str) -> bool | None:
    """The ground truth: True when the mutant breaks the contract or computes something else (or reaches
    outside a window) on any of the ground truth's inputs; None when the interpreter cannot tell."""
    fn = mutant.function(name)
    if contract_problems(fn) or static_bounds(fn) is not None:
        return True
    found = compare_meaning(before, mutant, name, GROUND_TRUTH_SEEDS)
    if found.outcome == "undecided":
        return None
    return found.outcome == "wrong"


@pytest.mark.unvalidated
def test_the_checker_catches_at_least_95_percent_of_the_mutants_whose_meaning_changed_and_no_other():
    rng = random.Random(65)
    changed = caught = unchanged = undecided = 0
    false_alarms: list[str] = []
    survivors = []
    for name, before in _corpus():
        answer = our_answer(before)
        if answer.program is None or answer.program is before:
            continue
        after = answer.program
        for fn in before.functions:
            out_fn = after.function(fn.name) if fn.type.is_incore else None
            if out_fn is None or out_fn is fn:
                continue
            for m in mutants(out_fn, rng):
                program = replaced(after, functions=tuple(m.function if f.name == fn.name else f
                                                          for f in after.functions))  # fmt: skip
                truth = meaning_changed(before, program, fn.name)
                verdict = check_function(Sides(before, answer, Output(program)), fn)
                if truth is False and verdict.verdict == "wrong":
                    false_alarms.append(f"{name}:{fn.name}: {m.what}: {verdict.line()[:200]}")
                if not truth:
                    unchanged += truth is False
                    undecided += truth is None
                    continue
                changed += 1
                if verdict.verdict == "wrong":
                    caught += 1
                else:
                    survivors.append(
                        f"{name}:{fn.name}: {m.what}: {verdict.verdict} ({verdict.detail[:160]})"
                    )
    assert changed >= 200, changed
    rate = caught / changed
    assert rate >= GOAL, f"caught {caught} of {changed} ({rate:.1%}); survivors:\n" + "\n".join(survivors)
    print(
        f"caught {caught} of {changed} mutants whose meaning changed ({rate:.1%}); {unchanged} kept their "
        f"meaning, the interpreter could not run {undecided}; survivors:"
    )
    print("\n".join(survivors))
    assert not false_alarms, "mutants of the same meaning called wrong:\n" + "\n".join(false_alarms)
