"""PyPTO programs to pypto-egg programs and back, through the text both printers write.

PyPTO's printer and pypto-egg's reader speak the same `pl` language; so do pypto-egg's printer (in the
`pypto` dialect) and PyPTO's `pl.parse`. A function the pass leaves as it was comes back as PyPTO's own
object, so nothing downstream sees a re-read copy of it.
"""

from __future__ import annotations

from typing import Any

from ..errors import InternalError, PyptoEggError
from ..ir.printer import python_print
from ..ir.stmt import Program
from ..language.parser import parse
from .loader import PyPTO


def from_pypto(pto: PyPTO, program: Any) -> Program:
    """pypto-egg's reading of a PyPTO program (PyPTO prints it; pypto-egg reads the text, never runs it).

    Variables keep PyPTO's name hints, not the printed names, so the names the pass derives from them (a
    per-batch store `out_3` of `out`) are the C++ pass's, and PyPTO's code generator, which names its values
    by those hints, writes the same code."""
    text = pto.ir.python_print(program, format=False)
    hints = {f.name: _printed_to_hint(f, pto) for f in program.functions.values()}
    try:
        return parse(text, f"<PyPTO program {program.name}>", name_hints=hints)
    except PyptoEggError as e:
        raise type(e)(f"pypto-egg cannot read the program PyPTO printed: {e}") from None


def to_pypto(pto: PyPTO, original: Any, before: Program, after: Program) -> Any:
    """The PyPTO program of `after`: the functions the pass rewrote read back by PyPTO's parser, the others
    PyPTO's own objects from `original`."""
    if after is before:
        return original
    text = python_print(after, dialect="pypto")
    try:
        parsed = pto.language.parse(text)
    except Exception as e:  # PyPTO's parser raises its own error types; any of them is a bug here
        raise InternalError(
            f"PyPTO cannot read what pypto-egg printed for program {after.name!r}: {e}\n{_numbered(text)}"
        ) from e
    kept = {b.name for a, b in zip(after.functions, before.functions) if a is b}
    if not kept:
        return parsed
    originals = {f.name: f for f in original.functions.values()}  # PyPTO keys functions by GlobalVar
    functions = [originals[f.name] if f.name in kept else f for f in parsed.functions.values()]
    return pto.core_ir.Program(functions, parsed.name, original.span)


def _printed_to_hint(function: Any, pto: PyPTO) -> dict[str, str]:
    """The printed names of a function's variables that are not their hints: PyPTO's printer gives a hint
    that several variables share to them as `x`, `x_1`, `x_2`, ..., skipping the hints of single variables."""
    counts: dict[str, int] = {}
    seen: list[Any] = []  # keeps each visited object alive, so that its id stays its own

    class Collect(pto.core_ir.IRVisitor):  # type: ignore[misc, name-defined]
        def visit_var(self, op: Any) -> None:
            self._count(op)
            super().visit_var(op)

        def visit_iter_arg(self, op: Any) -> None:
            self._count(op)
            super().visit_iter_arg(op)

        def _count(self, op: Any) -> None:
            if all(op is not v for v in seen_by_hint.get(op.name_hint, ())):
                seen_by_hint.setdefault(op.name_hint, []).append(op)
                seen.append(op)
                counts[op.name_hint] = counts.get(op.name_hint, 0) + 1

    seen_by_hint: dict[str, list[Any]] = {}
    Collect().visit_function(function)
    single = {h for h, n in counts.items() if n == 1}
    printed: dict[str, str] = {}
    for hint, n in counts.items():
        if n > 1:
            k, made = 0, 1
            while made < n:
                k += 1
                name = f"{hint}_{k}"
                if name not in single:
                    made += 1
                    if name not in counts:
                        printed[name] = hint
    return printed


def _numbered(text: str) -> str:
    return "\n".join(f"{i:4} | {line}" for i, line in enumerate(text.splitlines(), 1))
