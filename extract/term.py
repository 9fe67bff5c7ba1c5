"""Extracted terms: a DAG, so a subterm shared in the e-graph is one object here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from pypto_egg.errors import InternalError
from pypto_egg.ir.node import fast_init
from pypto_egg.rules import schema

Prim = Union[int, float, str, bool]


@fast_init
@dataclass(frozen=True, eq=False, slots=True)
class Term:
    op: str
    args: tuple[Term | Prim, ...]

    def __str__(self) -> str:
        if not self.args:
            return f"({self.op})"
        parts = [
            str(a) if isinstance(a, Term) else repr(a) if isinstance(a, str) else str(a) for a in self.args
        ]
        return f"({self.op} {' '.join(parts)})"

    def field(self, name: str) -> Term | Prim:
        """An argument by the field name its constructor's declaration gives it (rules/schema.py)."""
        at = _PLACES.get((self.op, name))
        if at is None:
            at = _PLACES[self.op, name] = schema.declared(self.op).index(name)
        return self.args[at]


_PLACES: dict[tuple[str, str], int] = {}  # (constructor, field) -> its argument's place, as the schema says


def as_int(x: object) -> int:
    if not isinstance(x, int):
        raise InternalError(f"expected an integer in a plan term, got {x!r}")
    return x
