"""Read `pl` DSL source (a `@pl.program` class) into IR with `ast`; bodies are never executed."""

from __future__ import annotations

import ast
import linecache
import sys
import textwrap
from pathlib import Path
from typing import Any

from ..errors import DSLError, RefusedProgram, UserError
from ..ir.stmt import (
    DIALECTS,
    Function,
    FunctionType,
    Program,
)
from ..ir.types import (
    TupleType,
    Type,
)
from .context import Ctx, Finding, NameHints, pl_name
from .runtime import DynamicDim
from .statements import FunctionParser


def _decorator_options(fn: ast.FunctionDef, parser: FunctionParser) -> dict[str, Any] | None:
    """`@pl.function(type=..., level=..., role=..., <other keywords kept as written>)`."""
    for deco in fn.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if pl_name(target) != "function":
            continue
        options: dict[str, Any] = {"options": []}
        if isinstance(deco, ast.Call):
            for kw in deco.keywords:
                if kw.arg == "type":
                    value = parser.enum_value(kw.value)
                    if value not in FunctionType.__members__:
                        parser.ctx.error(
                            kw,
                            f"unknown function type '{value}' (one of {', '.join(FunctionType.__members__)})",
                        )
                    options["type"] = FunctionType[value]
                elif kw.arg in ("level", "role"):
                    options[kw.arg] = parser.enum_value(kw.value)
                elif kw.arg is not None:
                    options["options"].append((kw.arg, parser.kwarg_value(kw.value, kw.arg, {})))
                else:
                    parser.ctx.error(kw, "** arguments are not supported in @pl.function")
        return options
    return None


def _parse_class(
    cls: ast.ClassDef,
    ctx: Ctx,
    text: str,
    dialect: str = "pypto_egg",
    name_hints: NameHints | None = None,
    keep_unreadable: bool | None = None,
) -> Program:
    """`keep_unreadable`: keep a function the reader cannot read as its text where the pass never has to change
    it. By default only in PyPTO's dialect: PyPTO printed that text from a program it accepted, so what cannot be
    read here is a gap of this reader, not the user's mistake; text in pypto-egg's own dialect is the user's
    source, and each of its errors is theirs to fix."""
    keep = dialect != "pypto_egg" if keep_unreadable is None else keep_unreadable
    fns: list[tuple[ast.FunctionDef, dict[str, Any] | UserError]] = []
    signatures: dict[str, tuple[Type, ...]] = {}
    parser = FunctionParser(ctx, signatures, name_hints)
    for item in cls.body:
        if isinstance(item, ast.FunctionDef):
            try:
                options = _decorator_options(item, parser)
                if options is None:
                    ctx.error(item, f"method '{item.name}' needs a @pl.function decorator")
                if item.returns is None:
                    signatures[item.name] = ()
                else:
                    rt = parser.type(item.returns, {})
                    signatures[item.name] = rt.types if isinstance(rt, TupleType) else (rt,)
            except UserError as e:
                fns.append((item, e))
                continue
            fns.append((item, options))
    functions = tuple(_function(parser, fn, options, text, keep) for fn, options in fns)
    return Program(cls.name, functions, ctx.span(cls), dialect)


def _function(
    parser: FunctionParser, fn: ast.FunctionDef, options: dict[str, Any] | UserError, text: str, keep: bool
) -> Function:
    """A function read into IR; with `keep`, one the reader cannot read is kept as its text where the pass never
    has to change it (not an InCore function, or one `_never_flattened`), and its error is raised where it may."""
    try:
        if isinstance(options, UserError):
            raise options
        return parser.function(fn, options)
    except UserError as e:
        kind = options.get("type", FunctionType.Opaque) if isinstance(options, dict) else _written_type(fn)
        if (
            not keep
            or isinstance(e, RefusedProgram)
            or (kind is not None and kind.is_incore and not _never_flattened(fn))
        ):
            raise
        lines = text.splitlines()[
            min([fn.lineno, *(d.lineno for d in fn.decorator_list)]) - 1 : fn.end_lineno
        ]
        return Function(fn.name, (), (), (), kind or FunctionType.Opaque, span=parser.ctx.span(fn),
                        source=textwrap.dedent("\n".join(lines)))  # fmt: skip


def _written_type(fn: ast.FunctionDef) -> FunctionType | None:
    """The `type=pl.FunctionType.X` of a function's decorator, as written (None when it names no known type)."""
    for deco in fn.decorator_list:
        for kw in deco.keywords if isinstance(deco, ast.Call) else ():
            if kw.arg == "type" and isinstance(kw.value, ast.Attribute):
                return FunctionType.__members__.get(kw.value.attr)
    return None


