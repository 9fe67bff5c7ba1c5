"""`pypto-egg`: flatten DSL files, explain the plan of each statement, draw the e-graph, compile with PyPTO, or
check a FlattenTileNdTo2D output (the C++ pass's, or any other) against pypto-egg's.

`flatten`, `explain` and `viz` read files with the DSL's own reader (never run as Python); `compile` runs the
file with PyPTO, as PyPTO's own tools do. Exit status: 0 on success, 2 on a user error
(one paragraph on stderr naming file:line:col; --debug shows the traceback), 3 on an internal error.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from .backend import BACKENDS
from .check.cli import add_parser as check_parser
from .check.verdicts import counts
from .collector import collector_paused
from .egraph import FlattenEGraph
from .egraph.engine import check_rule_files
from .egraph.viz import to_svg
from .errors import InternalError, PyptoEggError, UnmatchedRuleWarning, UserError
from .explain import explain_program, format_explanation
from .inputs import input_files
from .ir.printer import python_print
from .ir.stmt import Program
from .language.parser import parse_all
from .passes import flatten_tile_nd_to_2d
from .pypto import compile as compile_with_egg
from .pypto import load_pypto
from .pypto.checking import checking_flatten
from .pypto.files import pick, programs_of_file

# the backend PyPTO's ir.compile targets by default: the shell's commands read its capacities unless told otherwise
DEFAULT_BACKEND = "Ascend910B"


def read_programs(path: str | Path) -> list[Program]:
    """Every `@pl.program` class of a DSL file, in order, read without running the file."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"{path}: no such file")
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"{path}: cannot be read: {e}") from None
    programs = parse_all(text, str(path))
    if not programs:
        raise UserError(f"{path}:1:1: defines no @pl.program class")
    return programs


def pick_program(path: str | Path, name: str | None) -> Program:
    programs = read_programs(path)
    if name is None:
        return programs[0]
    for p in programs:
        if p.name == name:
            return p
    raise UserError(f"{path}: no program named {name!r}; it defines {', '.join(p.name for p in programs)}")


def pick_function(program: Program, name: str | None) -> str:
    if name is not None:
        if not any(f.name == name for f in program.functions):
            raise UserError(f"program {program.name!r} has no function {name!r}")
        return name
    for f in program.functions:
        if f.type.is_incore:
            return f.name
    raise UserError(f"program {program.name!r} has no InCore/AIC/AIV function; name one with --function")


# ---------------------------------------------------------------- flatten


@dataclass(frozen=True)
class FlattenOptions:
    program: str | None
    backend: str | None
    rules: tuple[str, ...]
    validate: bool
    seeds: int
    report: bool
    debug: bool = False
    strategy: str = "reference"
    runner: str = "accelerated"


@dataclass(frozen=True)
class FileResult:
    path: str
    text: str | None  # the flattened programs, or None when the file failed
    error: str | None
    internal: bool = False
    notes: str = ""  # run reports and validation summaries


def flatten_file(path: str, options: FlattenOptions) -> FileResult:
    """Flatten every program of one file (or the one `options.program` names); never raises."""
    try:
        programs = read_programs(path)
        if options.program is not None:
            programs = [pick_program(path, options.program)]
        texts, notes, too_large = [], [], list[str]()
        for program in programs:
            flatten = flatten_tile_nd_to_2d(
                backend=options.backend,
                extra_rules=options.rules,
                validate=options.validate,
                seeds=options.seeds,
                strategy=options.strategy,
                runner=options.runner,
            )
            with collector_paused():  # the CLI's process is its own (pypto_egg/collector.py)
                flattened = flatten(program)
            texts.append(python_print(flattened))
            if options.report:
                notes += [str(r) for r in flatten.reports]
            if options.validate and flatten.validation is not None:
                notes.append(f"{program.name}: {flatten.validation}")
                too_large += [f"function '{f}': {why}" for f, why in flatten.validation.too_large.items()]
                too_large += [f"function '{f}' was not validated: {why}"
                              for f, why in flatten.validation.skipped.items()]  # fmt: skip
        error = f"{path}: --validate: " + "; ".join(too_large) if too_large else None
        return FileResult(path, "\n\n".join(texts), error, notes="\n".join(notes))
    except InternalError as e:
        return FileResult(path, None, f"{path}: {e}{_trace(options)}", internal=True)
    except (PyptoEggError, ValueError, KeyError) as e:
        message = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
        message = message if str(path) in message else f"{path}: {message}"
        return FileResult(path, None, message + _trace(options))
    except Exception as e:  # a defect of pypto-egg, reported for the file without stopping the others
        return FileResult(path, None, f"{path}: {type(e).__name__}: {e}{_trace(options)}", internal=True)


