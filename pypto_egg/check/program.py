"""One verdict for each InCore / AIC / AIV function of a program, from the program the pass received, pypto-egg's
answer and the output under check.

In order: an output equal to pypto-egg's answer (names aside) is `same`; else one that breaks the contract, reaches
outside a window or computes something else than its input is `wrong`; else one that differs only by listed
differences is `listed`; else one the interpreter cannot run is `not-checkable`; else it is `unexplained`, and the
verdict names the first statement that differs and what pypto-egg's explain says of its own plan there. The static
checks run on `same` outputs too: pypto-egg's answer is held to the same contract."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..explain import explain_program
from ..ir.equality import structural_equal
from ..ir.printer import python_print
from ..ir.stmt import Function, Program, Stmt
from .bounds import static_bounds
from .contract import contract_problems
from .diff import Site, differences
from .listed import came_about_by, listed_differences
from .meaning import compare_meaning
from .outputs import Answer, Output
from .verdicts import BOUNDS, CONTRACT, NO_OUTPUT, Verdict


@dataclass
class Sides:
    """What one program's check compares: the pass's input, pypto-egg's answer, the output under check, and a
    way to spell pypto-egg's answer as the output's printer spells it (PyPTO's, for the C++ pass's output)."""

    before: Program
    ours: Answer
    theirs: Output
    respell: Callable[[Program], Program] | None = None
    _respelled: Program | None = None

    def ours_as_theirs(self) -> Program | None:
        if self.ours.program is None or self.respell is None:
            return None
        if self._respelled is None:
            self._respelled = self.respell(self.ours.program)
        return self._respelled


def check_sides(sides: Sides, seeds: int = 3) -> list[Verdict]:
    """The verdict of each InCore / AIC / AIV function of the input, in order."""
    return [check_function(sides, fn, seeds) for fn in sides.before.functions if fn.type.is_incore]


def check_function(sides: Sides, fn: Function, seeds: int = 3) -> Verdict:
    program, name = sides.before.name, fn.name

    def verdict(kind: str, reason: str | None, detail: str) -> Verdict:
        return Verdict(program, name, kind, reason, detail)

    theirs_program, ours_program = sides.theirs.program, sides.ours.program
    if theirs_program is None:
        if ours_program is None:
            return verdict("same", None, f"both passes refuse the program: {sides.ours.refusal}")
        return verdict("not-checkable", NO_OUTPUT, f"the pass refused the program: {sides.theirs.refusal}")
    theirs = _function(theirs_program, name)
    if theirs is None:
        return verdict("not-checkable", NO_OUTPUT, f"the output has no function {name!r}")
    ours = _function(ours_program, name) if ours_program is not None else None
    problems = contract_problems(theirs, sides.theirs.findings)
    out_of_bounds = static_bounds(theirs)
    if problems or out_of_bounds is not None:
        reason, stmt = (CONTRACT, None) if problems else (BOUNDS, out_of_bounds[0] if out_of_bounds else None)
        detail = problems[0] if problems else out_of_bounds[1] if out_of_bounds else ""
        extra = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return verdict("wrong", reason, detail + extra + _by(fn, ours, theirs, stmt))
    if ours is not None and _same(sides, ours, theirs):
        return verdict("same", None, "pypto-egg's answer")
    meaning = compare_meaning(sides.before, theirs_program, name, seeds)
    if meaning.outcome == "wrong":
        assert meaning.reason is not None
        return verdict("wrong", meaning.reason, meaning.detail + _by(fn, ours, theirs, None))
    if ours is None:
        if meaning.outcome == "undecided":
            return verdict("not-checkable", meaning.reason, f"{meaning.detail}; pypto-egg refuses the program: "
                           f"{sides.ours.refusal}")  # fmt: skip
        return verdict("unexplained", None, f"{meaning.detail}, but pypto-egg refuses the program: "
                       f"{sides.ours.refusal}")  # fmt: skip
    mine = _function(sides.ours_as_theirs(), name) or ours
    sites = differences(mine, theirs)
    plans = list(sides.ours.plans.get(name, {}).values())
    listed = listed_differences(fn, theirs, sites, plans)
    if listed is not None:
        return verdict("listed", listed.reason, f"{listed.detail} ({meaning.detail})")
    if meaning.outcome == "undecided":
        return verdict("not-checkable", meaning.reason, meaning.detail + _first(sites))
    return verdict("unexplained", None, _unexplained(sides.before, fn, sites, meaning.detail))


def _function(program: Program | None, name: str) -> Function | None:
    if program is None:
        return None
    return next((f for f in program.functions if f.name == name), None)


def _same(sides: Sides, ours: Function, theirs: Function) -> bool:
    if structural_equal(ours, theirs):
        return True
    respelled = _function(sides.ours_as_theirs(), ours.name)
    return respelled is not None and structural_equal(respelled, theirs)


def _by(before: Function, ours: Function | None, theirs: Function, stmt: Stmt | None) -> str:
    found = came_about_by(before, ours or before, theirs, stmt)
    return f"; it came about as {', '.join(found)} of docs/differences.md says" if found else ""


def _first(sites: list[Site]) -> str:
    if not sites:
        return ""
    site = sites[0]
    return f"; first difference at {site.where}: {site.why}"


def _unexplained(before: Program, fn: Function, sites: list[Site], meaning: str) -> str:
    """The first statement that differs, and what explain says of pypto-egg's plan for the statement it came
    from."""
    if not sites:
        return f"differs from pypto-egg's answer ({meaning})"
    site = sites[0]
    shown = python_print(site.theirs).strip().splitlines()[0] if site.theirs is not None else "(none)"
    text = f"first difference at {site.where}: {site.why}; the output has `{shown}`"
    line = getattr(site.ours, "span", None)
    line = getattr(line, "line", None)
    if line is not None:
        explained = [s for s in explain_program(before, [fn.name]).statements if s.line == line]
        if explained:
            s = explained[0]
            rule = f" by {s.rules[0]}" if s.rules else ""
            text += f"; pypto-egg's explain of line {line} (`{s.source}`): {s.plan}{rule}"
    return f"{text} ({meaning})"
