"""The PyPTO programs a Python file defines, read without running the file: pypto-egg's reader reads it (either
dialect), and PyPTO's reader reads pypto-egg's printing of each program, told where each printed line came from, so
PyPTO's spans (and the generated code's locations) name the user's file and lines.

Only a file in PyPTO's dialect that pypto-egg's reader cannot read at all is run, as PyPTO's own tools run it.
"""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

from ..errors import DSLError, UserError
from ..ir.printer import print_program_lines, python_print
from ..ir.stmt import Program
from ..language.parser import parse_all
from .loader import PyPTO


def programs_of_file(pto: PyPTO, path: str | Path) -> dict[str, Any]:
    """Every program the file defines at module level, by name, as PyPTO programs."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"{path}: no such file")
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"{path}: cannot be read: {e}") from None
    try:
        programs = parse_all(text, str(p))
    except DSLError:
        if "import pypto.language" not in text:
            raise  # pypto-egg's own dialect: the reader's error, at its file:line:col, is the user's to fix
        return _run_file(pto, p)
    if not programs:
        raise UserError(f"{path}:1:1: defines no @pl.program at module level")
    return {program.name: to_pypto(pto, program, p) for program in programs}


def to_pypto(pto: PyPTO, program: Program, path: Path) -> Any:
    """A program read here as PyPTO's objects, its spans the user's file and lines; a program PyPTO's reader
    refuses is the user's error, named at the place in their file it points at."""
    text, spans = print_program_lines(program, "pypto")
    # (PyPTO counts columns from 0 where a span here counts from 1)
    source_map = {i + 1: (s.file, s.line, s.col - 1) for i, s in enumerate(spans) if s is not None}
    try:
        return pto.language.parse(text, filename=str(path), source_map=source_map)
    except Exception as e:  # PyPTO's parser raises its own error types
        where = _where(e, spans, path, program)
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UserError(f"{where}: PyPTO's reader cannot read program {program.name!r}: {first}") from None


def _where(e: BaseException, spans: list[Any], path: Path, program: Program) -> str:
    """The user's file:line:col of a PyPTO parse error: the printed line it names, mapped back; else the
    program's own position."""
    import re

    for m in re.finditer(r"line (\d+)|:(\d+):(\d+)", str(e)):
        line = int(m.group(1) or m.group(2))
        if 0 < line <= len(spans) and spans[line - 1] is not None:
            s = spans[line - 1]
            return f"{s.file}:{s.line}:{s.col}"
    span = program.span
    return f"{span.file}:{span.line}:{span.col}" if span is not None else f"{path}:1:1"


def _run_file(pto: PyPTO, p: Path) -> dict[str, Any]:
    try:
        env = runpy.run_path(str(p), run_name="__pypto_egg_compile__")
    except SyntaxError as e:
        raise UserError(f"{p}:{e.lineno}:{e.offset}: invalid Python syntax: {e.msg}") from None
    except Exception as e:  # the file's own code, or PyPTO's parser, rejected it
        raise UserError(f"{p}: running the file with PyPTO failed: {type(e).__name__}: {e}") from None
    found: dict[str, Any] = {}
    for value in env.values():
        if isinstance(value, pto.core_ir.Program):
            found.setdefault(value.name, value)
        elif isinstance(value, Program):
            found.setdefault(value.name, pto.language.parse(python_print(value, dialect="pypto")))
    if not found:
        raise UserError(f"{p}: defines no @pl.program at module level")
    return found


def pick(programs: dict[str, Any], name: str | None, path: str | Path) -> Any:
    if name is None:
        return next(iter(programs.values()))
    if name not in programs:
        raise UserError(f"{path}: no program named {name!r}; it defines {', '.join(programs)}")
    return programs[name]
