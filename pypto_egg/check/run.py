"""Checking programs given as text: the program the pass received, and the output under check (a file's, or, with
none given, the C++ pass's, through PyPTO)."""

from __future__ import annotations

from collections.abc import Callable

from ..errors import UserError
from ..ir.stmt import Program
from ..language.parser import parse_all
from ..pypto.loader import PyPTO, load_pypto
from .outputs import Output, cxx_output, our_answer, read_output, through_pypto
from .program import Sides, check_sides
from .verdicts import Verdict


def check_text(
    text: str,
    filename: str,
    output: str | None = None,
    output_name: str = "<output>",
    seeds: int = 3,
    pto: PyPTO | None = None,
) -> list[Verdict]:
    """The verdicts of every program of an input text (read, never executed): against the programs of `output`
    (paired by name, else in order) when given, else against the C++ pass's output of each (PyPTO needed)."""
    inputs = parse_all(text, filename)
    if not inputs:
        raise UserError(f"{filename}:1:1: defines no @pl.program class")
    if output is None:
        pto = pto or load_pypto()
        return [v for program in inputs for v in check_against_cxx(program, seeds, pto)]
    outputs = _pair(inputs, output, output_name)
    verdicts: list[Verdict] = []
    for program, out in zip(inputs, outputs):
        sides = Sides(program, our_answer(program), out, _respeller(out, pto))
        verdicts += check_sides(sides, seeds)
    return verdicts


def refused_text(text: str, filename: str, why: str) -> list[Verdict]:
    """The verdicts of every program of an input text whose output is missing (the pass that makes it refused it):
    `same` where pypto-egg refuses it too, else not-checkable."""
    return [
        v for p in parse_all(text, filename) for v in check_sides(Sides(p, our_answer(p), Output(None, why)))
    ]


def check_against_cxx(program: Program, seeds: int, pto: PyPTO) -> list[Verdict]:
    """The verdicts of the C++ pass's output of one program."""
    theirs = cxx_output(pto, program)
    sides = Sides(program, our_answer(program), theirs, lambda p: through_pypto(pto, p))
    return check_sides(sides, seeds)


def _pair(inputs: list[Program], text: str, filename: str) -> list[Output]:
    """Each input's output: the output text's program of the same name, else the one in the same place."""
    read = read_output(text, filename)  # (the first program: its findings)
    if read.program is None:
        raise UserError(f"{filename}: defines no @pl.program class")
    findings = read.findings
    programs = parse_all(text, filename, keep_unreadable=True, findings=findings)
    by_name = {p.name: p for p in programs}
    out = []
    for i, program in enumerate(inputs):
        found = by_name.get(program.name) or (programs[i] if i < len(programs) else None)
        if found is None:
            raise UserError(f"{filename}: no program for the input's {program.name!r}")
        out.append(Output(found, None, findings))
    return out


def _respeller(out: Output, pto: PyPTO | None) -> Callable[[Program], Program] | None:
    """For an output PyPTO printed, pypto-egg's answer as PyPTO prints it (where PyPTO is here)."""
    if out.program is None or out.program.dialect != "pypto":
        return None
    if pto is None:
        try:
            pto = load_pypto()
        except UserError:
            return None
    found = pto
    return lambda p: through_pypto(found, p)
