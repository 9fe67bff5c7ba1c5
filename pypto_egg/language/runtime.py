"""Objects that `pl` programs name at class-definition time.

Function bodies are never executed: they are read with `ast`. Only the objects a signature or a
module-level line evaluates (annotations, `pl.dynamic`, decorators) need a runtime meaning here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DynamicDim:
    """`S = pl.dynamic("S")`: a tensor extent known only at run time."""

    name: str

    def __repr__(self) -> str:
        return f'pl.dynamic("{self.name}")'


def dynamic(name: str) -> DynamicDim:
    return DynamicDim(name)


class _Annotation:
    """A subscriptable marker: `pl.Tile[[2, 3, 4], pl.FP32]` must evaluate without error."""

    def __class_getitem__(cls, item: Any) -> Any:
        return (cls.__name__, item)


class Tensor(_Annotation):
    pass


class Tile(_Annotation):
    pass


class Scalar(_Annotation):
    pass


class Out(_Annotation):
    pass


class Tuple(_Annotation):
    pass


class Array(_Annotation):
    pass


class DistributedTensor(_Annotation):
    pass


class InOut(_Annotation):
    pass


class _Record:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args, self.kwargs = args, kwargs


class TileView(_Record):
    pass


class TensorView(_Record):
    pass


class MemRef(_Record):
    pass


class _Names:
    """An attribute namespace whose members name themselves (`pl.Level.CHIP_DIE` → "CHIP_DIE")."""

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix

    def __getattr__(self, name: str) -> str:
        if name.startswith("__"):
            raise AttributeError(name)
        return f"{self._prefix}.{name}"


FunctionType = _Names("FunctionType")
Level = _Names("Level")
Role = _Names("Role")
ScopeMode = _Names("ScopeMode")
SplitMode = _Names("SplitMode")
PipeType = _Names("PipeType")
adir = _Names("adir")
Ptr = "pl.Ptr"
UnknownType = "pl.UnknownType"


class _Distributed:
    """`pld`: the distributed namespace (`pld.DistributedTensor[...]`, `pld.CommCtxType`)."""

    DistributedTensor = DistributedTensor
    CommCtxType = "pld.CommCtxType"


pld = _Distributed()


def function(fn: Any = None, **options: Any) -> Any:
    """`@pl.function` / `@pl.function(type=...)`: a marker; `@pl.program` reads the method's source."""
    if fn is None:
        return lambda f: f
    return fn
