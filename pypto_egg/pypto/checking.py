"""PyPTO's C++ FlattenTileNdTo2D, checked by pypto-egg as PyPTO's pipeline runs it.

Inside `checking_flatten(...)`, every pipeline PyPTO builds runs the C++ pass as usual (its output, and so the code
generated from it, unchanged), and each output is checked as it is made (`pypto_egg.check`): a function whose output
is wrong warns, raises or calls back, as the caller chose.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..check.outputs import Output, our_answer, read_output, through_pypto
from ..check.program import Sides, check_sides
from ..check.verdicts import Verdict
from ..errors import PyptoEggError
from ..language.parser import parse
from .loader import PyPTO, load_pypto
from .pipeline import PASS_NAME, reference_properties, swapped_flatten

OnWrong = str | Callable[[Verdict], Any]


class CheckWarning(UserWarning):
    """The C++ pass's output of a function is wrong; `verdict` says how."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(f"FlattenTileNdTo2D: {verdict.line()}")
        self.verdict = verdict


class CheckError(PyptoEggError):
    """The C++ pass's output of a function is wrong (raised by `checking_flatten(on_wrong="raise")`)."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(f"FlattenTileNdTo2D: {verdict.line()}")
        self.verdict = verdict


@dataclass
class CheckLog:
    """What a `checking_flatten` block checked: every verdict, and the seconds each program's check took."""

    verdicts: list[Verdict] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)

    @property
    def wrong(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.verdict == "wrong"]


def check_cxx_output(pto: PyPTO, program: Any, output: Any, seeds: int = 3) -> list[Verdict]:
    """The verdicts of the C++ pass's `output` for `program` (both PyPTO's objects), each read through PyPTO's
    printing of it."""
    before = parse(pto.ir.python_print(program), f"<{program.name}>", keep_unreadable=True)
    theirs: Output = read_output(pto.ir.python_print(output), f"<{program.name}: the C++ pass's output>")
    sides = Sides(before, our_answer(before), theirs, lambda p: through_pypto(pto, p))
    return check_sides(sides, seeds)


def _act(on_wrong: OnWrong, verdict: Verdict) -> None:
    if callable(on_wrong):
        on_wrong(verdict)
    elif on_wrong == "raise":
        raise CheckError(verdict)
    else:
        warnings.warn(CheckWarning(verdict), stacklevel=2)


@contextlib.contextmanager
def checking_flatten(on_wrong: OnWrong = "warn", seeds: int = 3) -> Iterator[CheckLog]:
    """Inside, PyPTO's pipelines run the C++ FlattenTileNdTo2D and pypto-egg checks each output: a wrong
    verdict warns (`CheckWarning`, carrying the verdict), raises (`CheckError`) or calls `on_wrong(verdict)`. The
    pass's output is returned as the C++ pass made it. Yields the log of every verdict. Process-wide, as
    `replacing_flatten` is."""
    if not callable(on_wrong) and on_wrong not in ("warn", "raise"):
        raise ValueError(f"on_wrong must be 'warn', 'raise' or a callable, not {on_wrong!r}")
    pto = load_pypto()
    log = CheckLog()
    properties = reference_properties(pto)

    def transform(program: Any) -> Any:
        output = pto.passes.flatten_tile_nd_to_2d()(program)
        start = time.perf_counter()
        verdicts = check_cxx_output(pto, program, output, seeds)
        log.seconds.append(time.perf_counter() - start)
        log.verdicts += verdicts
        for v in verdicts:
            if v.verdict == "wrong":
                _act(on_wrong, v)
        return output

    with swapped_flatten(lambda: pto.passes.create_program_pass(transform, PASS_NAME, properties)):
        yield log
