"""Read `pl` DSL source (a `@pl.program` class) into IR with `ast`; bodies are never executed."""

from __future__ import annotations

import ast
import linecache
import sys
from pathlib import Path
from typing import Any

from ..errors import DSLError
from ..ir.stmt import (
    DIALECTS,
    FunctionType,
    Program,
)
from ..ir.types import (
    TupleType,
    Type,
)
from .context import Ctx, NameHints, pl_name
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
    cls: ast.ClassDef, ctx: Ctx, dialect: str = "pypto_egg", name_hints: NameHints | None = None
) -> Program:
    fns: list[tuple[ast.FunctionDef, dict[str, Any]]] = []
    signatures: dict[str, tuple[Type, ...]] = {}
    parser = FunctionParser(ctx, signatures, name_hints)
    for item in cls.body:
        if isinstance(item, ast.FunctionDef):
            options = _decorator_options(item, parser)
            if options is None:
                ctx.error(item, f"method '{item.name}' needs a @pl.function decorator")
            fns.append((item, options))
            if item.returns is None:
                signatures[item.name] = ()
            else:
                rt = parser.type(item.returns, {})
                signatures[item.name] = rt.types if isinstance(rt, TupleType) else (rt,)
    functions = tuple(parser.function(fn, options) for fn, options in fns)
    return Program(cls.name, functions, ctx.span(cls), dialect)


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


def _program_classes(text: str, filename: str) -> tuple[list[ast.ClassDef], Ctx, str]:
    try:
        tree = ast.parse(text, filename)
    except SyntaxError as e:
        raise DSLError(f"{filename}:{e.lineno}:{e.offset}: invalid Python syntax: {e.msg}") from None
    dialect = _dialect(tree)
    ctx = Ctx(filename, 0, 0, _module_env(tree), dialect)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)
               and any(pl_name(d) == "program" for d in n.decorator_list)]  # fmt: skip
    return classes, ctx, dialect


def parse_all(text: str, filename: str = "<pl>") -> list[Program]:
    """Every module-level `@pl.program` class of DSL text, in order, read without running the text."""
    classes, ctx, dialect = _program_classes(text, filename)
    return [_parse_class(c, ctx, dialect) for c in classes]


def parse(
    text: str, filename: str = "<pl>", program_name: str | None = None, name_hints: NameHints | None = None
) -> Program:
    """Parse DSL text holding one (or, with `program_name`, a named) `@pl.program` class.

    `name_hints` names variables by the hints a printer disambiguated (two variables hinted `x` print as `x`
    and `x_1`): names the pass derives from them are then the ones it would derive in the printer's process."""
    classes, ctx, dialect = _program_classes(text, filename)
    if program_name is not None:
        classes = [c for c in classes if c.name == program_name]
    if not classes:
        raise DSLError(
            f"{filename}:1:1: no @pl.program class" + (f" named {program_name!r}" if program_name else "")
        )
    return _parse_class(classes[0], ctx, dialect, name_hints)


def parse_file(path: str | Path, program_name: str | None = None) -> Program:
    p = Path(path)
    return parse(p.read_text(), str(p), program_name)


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
    return _parse_class(node, Ctx(filename, 0, 0, env, dialect), dialect)
