"""Whether a function of a pass's output computes what the input's computes: both run by the interpreter, strictly
(a window outside its tensor or tile is an error, not clipped), on the same inputs. The first input gives every
element a value of its own, so an element moved to the wrong place shows; the others are random, for arithmetic.
An Out tensor starts filled with a sentinel, so an element never written shows too."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import interp
from ..errors import UserError
from ..interp import BoundsError, NotInterpretable
from ..interp.sizes import dynamic_sizes
from ..ir.stmt import Function, Program
from ..passes.validate import DEFAULT_DYNAMIC, INTERPRETER_BUDGET, byte_size, first_difference, largest_value
from .verdicts import BOUNDS, CANNOT_RUN, DYNAMIC_EXTENT, MEANING, NO_SEMANTICS, TOO_LARGE

# what the interpreter may raise on a program it cannot run (besides UserError): an op's numpy call refusing its
# operands, a missing input, an index past a tuple
_CANNOT = (UserError, ValueError, KeyError, IndexError, TypeError, ZeroDivisionError, OverflowError)


@dataclass(frozen=True)
class Meaning:
    """`same`: equal outputs on every input; `wrong`: `reason` (meaning | bounds) says how; `undecided`: `reason`
    says what stopped the interpreter (no-semantics | dynamic-extent | too-large | cannot-run)."""

    outcome: str  # same | wrong | undecided
    reason: str | None
    detail: str


def compare_meaning(before: Program, after: Program, name: str, seeds: int = 3) -> Meaning:
    """Interpret function `name` of both programs on `seeds` inputs (the first of distinct values). (numpy's
    warnings of overflow are silenced: both sides overflow alike, and the outputs are compared.)"""
    with np.errstate(all="ignore"):
        return _compare(before, after, name, seeds)


def _compare(before: Program, after: Program, name: str, seeds: int) -> Meaning:
    fn = before.function(name)
    out_fn = after.function(name)
    if len(fn.params) != len(out_fn.params):
        return Meaning("wrong", MEANING, f"it takes {len(out_fn.params)} parameters, the input's "
                       f"{len(fn.params)}")  # fmt: skip
    # the output's parameters are the input's in order, whatever they are named there: its name -> the input's
    names = {theirs.var.name: mine.var.name for mine, theirs in zip(fn.params, out_fn.params)}
    sizes = dynamic_sizes(fn, DEFAULT_DYNAMIC)
    largest = largest_value(fn, sizes)
    if largest is not None and largest[1] > INTERPRETER_BUDGET:
        var, nbytes, ty = largest
        return Meaning("undecided", TOO_LARGE, f"'{var}' ({ty}) takes {byte_size(nbytes)}, past the interpreter's "
                       f"{byte_size(INTERPRETER_BUDGET)}")  # fmt: skip
    for seed in range(max(1, seeds)):
        inputs = _inputs(fn, seed, sizes)
        if isinstance(inputs, Meaning):
            return inputs
        what = "inputs of distinct values" if seed == 0 else f"random inputs, seed {seed}"
        try:
            want = interp.run(before, name, inputs, sizes, strict=True)
        except NotInterpretable as e:
            return Meaning("undecided", NO_SEMANTICS, f"the interpreter has no semantics for {e.op}: {e}")
        except BoundsError as e:
            reason = DYNAMIC_EXTENT if sizes else CANNOT_RUN
            return Meaning("undecided", reason, f"the input itself does not run{_at(sizes)}: {e}")
        except _CANNOT as e:
            return Meaning("undecided", CANNOT_RUN, f"the interpreter cannot run the input{_at(sizes)}: {e}")
        try:
            renamed = {theirs: inputs[mine] for theirs, mine in names.items()}
            got = {
                names.get(k, k): v for k, v in interp.run(after, name, renamed, sizes, strict=True).items()
            }
        except NotInterpretable as e:
            return Meaning("undecided", NO_SEMANTICS, f"the interpreter has no semantics for {e.op}: {e}")
        except BoundsError as e:
            return Meaning("wrong", BOUNDS, f"{e} (running the output on {what}{_at(sizes)})")
        except _CANNOT as e:
            return Meaning(
                "wrong", MEANING, f"the input runs but the output does not ({what}{_at(sizes)}): {e}"
            )
        difference = first_difference(want, got)
        if difference is not None:
            output, index, a, b = difference
            return Meaning("wrong", MEANING, f"output '{output}' differs at index {list(index)}: {a} from the "
                           f"input, {b} from the output ({what}{_at(sizes)})")  # fmt: skip
    return Meaning("same", None, f"the same outputs on {max(1, seeds)} input(s)")


def _inputs(fn: Function, seed: int, sizes: dict[str, int]) -> dict[str, Any] | Meaning:
    try:
        return interp.random_inputs(fn, seed, dyn=sizes, unique=seed == 0)
    except _CANNOT as e:
        return Meaning("undecided", CANNOT_RUN, f"no inputs can be made for it: {e}")


def _at(sizes: dict[str, int]) -> str:
    return ", dynamic dims " + ", ".join(f"{d}={n}" for d, n in sizes.items()) if sizes else ""
