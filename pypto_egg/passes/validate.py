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
from ..ir.stmt import Program

DEFAULT_DYNAMIC = 16  # a pl.dynamic dim's value unless the caller gives one or a static window needs more


class ValidationError(PassError):
    """The rewritten program computes something else than the input program."""


@dataclass
class ValidationReport:
    checked: list[str] = field(default_factory=list)  # functions interpreted on both sides and equal
    skipped: dict[str, str] = field(default_factory=dict)  # function -> why the interpreter could not run it
    sizes: dict[str, dict[str, int]] = field(
        default_factory=dict
    )  # function -> the dynamic dims' values taken

    def __str__(self) -> str:
        lines = [f"validated {len(self.checked)} function(s): {', '.join(self.checked) or '-'}"]
        lines += [f"  interpreted on {SINGLE_CORE}"] if self.checked else []
        for name, sizes in self.sizes.items():
            lines.append(f"  {name}: dynamic dims " + ", ".join(f"{d}={n}" for d, n in sizes.items()))
        lines += [f"  not validated: {name}: {why}" for name, why in self.skipped.items()]
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
        for seed in range(seeds):
            try:
                inputs = interp.random_inputs(fn, seed, dyn=sizes, scalars=scalars)
                want = interp.run(before, fn.name, inputs, sizes)
            except (UserError, ValueError, KeyError, IndexError, TypeError) as e:
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
