"""Translation validation: the interpreter runs every rewritten function before and after the pass on the
same random inputs, and the first output element that differs is reported.

The pass's own checks are about form (TileOps2D); this one is about meaning, so a user rule that forwards
the wrong operand or folds an offset wrongly is caught on the program it broke.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import interp
from ..errors import PassError, UserError
from ..interp import SINGLE_CORE
from ..interp.sizes import dynamic_sizes
from ..ir.expr import static_int
from ..ir.printer import python_print
from ..ir.stmt import AssignStmt, Function, Program
from ..ir.types import TensorType, TileType
from ..ir.walk import blocks

DEFAULT_DYNAMIC = 16  # a pl.dynamic dim's value unless the caller gives one or a static window needs more
INTERPRETER_BUDGET = 1 << 30  # bytes: a function with a value larger than this is not interpreted


class ValidationError(PassError):
    """The rewritten program computes something else than the input program."""


@dataclass
class ValidationReport:
    checked: list[str] = field(default_factory=list)  # functions interpreted on both sides and equal
    skipped: dict[str, str] = field(default_factory=dict)  # function -> why the interpreter could not run it
    too_large: dict[str, str] = field(
        default_factory=dict
    )  # function -> the value past the interpreter's budget
    sizes: dict[str, dict[str, int]] = field(
        default_factory=dict
    )  # function -> the dynamic dims' values taken

    def __str__(self) -> str:
        lines = [f"validated {len(self.checked)} function(s): {', '.join(self.checked) or '-'}"]
        lines += [f"  interpreted on {SINGLE_CORE}"] if self.checked else []
        for name, sizes in self.sizes.items():
            lines.append(f"  {name}: dynamic dims " + ", ".join(f"{d}={n}" for d, n in sizes.items()))
        lines += [f"  not validated: {name}: {why}" for name, why in self.skipped.items()]
        lines += [f"  not validated: {name}: {why}" for name, why in self.too_large.items()]
        return "\n".join(lines)


def validate_translation(
    before: Program,
    after: Program,
    seeds: int = 2,
    dyn: dict[str, int] | None = None,
    scalars: dict[str, Any] | None = None,
) -> ValidationReport:
    """Interpret each InCore function the pass changed, on `seeds` random inputs; raise ValidationError at
    the first differing output element. Functions the interpreter cannot run are listed as skipped."""
    report = ValidationReport()
    changed = {id(f) for f in after.functions}
    for fn in before.functions:
        if not fn.type.is_incore or id(fn) in changed:
            continue  # the pass returned it unchanged
        sizes = {**dynamic_sizes(fn, DEFAULT_DYNAMIC), **(dyn or {})}
        if sizes:
            report.sizes[fn.name] = sizes
        largest = largest_value(fn, sizes)
        if largest is not None and largest[1] > INTERPRETER_BUDGET:
            name, nbytes, ty = largest
            report.too_large[fn.name] = (
                f"'{name}' ({ty}) takes {byte_size(nbytes)}, past the interpreter's "
                f"{byte_size(INTERPRETER_BUDGET)}; interpretation was skipped (validate a smaller instance of the program)"
            )
            continue
        for seed in range(seeds):
            try:
                inputs = interp.random_inputs(fn, seed, dyn=sizes, scalars=scalars)
                want = interp.run(before, fn.name, inputs, sizes)
            except (UserError, ValueError, KeyError, IndexError, TypeError, MemoryError) as e:
                report.skipped[fn.name] = f"the interpreter cannot run the input: {e}"
                break
            try:
                got = interp.run(after, fn.name, inputs, sizes)
            except (UserError, ValueError, KeyError, IndexError, TypeError) as e:
                raise ValidationError(
                    f"translation validation: function '{fn.name}' runs before FlattenTileNdTo2D but not after "
                    f"it (seed {seed}): {e}"
                ) from None
            difference = first_difference(want, got)
            if difference is not None:
                output, index, a, b = difference
                raise ValidationError(
                    f"translation validation: FlattenTileNdTo2D changed the meaning of function '{fn.name}': "
                    f"output '{output}' differs at index {index}: {a} before, {b} after (random inputs, "
                    f"seed {seed}). A rule lowered a statement of this function to something else; "
                    f"`pypto-egg explain` shows the plan each statement took."
                )
        else:
            report.checked.append(fn.name)
    return report


def largest_value(fn: Function, sizes: dict[str, int]) -> tuple[str, int, str] | None:
    """(name, bytes, type) of the largest tensor or tile a function names, its dynamic dims at `sizes`."""
    typed = [(p.var.name, p.var.type) for p in fn.params]
    typed += [(s.var.name, s.var.type) for body in blocks(fn.body) for s in body if isinstance(s, AssignStmt)]
    best: tuple[str, int, str] | None = None
    for name, ty in typed:
        if not isinstance(ty, TensorType | TileType):
            continue
        nbytes = ty.dtype.nbytes
        for d in ty.shape:
            v = static_int(d)
            if v is None:
                v = sizes.get(getattr(d, "name", ""), DEFAULT_DYNAMIC)
            nbytes *= v
        if best is None or nbytes > best[1]:
            best = (name, nbytes, python_print(ty))
    return best


def byte_size(nbytes: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.4g} {unit}"
    return f"{nbytes} B"


def first_difference(
    want: dict[str, Any], got: dict[str, Any], rtol: float = 1e-5, atol: float = 1e-5
) -> tuple[str, tuple[int, ...], Any, Any] | None:
    """(output, index, value before, value after) of the first element that differs, or None."""
    for key in sorted(want, key=lambda k: k == "return"):  # the Out tensors first: they name the output
        xs, ys = (want[key], got.get(key)) if key == "return" else ([want[key]], [got.get(key)])
        if ys is None or len(xs) != len(ys):
            return (key, (), "a value", "none")
        for i, (x, y) in enumerate(zip(xs, ys)):
            name = f"return[{i}]" if key == "return" else key
            x, y = np.asarray(x), np.asarray(y)
            if x.shape != y.shape:
                return (name, (), f"shape {x.shape}", f"shape {y.shape}")
            if x.dtype.kind == "f":
                bad = ~np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=True)
            else:
                bad = x != y
            if np.any(bad):
                index = tuple(int(v) for v in np.argwhere(bad)[0]) if x.ndim else ()
                return (name, index, _scalar(x[index]), _scalar(y[index]))
    return None


def _scalar(v: Any) -> Any:
    item = v.item() if hasattr(v, "item") else v
    return round(item, 6) if isinstance(item, float) and math.isfinite(item) else item
