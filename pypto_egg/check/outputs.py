"""The outputs the checker compares: pypto-egg's answer, and the output under check (the C++ pass's, run through
PyPTO, or a file's), both read into pypto-egg's IR. The output is read tolerantly: a call its op refuses is kept
as written and reported, not an error."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import PassError, UserError
from ..ir.printer import python_print
from ..ir.stmt import Program
from ..language.context import Finding
from ..language.parser import parse
from ..passes import FlattenTileNdTo2D, flatten_tile_nd_to_2d
from ..pypto.loader import PyPTO

BACKEND = "Ascend910B"  # the backend PyPTO's ir.compile targets: both passes run with its capacities


@dataclass
class Output:
    """A program's output under check: the program (None when the pass producing it refused), why it refused, and
    what its tolerant reading found."""

    program: Program | None
    refusal: str | None = None
    findings: list[Finding] = field(default_factory=list)


@dataclass
class Answer:
    """pypto-egg's answer: the program (None when it refuses), why it refuses, and the plan each statement of each
    rewritten function took (explain's, by place among the function's tile statements)."""

    program: Program | None
    refusal: str | None
    plans: dict[str, dict[int, Any]]


def our_answer(before: Program) -> Answer:
    flatten: FlattenTileNdTo2D = flatten_tile_nd_to_2d(backend=BACKEND)
    try:
        return Answer(flatten(before), None, dict(flatten.lowered))
    except PassError as e:
        return Answer(None, str(e), {})


def read_output(text: str, filename: str) -> Output:
    """A pass's output as text, read tolerantly (never executed)."""
    findings: list[Finding] = []
    return Output(parse(text, filename, keep_unreadable=True, findings=findings), None, findings)


def cxx_output(pto: PyPTO, before: Program) -> Output:
    """What PyPTO's C++ FlattenTileNdTo2D makes of `before`: `before` as PyPTO's objects (PyPTO's reader on
    pypto-egg's printing of it: the user's file itself is never executed), the C++ pass, and PyPTO's printing of
    its result, read back here."""
    program = to_pypto(pto, before)
    configured = pto.backend.is_backend_configured()
    if not configured:
        pto.backend.set_backend_type(getattr(pto.backend.BackendType, BACKEND))
    try:
        out = pto.passes.flatten_tile_nd_to_2d()(program)
    except Exception as e:  # the C++ pass refused the program (PyPTO raises its own error types)
        return Output(None, f"{type(e).__name__}: {_first_line(e)}")
    return read_output(pto.ir.python_print(out), f"<{before.name}: the C++ pass's output>")


def to_pypto(pto: PyPTO, program: Program) -> Any:
    """A pypto-egg program as PyPTO's objects, through PyPTO's own reader of its printing."""
    try:
        return pto.language.parse(python_print(program, dialect="pypto"))
    except Exception as e:
        raise UserError(f"program {program.name!r}: PyPTO's reader refuses it: {_first_line(e)}") from None


def through_pypto(pto: PyPTO, program: Program) -> Program:
    """A program as PyPTO reads and prints it back: how an output PyPTO printed spells what this one says."""
    return parse(pto.ir.python_print(to_pypto(pto, program)), f"<{program.name}>", keep_unreadable=True)


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
