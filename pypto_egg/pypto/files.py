"""The PyPTO programs a Python file defines, read the way PyPTO reads them: by running the file.

A module-level `@pl.program` class becomes a program; a file written in pypto-egg's dialect gives
pypto-egg programs, which PyPTO re-reads from their printed text.
"""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..ir.printer import python_print
from ..ir.stmt import Program
from .loader import PyPTO


def programs_of_file(pto: PyPTO, path: str | Path) -> dict[str, Any]:
    """Every program the file defines at module level, by name, as PyPTO programs."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"{path}: no such file")
    try:
        env = runpy.run_path(str(p), run_name="__pypto_egg_compile__")
    except SyntaxError as e:
        raise UserError(f"{path}:{e.lineno}:{e.offset}: invalid Python syntax: {e.msg}") from None
    except Exception as e:  # the file's own code, or PyPTO's parser, rejected it
        raise UserError(f"{path}: running the file with PyPTO failed: {type(e).__name__}: {e}") from None
    found: dict[str, Any] = {}
    for value in env.values():
        if isinstance(value, pto.core_ir.Program):
            found.setdefault(value.name, value)
        elif isinstance(value, Program):
            found.setdefault(value.name, pto.language.parse(python_print(value, dialect="pypto")))
    if not found:
        raise UserError(f"{path}: defines no @pl.program at module level")
    return found


def pick(programs: dict[str, Any], name: str | None, path: str | Path) -> Any:
    if name is None:
        return next(iter(programs.values()))
    if name not in programs:
        raise UserError(f"{path}: no program named {name!r}; it defines {', '.join(programs)}")
    return programs[name]
