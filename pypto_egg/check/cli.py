"""`pypto-egg check INPUT... [--output OUTPUT] [--json] [-j N] [--seeds N] [--reproducers DIR]`.

INPUT is a program the pass receives (PyPTO's text or the DSL, read, never executed), or a directory of them.
Without --output the output checked is PyPTO's C++ pass's; with it, OUTPUT's program (a file for one input, a
directory of files at the same relative paths for a directory). One verdict per InCore / AIC / AIV function, a
line each (`--json`: one JSON object each). Exit status: 0 when nothing is wrong, 1 when something is, 2 on bad
input. Each wrong verdict gets a reproducer in --reproducers (default ./check-reproducers)."""

from __future__ import annotations

import argparse
import multiprocessing
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import PyptoEggError, UserError
from ..inputs import input_files
from ..language.parser import parse_all
from ..pypto.loader import load_pypto
from .reproduce import reduce_program, write_reproducer
from .run import check_against_cxx, check_text, refused_text
from .verdicts import Verdict, counts


@dataclass(frozen=True)
class Job:
    """One input file to check, with its output file (None: the C++ pass's)."""

    path: str
    output: str | None
    seeds: int
    reproducers: str


@dataclass(frozen=True)
class Result:
    path: str
    verdicts: tuple[Verdict, ...]
    error: str | None = None


def check_file(job: Job) -> Result:
    """Every verdict of one input file, with a reproducer for each wrong one; an unreadable file is an error."""
    try:
        text = Path(job.path).read_text()
        if job.output is not None and not Path(job.output).is_file():
            verdicts = refused_text(text, job.path, f"there is no output file {job.output}")
        else:
            output = Path(job.output).read_text() if job.output is not None else None
            verdicts = check_text(text, job.path, output, job.output or "<output>", job.seeds)
        verdicts = [_with_reproducer(v, job, text) if v.verdict == "wrong" else v for v in verdicts]
        return Result(job.path, tuple(verdicts))
    except (PyptoEggError, OSError, UnicodeDecodeError) as e:
        return Result(job.path, (), f"{job.path}: {e}" if job.path not in str(e) else str(e))


def _with_reproducer(v: Verdict, job: Job, text: str) -> Verdict:
    """The verdict, naming the reproducer written for it (against the C++ pass, reduced; against a given output,
    the input and output of the function alone)."""
    folder = Path(job.reproducers)
    program = next(p for p in parse_all(text, job.path) if p.name == v.program)
    if job.output is None:
        pto = load_pypto()

        def verdict_of(candidate: Any) -> Verdict | None:
            return next(
                (x for x in check_against_cxx(candidate, job.seeds, pto) if x.function == v.function), None
            )

        reduced = reduce_program(program, v.function, v, verdict_of)
        path = write_reproducer(reduced, v, folder, "pypto-egg check {path}")
    else:
        path = write_reproducer(program, v, folder, f"pypto-egg check {{path}} --output {job.output}")
    return replace(v, detail=f"{v.detail}; reproducer: {path}", reproducer=str(path))


def _jobs(args: argparse.Namespace) -> list[Job]:
    inputs = input_files(args.inputs)
    if not inputs:
        raise UserError(f"{' '.join(args.inputs)}: no .py files")
    outputs: list[str | None] = [None] * len(inputs)
    if args.output is not None:
        out = Path(args.output)
        if out.is_dir():  # (an input without its output file: the pass refused it, its functions no output)
            outputs = [str(out / rel) for _, rel in inputs]
        elif out.is_file():
            if len(inputs) != 1:
                raise UserError(
                    f"--output {args.output} is one file for {len(inputs)} inputs; give a directory"
                )
            outputs = [str(out)]
        else:
            raise UserError(f"{args.output}: no such file or directory")
    else:
        load_pypto()  # (the C++ pass's output needs PyPTO: say so before any file is read)
    return [Job(str(f), o, args.seeds, args.reproducers) for (f, _), o in zip(inputs, outputs)]


def _results(jobs: list[Job], workers: int) -> Iterator[Result]:
    if workers <= 1 or len(jobs) <= 1:
        for job in jobs:
            yield check_file(job)
        return
    # egglog cannot run in a process forked after it ran, so workers start fresh
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield from pool.map(check_file, jobs)


def cmd_check(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise UserError(f"-j {args.jobs}: at least one worker")
    if args.seeds < 1:
        raise UserError(f"--seeds {args.seeds}: at least one set of inputs")
    jobs = _jobs(args)
    every: list[Verdict] = []
    failed = False
    for result in _results(jobs, args.jobs):
        if result.error is not None:
            failed = True
            print(f"pypto-egg check: error: {result.error}", file=sys.stderr)
        for v in result.verdicts:
            print(v.json() if args.json else v.line(), flush=True)
        every += result.verdicts
    tally = counts(every)
    shown = ", ".join(f"{n} {k}" for k, n in tally.items() if n)
    print(f"pypto-egg check: {len(every)} function(s): {shown or 'none'}", file=sys.stderr)
    if failed:
        return 2
    return 1 if tally["wrong"] else 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "check",
        help="check a FlattenTileNdTo2D output (the C++ pass's, or a file's) against pypto-egg's answer, the pass's "
        "contract, window bounds and the interpreter",
        description=(__doc__ or "").split("\n\n", 1)[1],
    )
    p.add_argument(
        "inputs", nargs="+", metavar="INPUT", help="programs the pass receives, or directories of them"
    )
    p.add_argument(
        "--output", metavar="OUTPUT", help="the output to check: a file (one input) or a directory of files at the "
        "inputs' relative paths (default: PyPTO's C++ pass's output)",
    )  # fmt: skip
    p.add_argument("--json", action="store_true", help="one JSON object per function: program, function, verdict, "
                   "reason, detail")  # fmt: skip
    p.add_argument("-j", "--jobs", type=int, default=1, help="files checked in parallel (worker processes)")
    p.add_argument("--seeds", type=int, default=3, help="input sets the interpreter runs each function on: the "
                   "first of distinct values, the others random (default 3)")  # fmt: skip
    p.add_argument("--reproducers", default="check-reproducers", metavar="DIR",
                   help="where a reproducer of each wrong verdict is written (default ./check-reproducers)")  # fmt: skip
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.set_defaults(run=cmd_check)


__all__ = ["add_parser", "check_file", "cmd_check"]
