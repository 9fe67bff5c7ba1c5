"""pypto-egg's pass over a PyPTO program's own objects: no program text either way.

Only the InCore / AIC / AIV functions are read into pypto-egg's IR (`objects_in`); the pass runs on them, and
each function it rewrote is built back as PyPTO objects (`objects_out`). Every other function, every function
the pass returned as it was, and every statement it kept stays PyPTO's own object.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..errors import UserError
from ..ir.stmt import Function, Program
from .loader import PyPTO
from .objects_in import FunctionReader, Origins, Unconvertible
from .objects_out import FunctionBuilder

Pass = Callable[[Program], Program]


class UnreadableFunction(UserError):
    """An InCore function with N-D tiles that holds a construct pypto-egg's IR has no form for."""


def run_on_objects(pto: PyPTO, egg_pass: Pass, program: Any, timings: dict[str, float] | None = None) -> Any:
    """`egg_pass` applied to a PyPTO program, as a PyPTO program. `timings`, when given, gets the seconds of
    each step added to it: "in" (reading PyPTO's objects), "pass", "out" (building PyPTO's objects)."""
    clock = time.perf_counter
    t0 = clock()
    read: list[tuple[Any, Function, Origins]] = []
    for theirs in program.functions.values():
        if not pto.core_ir.is_incore_type(theirs.func_type):
            continue
        reader = FunctionReader(pto, theirs)
        try:
            ours = reader.read()
        except Unconvertible as e:
            if _has_nd_tile(pto, theirs):
                raise UnreadableFunction(
                    f"{e}; the pass must flatten this function's N-D tiles, so it cannot keep it as it is "
                    f"(write the construct another way, or flatten the function's tiles to 2-D by hand)"
                ) from None
            continue  # nothing to flatten: PyPTO's object passes through
        read.append((theirs, ours, reader.origins))
    t1 = clock()
    if timings is not None:
        timings["in"] = timings.get("in", 0.0) + t1 - t0
    if not read:
        return program
    before = Program(program.name, tuple(f for _, f, _ in read), dialect="pypto")
    after = egg_pass(before)
    t2 = clock()
    if timings is not None:
        timings["pass"] = timings.get("pass", 0.0) + t2 - t1
    if after is before:
        return program
    rebuilt = {
        theirs.name: FunctionBuilder(pto, theirs, origins).build(new)
        for (theirs, old, origins), new in zip(read, after.functions)
        if new is not old
    }
    result = program
    if rebuilt:
        functions = [rebuilt.get(f.name, f) for f in program.functions.values()]
        result = pto.core_ir.Program(functions, program.name, program.span)
    if timings is not None:
        timings["out"] = timings.get("out", 0.0) + clock() - t2
    return result


def _has_nd_tile(pto: PyPTO, function: Any) -> bool:
    """Whether any variable of the function is a tile of rank > 2 (what the pass must flatten)."""
    ir = pto.core_ir
    found = False

    class Scan(ir.IRVisitor):  # type: ignore[misc, name-defined]
        def visit_var(self, op: Any) -> None:
            nonlocal found
            t = op.type
            if type(t) is ir.TileType and len(t.shape) > 2:
                found = True

        def visit_iter_arg(self, op: Any) -> None:
            self.visit_var(op)

    Scan().visit_function(function)
    return found