def _trace(options: FlattenOptions) -> str:
    return "\n" + traceback.format_exc() if options.debug else ""


def _run_all(files: list[Path], options: FlattenOptions, jobs: int) -> Iterator[FileResult]:
    if jobs <= 1 or len(files) <= 1:
        for f in files:
            yield flatten_file(str(f), options)
        return
    # egglog cannot run in a process forked after it ran, so workers start fresh
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(flatten_file, str(f), options) for f in files]
        for fut in as_completed(futures):
            yield fut.result()


def cmd_flatten(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise UserError(f"-j {args.jobs}: at least one worker")
    if args.seeds < 1:
        raise UserError(f"--seeds {args.seeds}: at least one set of inputs")
    inputs = input_files(args.paths)
    if not inputs:
        raise UserError(f"{' '.join(args.paths)}: no .py files")
    options = FlattenOptions(args.program, args.backend, tuple(args.rules or ()), args.validate, args.seeds,
                             args.report, args.debug, args.strategy, args.runner)  # fmt: skip
    many = len(inputs) > 1 or any(Path(p).is_dir() for p in args.paths)
    out_dir = Path(args.output) if args.output and many else None
    relative = {str(f): rel for f, rel in inputs}
    start, failed, internal = time.perf_counter(), 0, False
    results: dict[str, FileResult] = {}
    for done, result in enumerate(_run_all([f for f, _ in inputs], options, args.jobs), start=1):
        results[result.path] = result
        if result.error is not None:
            failed += 1
            internal |= result.internal
            kind = "internal error" if result.internal else "error"
            print(f"pypto-egg flatten: {kind}: {result.error}", file=sys.stderr)
        if many and time.perf_counter() - start > 1.0:
            print(f"[{done}/{len(inputs)}] {result.path}", file=sys.stderr)
        if out_dir is not None and result.text is not None:
            target = out_dir / relative[result.path]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(result.text)
    if out_dir is None:
        texts = [results[str(f)].text for f, _ in inputs if results[str(f)].text is not None]
        text = "\n\n".join(t for t in texts if t is not None)
        if args.output:
            Path(args.output).write_text(text)
        elif text:
            sys.stdout.write(text)
    for (
        f,
        _,
    ) in inputs:  # reports and validation summaries go with the diagnostics, never into the program text
        if results[str(f)].notes:
            sys.stderr.write(results[str(f)].notes + "\n")
    if many:
        print(f"pypto-egg flatten: {len(inputs) - failed} of {len(inputs)} file(s) flattened, {failed} failed",
              file=sys.stderr)  # fmt: skip
    if failed:
        return 3 if internal else 2
    return 0


# ---------------------------------------------------------------- explain / viz


def programs_named(path: str, name: str | None) -> list[Program]:
    """The program `name` names, else every program of the file (as `flatten` takes them)."""
    return [pick_program(path, name)] if name is not None else read_programs(path)


def cmd_explain(args: argparse.Namespace) -> int:
    explanations = []
    for program in programs_named(args.file, args.program):
        if args.function and not any(f.name == args.function for f in program.functions):
            continue
        names = [args.function] if args.function else None
        explanations.append(explain_program(
            program, names, backend=args.backend, extra_rules=args.rules or (), strategy=args.strategy,
            runner=args.runner,
        ))  # fmt: skip
    if args.function and not explanations:
        raise UserError(f"{args.file}: no program has a function {args.function!r}")
    if args.stmt is not None:
        lines = sorted({s.line for e in explanations for s in e.statements if s.line is not None})
        explanations = [e.only_line(args.stmt) for e in explanations]
        if not any(e.statements for e in explanations):
            raise UserError(
                f"{args.file}:{args.stmt}: no tile statement on line {args.stmt}; the tile statements are on lines "
                f"{', '.join(map(str, lines)) or '(none)'}"
            )
        explanations = [e for e in explanations if e.statements]
    if args.json:
        data = [e.as_dict() for e in explanations]
        sys.stdout.write(json.dumps(data[0] if len(data) == 1 else data, indent=2) + "\n")
    else:
        sys.stdout.write("\n".join(format_explanation(e, terms=args.terms) for e in explanations))
    return 0


def cmd_viz(args: argparse.Namespace) -> int:
    """One picture of each program of the file (of the one `--program` names): `-o` names the first, the others
    take the program's name before the suffix."""
    programs = programs_named(args.file, args.program)
    fmt = args.format
    first = Path(args.output or f"egraph.{fmt}")
    for i, program in enumerate(programs):
        if (
            args.function
            and not any(f.name == args.function for f in program.functions)
            and len(programs) > 1
        ):
            continue
        fn = pick_function(program, args.function)
        eg = FlattenEGraph(
            program, fn, backend=args.backend, extra_rules=args.rules or (), strategy=args.strategy,
            runner=args.runner,
        )  # fmt: skip
        eg.saturate()
        out = (
            first
            if i == 0 or len(programs) == 1
            else first.with_name(f"{first.stem}.{program.name}{first.suffix}")
        )
        if fmt == "html":
            eg.write_html(out, max_nodes=args.max_nodes)
        elif fmt == "dot":
            out.write_text(eg.to_dot())
        else:
            out.write_text(to_svg(eg))
        print(f"wrote {out}")
    return 0


def cmd_compile(args: argparse.Namespace) -> int:
    pto = load_pypto()
    program = pick(programs_of_file(pto, args.file), args.program, args.file)
    options = {"strategy": args.strategy, "extra_rules": tuple(args.rules or ())}
    if args.backend:
        options["backend"] = args.backend
    kwargs: dict[str, object] = {"skip_ptoas": True, "dump_passes": args.dump_passes}
    if args.no_source_loc:
        kwargs["emit_source_loc"] = False
    if args.backend:
        kwargs["backend_type"] = getattr(pto.backend.BackendType, args.backend)
    if args.output:
        kwargs["output_dir"] = args.output
    if args.check:
        return _compile_checked(pto, program, kwargs)
    with collector_paused():  # the CLI's process is its own (pypto_egg/collector.py)
        compiled = compile_with_egg(program, flatten_options=options, **kwargs)
    out = getattr(compiled, "output_dir", None) or args.output
    print(f"pypto-egg compile: {program.name}: wrote {out}")
    return 0


def _compile_checked(pto: Any, program: Any, kwargs: dict[str, object]) -> int:
    """`compile --check`: PyPTO's pipeline with its own C++ FlattenTileNdTo2D, each output of it checked; the
    verdicts that are not `same` on stderr, and status 1 when one is wrong (the code is written either way)."""
    with checking_flatten(on_wrong=lambda v: None) as log:
        compiled = pto.ir.compile(program, **kwargs)
    for v in log.verdicts:
        if v.verdict != "same":
            print(f"pypto-egg compile --check: {v.line()}", file=sys.stderr)
    out = getattr(compiled, "output_dir", None) or kwargs.get("output_dir")
    tally = counts(log.verdicts)
    shown = ", ".join(f"{n} {k}" for k, n in tally.items() if n)
    print(f"pypto-egg compile: {program.name}: wrote {out} with the C++ pass; checked {len(log.verdicts)} "
          f"function(s): {shown or 'none'}")  # fmt: skip
    return 1 if tally["wrong"] else 0


def _version() -> str:
    try:
        return f"{metadata.version('pypto-egg')} (egglog {metadata.version('egglog')})"
    except metadata.PackageNotFoundError:
        return "(not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pypto-egg", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--version", action="version", version=f"pypto-egg {_version()}",
                        help="print pypto-egg's version (and egglog's) and exit")  # fmt: skip
    sub = parser.add_subparsers(dest="command", required=True)

    def common(
        p: argparse.ArgumentParser, default_backend: str | None = DEFAULT_BACKEND, every_program: bool = True
    ) -> None:
        p.add_argument("--program", help="which program of the file (default: "
                       f"{'every one' if every_program else 'the first'})")  # fmt: skip
        backend_help = (
            f"the backend whose capacities the rules read (default: {default_backend}, the one ir.compile uses; "
            f"none: no capacity gate)"
            if default_backend
            else "the backend (default: PyPTO's configured one)"
        )
        p.add_argument("--backend", choices=[*BACKENDS, "none"], default=default_backend, help=backend_help)
        p.add_argument(
            "--rules",
            action="append",
            metavar="EGG",
            help="an extra .egg rule file, loaded after the shipped ones (repeat for more files)",
        )
        p.add_argument("--debug", action="store_true", help="show tracebacks")
        p.add_argument("--strategy", choices=["reference", "optimal"], default="reference",
                       help="reference: the reference pass's answer; optimal: the cheapest legal plan")  # fmt: skip

    p = sub.add_parser(
        "flatten", help="run FlattenTileNdTo2D on files or directories, print the result in the DSL"
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="DSL files, or directories of them")
    common(p)
    p.add_argument(
        "-o", "--output", help="output file (one input) or directory (several inputs or a directory)"
    )
    p.add_argument("-j", "--jobs", type=int, default=1, help="files flattened in parallel (worker processes)")
    p.add_argument(
        "--validate", action="store_true", help="interpret each rewritten function before and after"
    )
    p.add_argument(
        "--seeds", type=int, default=2, help="random inputs per function for --validate (default 2)"
    )
    p.add_argument("--report", action="store_true", help="print the e-graph run report of each program")
    runner_option(p)
    p.set_defaults(run=cmd_flatten)

    p = sub.add_parser("explain", help="why each tile statement was lowered the way it was")
    p.add_argument("file", help="a DSL file")
    common(p)
    p.add_argument("--function", help="only this function (default: every InCore one)")
    p.add_argument("--stmt", type=int, metavar="LINE", help="only the statement on this source line")
    p.add_argument("--json", action="store_true", help="the same as data")
    p.add_argument(
        "--terms", action="store_true", help="also the e-graph term of each plan, for rule authors"
    )
    runner_option(p)
    p.set_defaults(run=cmd_explain)

    p = sub.add_parser(
        "viz", help="write the e-graph of a function of each program as an HTML page (or dot / svg)"
    )
    p.add_argument("file", help="a DSL file")
    common(p)
    p.add_argument("--function", help="which function (default: the first InCore one)")
    p.add_argument("-o", "--output", help="output file (default: egraph.<format>)")
    p.add_argument("--format", choices=["html", "dot", "svg"], default="html",
                   help="html: the decision page (default); dot: Graphviz's text; svg: the graph drawn")  # fmt: skip
    p.add_argument(
        "--max-nodes", type=int, default=900, help="cap on e-nodes of the whole-graph view (default 900)"
    )
    runner_option(p)
    p.set_defaults(run=cmd_viz)

    _compile_parser(sub, common)
    check_parser(sub)
    return parser


