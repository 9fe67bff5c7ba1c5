"""The op registry's schema: each op's operands, keywords, type deduction and result memory. ops.py fills it
with every op and its deduction; the printer reads the schemas only."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .expr import Expr
from .types import MemorySpace, Type

Kwargs = dict[str, Any]
Deduce = Callable[[str, Sequence[Expr], Kwargs], Type]
# where an op's result lives when its deduction leaves it unplaced (from the op, a keyword or an operand)
OutputMemory = Callable[[Sequence[Expr], Kwargs], "MemorySpace | None"]


@dataclass(frozen=True)
class OpDef:
    """An op's schema. `deduce=None` marks an op whose result type is its annotation: the pass never
    rewrites such an op, and refuses it on an N-D tile (it could not re-derive the flattened type)."""

    name: str
    params: tuple[str, ...]  # positional operands, in order
    required: int  # how many of them must be given
    kwargs: frozenset[str]  # accepted keyword attributes
    deduce: Deduce | None
    kwarg_params: frozenset[str] = field(default_factory=frozenset)  # operands printed as keywords
    variadic: bool = False  # takes any number of trailing operands
    any_keyword: bool = False  # takes keywords beyond its named parameters
    memory: OutputMemory | None = None

    @property
    def deduces(self) -> bool:
        return self.deduce is not None


REGISTRY: dict[str, OpDef] = {}


def register(
    name: str,
    params: Sequence[str],
    deduce: Deduce,
    required: int | None = None,
    kwargs: Sequence[str] = (),
    kwarg_params: Sequence[str] = (),
    memory: OutputMemory | None = None,
) -> None:
    REGISTRY[name] = OpDef(
        name,
        tuple(params),
        len(params) if required is None else required,
        frozenset(kwargs),
        deduce,
        frozenset(kwarg_params),
        memory=memory,
    )
