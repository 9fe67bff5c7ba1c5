"""PyPTO programs to pypto-egg programs and back, through the text both printers write.

PyPTO's printer and pypto-egg's reader speak the same `pl` language; so do pypto-egg's printer (in the
`pypto` dialect) and PyPTO's `pl.parse`. A function the pass leaves as it was comes back as PyPTO's own
object, so nothing downstream sees a re-read copy of it.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import InternalError, PyptoEggError
from ..ir.printer import print_program_lines
from ..ir.stmt import ForStmt, Function, IfStmt, Program, ScopeStmt, SeqStmts, Stmt, WhileStmt
from ..language.parser import parse
from .loader import PyPTO

# a line of the text PyPTO printed -> where PyPTO's node printed there came from: (file, line, column)
Origins = dict[int, tuple[str, int, int]]


def from_pypto(pto: PyPTO, program: Any) -> tuple[Program, Origins]:
    """pypto-egg's reading of a PyPTO program (PyPTO prints it; pypto-egg reads the text, never runs it).

    Variables keep PyPTO's name hints, not the printed names, so the names the pass derives from them (a
    per-batch store `out_3` of `out`) are the C++ pass's, and PyPTO's code generator, which names its values
    by those hints, writes the same code. The origins say where each printed line's node came from in the
    user's source, so that PyPTO's parser can give the rewritten functions the user's positions back."""
    text = pto.ir.python_print(program, format=False)
    hints = {f.name: _printed_to_hint(f, pto) for f in program.functions.values()}
    try:
        ours = parse(text, _printed_name(program), name_hints=hints)
    except PyptoEggError as e:
        raise type(e)(f"pypto-egg cannot read the program PyPTO printed: {e}") from None
    theirs = {f.name: f for f in program.functions.values()}
    origins: Origins = {}
    for f in ours.functions:
        origins.update(_origins(f, theirs[f.name], pto))
    return ours, origins


def _printed_name(program: Any) -> str:
    return f"<PyPTO program {program.name}>"


def at_user_positions(error: PyptoEggError, program: Any, origins: Origins) -> PyptoEggError:
    """The error with each position in the printed text replaced by the user's source position."""
    pattern = re.compile(re.escape(_printed_name(program)) + r":(\d+):(\d+)")

    def user(m: re.Match[str]) -> str:
        origin = origins.get(int(m.group(1)))
        return m.group(0) if origin is None else f"{origin[0]}:{origin[1]}:{origin[2] + 1}"

    message = pattern.sub(user, str(error))
    if message == str(error):
        return error
    moved = type(error)(message)
    moved.__cause__ = error.__cause__
    return moved


def to_pypto(pto: PyPTO, original: Any, before: Program, after: Program, origins: Origins) -> Any:
    """The PyPTO program of `after`: the functions the pass rewrote read back by PyPTO's parser (each line at
    the user's position of the statement it came from), the others PyPTO's own objects from `original`."""
    if after is before:
        return original
    text, spans = print_program_lines(after, dialect="pypto")
    printed = _printed_name(original)
    source_map = {
        i: origins[span.line]
        for i, span in enumerate(spans, 1)
        if span is not None and span.file == printed and span.line in origins
    }
    try:
        parsed = pto.language.parse(text, source_map=source_map)
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


def _origins(ours: Function, theirs: Any, pto: PyPTO) -> Origins:
    """The user's position of each line the function's definition and statements were printed on, by
    pairing pypto-egg's statements (positioned in the printed text) with PyPTO's (positioned in the user's
    source) in source order; nothing when the two readings do not have the same statements."""
    mine = [ours.span] + [s.span for s in _statements(ours.body)]
    others = [theirs.span, *_pypto_statement_spans(theirs.body, pto.core_ir.Stmt)]
    if len(mine) != len(others):
        return {}
    out: Origins = {}
    for m, o in zip(mine, others):
        if m is not None and o.is_valid() and o.begin_line > 0:
            out.setdefault(m.line, (o.filename, o.begin_line, max(o.begin_column - 1, 0)))
    return out


def _statements(body: tuple[Stmt, ...]) -> list[Stmt]:
    out: list[Stmt] = []
    for s in body:
        if isinstance(s, SeqStmts):
            out += _statements(s.stmts)
            continue
        out.append(s)
        if isinstance(s, ForStmt | WhileStmt | ScopeStmt):
            out += _statements(s.body)
        elif isinstance(s, IfStmt):
            out += _statements(s.then_body) + _statements(s.else_body or ())
    return out


def _pypto_statement_spans(stmt: Any, statement: Any) -> list[Any]:
    if not isinstance(stmt, statement):  # no body, or one that is not IR (an inline statement's text)
        return []
    inner = getattr(stmt, "stmts", None)
    if inner is not None:  # a SeqStmts
        return [span for s in inner for span in _pypto_statement_spans(s, statement)]
    out = [stmt.span]
    for field in ("body", "then_body", "else_body"):
        out += _pypto_statement_spans(getattr(stmt, field, None), statement)
    return out


def _numbered(text: str) -> str:
    return "\n".join(f"{i:4} | {line}" for i, line in enumerate(text.splitlines(), 1))
