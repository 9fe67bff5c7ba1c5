"""The TileOps2D property verifier (B-210..B-213), independent of the pass that should establish it."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from ..errors import VerificationError
from ..ir.expr import Call, MakeTuple, tile_operand_types
from ..ir.span import Span
from ..ir.stmt import AssignStmt, Program
from ..ir.types import TileType
from ..ir.walk import walk_calls
from .properties import IRProperty

_EXEMPT = ("tile.load", "tile.store")


@dataclass(frozen=True)
class Diagnostic:
    rule: str
    function: str
    message: str
    span: Span | None

    def __str__(self) -> str:
        where = f" [{self.span}]" if self.span is not None else ""
        return f"{self.rule}: {self.message}{where}"


def tile_ops_2d_diagnostics(program: Program, checked: Collection[str] = ()) -> list[Diagnostic]:
    """Every violation of TileOps2D, in the InCore functions but those named in `checked`, which the caller saw
    hold it on these same terms (the pass's walk of a function it returns as it is)."""
    out: list[Diagnostic] = []
    for fn in program.functions:
        if not fn.type.is_incore or fn.name in checked:
            continue

        def report(message: str, span: Span | None, fn_name: str = fn.name) -> None:
            out.append(Diagnostic("TileOps2D", fn_name, message, span))

        for stmt, call in walk_calls(fn.body):
            op = call.op
            if op in _EXEMPT or not op.startswith("tile."):
                continue
            result = stmt.var.type if type(stmt) is AssignStmt else call.type
            if type(result) is TileType and len(result.shape) > 2:
                report(f"Tile op '{op}' in InCore function '{fn.name}' produces >2D tile (should have been "
                       f"flattened to 2D)", stmt.span or call.span)  # fmt: skip
            if op in VERIFIED_FORMS and not form_holds(call):
                report(_form_message(call, fn.name), stmt.span or call.span)
            if tile_operand_types(call.args, 3):
                report(f"Tile op '{op}' in InCore function '{fn.name}' has >2D tile argument (should have been "
                       f"flattened to 2D)", stmt.span or call.span)  # fmt: skip
    return out


VERIFIED_FORMS = frozenset(
    {"tile.transpose", "tile.assemble"}
)  # the ops whose operands' form TileOps2D checks


def form_holds(call: Call) -> bool:
    """B-211, B-212: a transpose has its four operands (the scratch tile last); a three-operand assemble's offset is
    a (row, col) literal."""
    if call.op == "tile.transpose":
        return len(call.args) == 4
    if call.op != "tile.assemble" or len(call.args) != 3:
        return True
    offset = call.args[2]
    return type(offset) is MakeTuple and len(offset.elements) == 2


def _form_message(call: Call, fn_name: str) -> str:
    """What a call `form_holds` refuses is missing."""
    if call.op == "tile.transpose":
        return (f"tile.transpose in InCore function '{fn_name}' has {len(call.args)} arguments (expected 4: input, "
                f"axis1, axis2, scratch after FlattenTileNdTo2D)")  # fmt: skip
    offset = call.args[2]
    if not isinstance(offset, MakeTuple):
        return (f"tile.assemble in InCore function '{fn_name}' has a non-literal offset (expected a 2-element "
                f"(row, col) tuple after FlattenTileNdTo2D)")  # fmt: skip
    return (f"tile.assemble in InCore function '{fn_name}' has a rank-{len(offset.elements)} offset (expected 2: "
            f"row, col after FlattenTileNdTo2D)")  # fmt: skip


def verify_tile_ops_2d(program: Program, checked: Collection[str] = ()) -> None:
    """Raise VerificationError (naming TileOps2D) listing every violation (`checked`: see
    `tile_ops_2d_diagnostics`)."""
    diags = tile_ops_2d_diagnostics(program, checked)
    if diags:
        lines = "\n".join(f"  - {d}" for d in diags)
        raise VerificationError(f"IR property TileOps2D does not hold ({len(diags)} violation(s)):\n{lines}")


VERIFIERS = {IRProperty.TileOps2D: verify_tile_ops_2d}


def verify_properties(
    properties: set[IRProperty] | list[IRProperty], program: Program, pass_name: str = ""
) -> None:
    """Run the verifier of each property that has one."""
    for prop in properties:
        check = VERIFIERS.get(prop)
        if check is not None:
            try:
                check(program)
            except VerificationError as e:
                prefix = f"after {pass_name}: " if pass_name else ""
                raise VerificationError(prefix + str(e)) from None
