"""What every reader of DSL text shares: where the text came from, the DSL's names for ops, enums and
keywords, and how a dotted `pl.` name is read."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from ..errors import DSLError, RefusedProgram
from ..ir.printer import CAST_MODES
from ..ir.span import Span
from ..ir.types import (
    AtomicType,
    CompactMode,
    MemorySpace,
    PadValue,
    TensorLayout,
    TileLayout,
)


@dataclass(frozen=True)
class Finding:
    """A call or an annotation a tolerant reading went past: where it is, and what its op's deduction (or the
    annotation check) says of it."""

    span: Span
    message: str


# function name -> printed variable name -> the name hint the printer made it from (see `parse`)
NameHints = Mapping[str, Mapping[str, str]]

ENUMS: dict[str, Any] = {
    "Mem": MemorySpace, "MemorySpace": MemorySpace, "TileLayout": TileLayout, "TensorLayout": TensorLayout,
    "PadValue": PadValue, "CompactMode": CompactMode, "AtomicType": AtomicType,
}  # fmt: skip
OP_ALIASES = {
    "load": "tile.load", "store": "tile.store", "cast": "tile.cast", "transpose": "tile.transpose",
    "matmul": "tile.matmul", "matmul_acc": "tile.matmul_acc", "batch_matmul": "tile.batch_matmul",
    "batch_matmul_acc": "tile.batch_matmul_acc", "create_tensor": "tensor.create", "reshape": "tile.reshape",
    "move": "tile.move", "slice": "tile.slice", "assemble": "tile.assemble",
}  # fmt: skip
KEYWORD_ALIASES = {("tile.load", "valid_shapes"): "valid_shape"}
BINOPS = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Div: "truediv",
    ast.LShift: "lshift", ast.RShift: "rshift", ast.BitAnd: "bitand", ast.BitOr: "bitor", ast.BitXor: "bitxor",
}  # fmt: skip
CMPOPS = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}
CAST_CODES = {v: k for k, v in CAST_MODES.items()}


# ops whose omitted target memory PyPTO's DSL spells as Vec (the specification's newer DSL leaves it unset)
VEC_BY_DEFAULT = frozenset({"tile.load", "tile.create"})


class Ctx:
    """Where the text came from, for spans and error positions; and, for a reader that tolerates what a pass's
    output may get wrong (`findings`), what it found."""

    def __init__(
        self,
        filename: str,
        line_offset: int,
        col_offset: int,
        env: dict[str, Any],
        dialect: str = "pypto_egg",
        findings: list[Finding] | None = None,
    ) -> None:
        self.filename, self.line_offset, self.col_offset, self.env = filename, line_offset, col_offset, env
        self.dialect = dialect  # which `pl` the text imports: its ops' defaults differ (see op_call)
        self.findings = findings

    def tolerated(self, node: ast.AST, message: str) -> bool:
        """Whether this reader goes on past a call its op refuses (the deduction's message, recorded with the
        call's position), or an annotation that disagrees with its value: the checker reads a pass's output so
        (and reports the call), every other reader stops with the error."""
        if self.findings is None:
            return False
        self.findings.append(Finding(self.span(node), message))
        return True

    def span(self, node: ast.AST) -> Span:
        return Span(self.filename, getattr(node, "lineno", 0) + self.line_offset,
                    getattr(node, "col_offset", 0) + 1 + self.col_offset)  # fmt: skip

    def error(self, node: ast.AST, message: str, refused: bool = False) -> NoReturn:
        """Raise the error at `node`; `refused`: one PyPTO's reader makes too (RefusedProgram)."""
        raise (RefusedProgram if refused else DSLError)(f"{self.span(node)}: {message}")


def dotted(node: ast.AST) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def pl_name(node: ast.AST) -> str | None:
    """`pl.tile.add` → "tile.add", `pld.tile.get` → "pld.tile.get"; None when not rooted at pl / pld."""
    d = dotted(node)
    if d is None or "." not in d:
        return None
    root, rest = d.split(".", 1)
    if root == "pld":
        return "pld." + rest
    return rest if root in ("pl", "language") or root.endswith("pl") else None


# function types, levels and roles are kept as their member names
NAMED_ENUMS = ("Level", "Role", "FunctionType")
