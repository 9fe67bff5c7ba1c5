"""The smallest program that still shows a `wrong` verdict: the one function alone, then statement by statement
(the last first) every statement whose removal leaves the same verdict for the same reason dropped, written as a
program a PyPTO developer can paste into a test, with the command that shows it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..errors import PyptoEggError
from ..ir.node import replaced
from ..ir.printer import python_print
from ..ir.stmt import (
    ForStmt,
    IfStmt,
    Program,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    Stmt,
    WhileStmt,
    YieldStmt,
)
from .verdicts import Verdict

Check = Callable[[Program], Verdict | None]  # the verdict of the function under check in a program, or None
_TRIALS = 400  # checks a reduction may make (each runs both passes and the interpreter)


def reduce_program(program: Program, function: str, wrong: Verdict, check: Check) -> Program:
    """`program` cut down to what still gives `function` a wrong verdict for the same reason."""

    def shows(candidate: Program) -> bool:
        try:
            found = check(candidate)
        except (PyptoEggError, ValueError, KeyError, IndexError, TypeError):
            return False  # (a cut the readers or the passes refuse shows nothing)
        return found is not None and found.verdict == wrong.verdict and found.reason == wrong.reason

    fn = program.function(function)
    current = replaced(program, functions=(fn,))
    if not shows(current):
        current = program
    trials = 0
    changed = True
    while changed and trials < _TRIALS:
        changed = False
        body = current.function(function).body
        for index in reversed(range(_count(body))):
            if trials >= _TRIALS:
                break
            cut = _without(body, index)
            if cut is None:
                continue
            trials += 1
            candidate = _with_body(current, function, cut)
            if shows(candidate):
                current, body, changed = candidate, cut, True
    return current


def write_reproducer(program: Program, wrong: Verdict, folder: Path, command: str) -> Path:
    """The reduced program as a file of PyPTO's DSL, headed by the verdict it shows and the command that shows it;
    its path. `command` names the file as `{path}`."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = "".join(c if c.isalnum() or c in "_-" else "_" for c in f"{wrong.program}__{wrong.function}")
    path = folder / f"{stem}.py"
    shown = command.format(path=path)
    header = [
        f"# A reproducer of `pypto-egg check`: function {wrong.function!r} of program {wrong.program!r}",
        f"# verdict: {wrong.verdict} ({wrong.reason})",
        *(f"#   {line}" for line in _wrapped(wrong.detail)),
        f"# shown by: {shown}",
        "",
    ]
    path.write_text("\n".join(header) + python_print(program, dialect="pypto"))
    return path


def _wrapped(text: str, width: int = 110) -> list[str]:
    words, lines, line = text.split(), [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    return [*lines, line] if line else lines


def _with_body(program: Program, function: str, body: tuple[Stmt, ...]) -> Program:
    functions = tuple(replaced(f, body=body) if f.name == function else f for f in program.functions)
    return replaced(program, functions=functions)


_KEPT = (ReturnStmt, YieldStmt)  # what a cut never drops: a body's results


def _count(body: tuple[Stmt, ...]) -> int:
    """The statements a cut may drop, nested ones included, in program order."""
    n = 0
    for s in body:
        if isinstance(s, SeqStmts):
            n += _count(s.stmts)
            continue
        if isinstance(s, _KEPT):
            continue
        n += 1
        for inner in _bodies(s):
            n += _count(inner)
    return n


def _bodies(s: Stmt) -> tuple[tuple[Stmt, ...], ...]:
    if isinstance(s, IfStmt):
        return (s.then_body,) if s.else_body is None else (s.then_body, s.else_body)
    if isinstance(s, ForStmt | WhileStmt | ScopeStmt):
        return (s.body,)
    return ()


def _without(body: tuple[Stmt, ...], index: int) -> tuple[Stmt, ...] | None:
    """The body without its `index`-th droppable statement (see `_count`), or None past the last."""
    return edited(body, index, lambda s: None)


def edited(
    body: tuple[Stmt, ...], index: int, edit: Callable[[Stmt], Stmt | None]
) -> tuple[Stmt, ...] | None:
    """The body with its `index`-th droppable statement (see `_count`, nested ones included) replaced by what `edit`
    makes of it (None: dropped), or None past the last."""
    out: list[Stmt] = []
    k = index
    for i, s in enumerate(body):
        if isinstance(s, SeqStmts):
            n = _count(s.stmts)
            if 0 <= k < n:
                inner = edited(s.stmts, k, edit)
                return None if inner is None else (*out, replaced(s, stmts=inner), *body[i + 1 :])
            k -= n
            out.append(s)
            continue
        if isinstance(s, _KEPT):
            out.append(s)
            continue
        if k == 0:
            new = edit(s)
            return (*out, *((new,) if new is not None else ()), *body[i + 1 :])
        k -= 1
        for b, inner_body in enumerate(_bodies(s)):
            n = _count(inner_body)
            if k < n:
                cut = edited(inner_body, k, edit)
                if cut is None:
                    return None
                return (*out, _with_inner(s, b, cut), *body[i + 1 :])
            k -= n
        out.append(s)
    return None


def statements(body: tuple[Stmt, ...]) -> list[Stmt]:
    """The droppable statements of a body, in the order `edited` numbers them."""
    out: list[Stmt] = []
    for s in body:
        if isinstance(s, SeqStmts):
            out += statements(s.stmts)
        elif not isinstance(s, _KEPT):
            out.append(s)
            for inner in _bodies(s):
                out += statements(inner)
    return out


def _with_inner(s: Stmt, which: int, body: tuple[Stmt, ...]) -> Stmt:
    if isinstance(s, IfStmt):
        return replaced(s, then_body=body) if which == 0 else replaced(s, else_body=body)
    return replaced(s, body=body)
