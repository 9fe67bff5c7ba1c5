"""`pypto-egg`: flatten a DSL file, explain the chosen plans, or draw the e-graph.

Exit status: 0 on success, 2 on a user error (one paragraph on stderr; --debug shows the traceback).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import traceback
from pathlib import Path

from .errors import PyptoEggError, UserError
from .ir.printer import python_print
from .ir.stmt import Program


def load_programs(path: str) -> dict[str, Program]:
    """Run a DSL file as a module and collect its `@pl.program` classes, in definition order."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"{path}: no such file")
    name = f"pypto_egg_user_{abs(hash(p.resolve()))}"
    spec = importlib.util.spec_from_file_location(name, p)
    if spec is None or spec.loader is None:
        raise UserError(f"{path}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    programs = {v.name: v for v in vars(module).values() if isinstance(v, Program)}
    if not programs:
        raise UserError(f"{path}: defines no @pl.program class")
    return programs


def pick_program(path: str, name: str | None) -> Program:
    programs = load_programs(path)
    if name is None:
        return next(iter(programs.values()))
    if name not in programs:
        raise UserError(f"{path}: no program named {name!r}; it defines {', '.join(programs)}")
    return programs[name]


def pick_function(program: Program, name: str | None) -> str:
    if name is not None:
        program.function(name)
        return name
    for f in program.functions:
        if f.type.is_incore:
            return f.name
    raise UserError(f"program {program.name!r} has no InCore/AIC/AIV function; name one with --function")


def cmd_flatten(args: argparse.Namespace) -> int:
    from .passes import flatten_tile_nd_to_2d

    program = pick_program(args.file, args.program)
    flatten = flatten_tile_nd_to_2d(backend=args.backend, extra_rules=args.rules or ())
    result = flatten(program)
    text = python_print(result)
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    if args.report:
        for r in flatten.reports:
            sys.stdout.write("\n" + str(r) + "\n")
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from .egraph import FlattenEGraph
    from .ir.printer import print_expr

    program = pick_program(args.file, args.program)
    fn = pick_function(program, args.function)
    eg = FlattenEGraph(program, fn, backend=args.backend, extra_rules=args.rules or ())
    eg.saturate()
    plans = eg.plans()
    for sid, (stmt, call) in enumerate(eg.encoding.statements):
        target = getattr(stmt, "var", None)
        head = f"{target.name} = " if target is not None else ""
        line = getattr(stmt.span, "line", "?")
        print(f"[{sid}] line {line}: {head}{print_expr(call)}")
        print(f"      plan: {plans.get(sid)}")
    print()
    print(eg.report)
    return 0


def cmd_viz(args: argparse.Namespace) -> int:
    from .egraph import FlattenEGraph
    from .egraph.viz import to_svg

    program = pick_program(args.file, args.program)
    fn = pick_function(program, args.function)
    eg = FlattenEGraph(program, fn, backend=args.backend, extra_rules=args.rules or ())
    eg.saturate()
    fmt = args.format
    out = Path(args.output or f"egraph.{fmt}")
    if fmt == "html":
        eg.write_html(out, max_nodes=args.max_nodes)
    elif fmt == "dot":
        out.write_text(eg.to_dot())
    else:
        out.write_text(to_svg(eg))
    print(f"wrote {out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pypto-egg", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("file", help="a Python file defining @pl.program classes")
        p.add_argument("--program", help="which program of the file (default: the first)")
        p.add_argument("--backend", choices=["Ascend910B", "Ascend950"], help="capacity facts for the rules")
        p.add_argument(
            "--rules", nargs="*", metavar="EGG", help="extra .egg rule files loaded after the shipped ones"
        )
        p.add_argument("--debug", action="store_true", help="show tracebacks")

    p = sub.add_parser("flatten", help="run FlattenTileNdTo2D and print the result in the DSL")
    common(p)
    p.add_argument("-o", "--output", help="write the program here instead of stdout")
    p.add_argument("--report", action="store_true", help="print the e-graph run report of each function")
    p.set_defaults(run=cmd_flatten)

    p = sub.add_parser("explain", help="print the plan the rules chose for each tile statement")
    common(p)
    p.add_argument("--function", help="which function (default: the first InCore one)")
    p.set_defaults(run=cmd_explain)

    p = sub.add_parser("viz", help="write the e-graph of one function as HTML (or dot / svg)")
    common(p)
    p.add_argument("--function", help="which function (default: the first InCore one)")
    p.add_argument("-o", "--output", help="output file (default: egraph.<format>)")
    p.add_argument("--format", choices=["html", "dot", "svg"], default="html")
    p.add_argument("--max-nodes", type=int, default=900, help="cap on e-nodes drawn (default 900)")
    p.set_defaults(run=cmd_viz)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except (PyptoEggError, ValueError, KeyError) as e:
        if args.debug:
            traceback.print_exc()
        message = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
        print(f"pypto-egg {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