def _never_flattened(fn: ast.FunctionDef) -> bool:
    """Whether the text alone shows an InCore function has nothing to flatten: every value it assigns has its type
    written (as PyPTO prints a program), no tile type has more than two dims, and it has no batched matmul."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            return False
        if isinstance(node, ast.Subscript) and pl_name(node.value) == "Tile":
            shape = (
                node.slice.elts[0] if isinstance(node.slice, ast.Tuple) and node.slice.elts else node.slice
            )
            if not isinstance(shape, ast.List) or len(shape.elts) > 2:
                return False
        if isinstance(node, ast.Call) and "batch_matmul" in (pl_name(node.func) or ""):
            return False
    return True


def _dialect(tree: ast.Module) -> str:
    """The dialect whose `pl` module the text imports (pypto-egg's own when it imports neither)."""
    modules = {m: d for d, m in DIALECTS.items()}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    return modules[alias.name]
        elif isinstance(node, ast.ImportFrom) and node.module in ("pypto", "pypto_egg"):
            for alias in node.names:
                if f"{node.module}.{alias.name}" in modules:
                    return modules[f"{node.module}.{alias.name}"]
    return "pypto_egg"


def _module_env(tree: ast.Module) -> dict[str, Any]:
    """Module-level constants and `pl.dynamic` dims of a DSL text."""
    env: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            v = node.value
            if isinstance(v, ast.Constant) and isinstance(v.value, int | float):
                env[node.targets[0].id] = v.value
            elif isinstance(v, ast.Call) and pl_name(v.func) == "dynamic" and v.args and \
                    isinstance(v.args[0], ast.Constant):  # fmt: skip
                env[node.targets[0].id] = DynamicDim(str(v.args[0].value))
    return env


def _program_classes(
    text: str, filename: str, findings: list[Finding] | None = None
) -> tuple[list[ast.ClassDef], Ctx, str]:
    try:
        tree = ast.parse(text, filename)
    except SyntaxError as e:
        raise DSLError(f"{filename}:{e.lineno}:{e.offset}: invalid Python syntax: {e.msg}") from None
    dialect = _dialect(tree)
    ctx = Ctx(filename, 0, 0, _module_env(tree), dialect, findings)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)
               and any(pl_name(d) == "program" for d in n.decorator_list)]  # fmt: skip
    return classes, ctx, dialect


def parse_all(
    text: str,
    filename: str = "<pl>",
    keep_unreadable: bool | None = None,
    findings: list[Finding] | None = None,
) -> list[Program]:
    """Every module-level `@pl.program` class of DSL text, in order, read without running the text (`findings`:
    see `parse`)."""
    classes, ctx, dialect = _program_classes(text, filename, findings)
    return [_parse_class(c, ctx, text, dialect, keep_unreadable=keep_unreadable) for c in classes]


def parse(
    text: str,
    filename: str = "<pl>",
    program_name: str | None = None,
    name_hints: NameHints | None = None,
    keep_unreadable: bool | None = None,
    findings: list[Finding] | None = None,
) -> Program:
    """Parse DSL text holding one (or, with `program_name`, a named) `@pl.program` class.

    `name_hints` names variables by the hints a printer disambiguated (two variables hinted `x` print as `x`
    and `x_1`): names the pass derives from them are then the ones it would derive in the printer's process.
    `keep_unreadable`: a function this reader cannot read and the pass never changes is kept as its text
    (`Function.source`) rather than an error; by default in PyPTO's dialect only.
    `findings`: read a pass's output, whose calls may break their ops' rules: a call its op refuses is kept as
    written, typed by its annotation, an annotation that disagrees with its value is taken as it is, and each is
    appended here (the checker reports them); without it each is an error."""
    classes, ctx, dialect = _program_classes(text, filename, findings)
    if program_name is not None:
        classes = [c for c in classes if c.name == program_name]
    if not classes:
        raise DSLError(
            f"{filename}:1:1: no @pl.program class" + (f" named {program_name!r}" if program_name else "")
        )
    return _parse_class(classes[0], ctx, text, dialect, name_hints, keep_unreadable)


def parse_file(
    path: str | Path, program_name: str | None = None, keep_unreadable: bool | None = None
) -> Program:
    p = Path(path)
    return parse(p.read_text(), str(p), program_name, keep_unreadable=keep_unreadable)


def program(cls: type) -> Program:
    """`@pl.program`: read the decorated class's source into a Program."""
    frame = sys._getframe(1)
    env = {**frame.f_globals, **frame.f_locals}
    filename = frame.f_code.co_filename
    text = "".join(linecache.getlines(filename, frame.f_globals))
    if not text:
        raise DSLError(f"cannot read the source of class {cls.__name__}; use pl.parse(text) instead")
    tree = ast.parse(text, filename)
    candidates = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == cls.__name__]
    if not candidates:
        raise DSLError(
            f"{filename}: cannot find the source of class {cls.__name__}; use pl.parse(text) instead"
        )

    def distance(n: ast.ClassDef) -> int:
        first = min([n.lineno] + [d.lineno for d in n.decorator_list])
        return (
            0
            if first <= frame.f_lineno <= n.lineno
            else min(abs(first - frame.f_lineno), abs(n.lineno - frame.f_lineno))
        )

    node = min(candidates, key=distance)
    dialect = _dialect(tree)
    return _parse_class(node, Ctx(filename, 0, 0, env, dialect), text, dialect)