def runner_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--runner", choices=["accelerated", "core"], default="accelerated",
        help="accelerated (default): the engine with its speed-ups; core: the rule files and schedule as written "
        "on a fresh e-graph (what rules/ says), slower, the same plans",
    )  # fmt: skip


def _compile_parser(sub: Any, common: Callable[..., None]) -> None:
    """`pypto-egg compile`: PyPTO's own pipeline on a file read as `flatten` reads it."""
    p = sub.add_parser(
        "compile",
        help="PyPTO's whole pipeline with pypto-egg's FlattenTileNdTo2D; writes what ir.compile(skip_ptoas=True) "
        "writes",
        description="Runs PyPTO's default pipeline and code generator on a program, with pypto-egg's "
        "FlattenTileNdTo2D in place of the C++ pass, and writes the kernels and orchestration code that "
        "ir.compile(skip_ptoas=True) writes. FILE is read as `flatten` reads it, in either dialect, and PyPTO "
        "reads pypto-egg's printing of it, so the code's locations name FILE's lines; only a PyPTO-dialect file "
        "pypto-egg's reader cannot read is run with PyPTO, as PyPTO's own tools run it (run it only on files you "
        "trust). Needs PyPTO (built from hw-native-sys/pypto; not the `pypto` on PyPI).",
    )
    p.add_argument("file", help="a Python file defining @pl.program classes (PyPTO's or pypto-egg's dialect)")
    common(p, default_backend=None, every_program=False)
    p.add_argument(
        "-o", "--output", metavar="OUTDIR", help="output directory (default: PyPTO's build_output/...)"
    )
    p.add_argument("--dump-passes", action="store_true", help="also write the IR after every pass")
    p.add_argument(
        "--no-source-loc",
        action="store_true",
        help="no source locations in the kernels (emit_source_loc=False)",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="compile with PyPTO's own C++ FlattenTileNdTo2D and check each of its outputs (as `pypto-egg check` "
        "does); exit status 1 when one is wrong",
    )
    p.set_defaults(run=cmd_compile)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "backend", None) == "none":
        args.backend = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UnmatchedRuleWarning)
        code = _run(args)
    for text in dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, UnmatchedRuleWarning)):
        print(f"pypto-egg {args.command}: warning: {text}", file=sys.stderr)
    return code


def _run(args: argparse.Namespace) -> int:
    try:
        check_rule_files(
            getattr(args, "rules", None) or ()
        )  # (once, against the rule file, before any input)
        return int(args.run(args))
    except InternalError as e:
        if args.debug:
            traceback.print_exc()
        print(f"pypto-egg {args.command}: internal error: {e}", file=sys.stderr)
        return 3
    except (PyptoEggError, ValueError, KeyError, OSError) as e:
        if args.debug:
            traceback.print_exc()
        message = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
        print(f"pypto-egg {args.command}: error: {message}", file=sys.stderr)
        return 2
    except Exception as e:
        if args.debug:
            traceback.print_exc()
        print(f"pypto-egg {args.command}: internal error: {type(e).__name__}: {e} (run with --debug for the "
              f"traceback, and please report it)", file=sys.stderr)  # fmt: skip
        return 3


if __name__ == "__main__":
    sys.exit(main())
