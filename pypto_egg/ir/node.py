"""A faster constructor for the IR's frozen, slotted dataclasses.

The `__init__` that `dataclass(frozen=True)` generates stores each field through `object.__setattr__`,
a global lookup and a generic attribute call per field; an IR node costs about three times what the
same class without `frozen` does, and the pass builds hundreds of thousands of nodes on a long kernel.
The replacement stores each field through its slot's descriptor directly, which keeps the class frozen
(assignment after construction still raises) at a little more than half the cost.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T", bound=type)


def fast_init(cls: T) -> T:
    """Replace a frozen slotted dataclass's generated `__init__` with one of the same signature and
    defaults that sets each slot through its member descriptor."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__} is not a frozen dataclass with slots")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has a __post_init__, which this constructor would skip")
    namespace: dict[str, Any] = {"_MISSING": dataclasses.MISSING}
    args: list[str] = []
    body: list[str] = []
    for f in dataclasses.fields(cls):
        namespace[f"_set_{f.name}"] = cls.__dict__[f.name].__set__
        if f.default is not dataclasses.MISSING:
            namespace[f"_default_{f.name}"] = f.default
            value = f"_default_{f.name}"
        elif f.default_factory is not dataclasses.MISSING:
            namespace[f"_factory_{f.name}"] = f.default_factory
            value = f"_factory_{f.name}()"
        else:
            value = ""
        if not f.init:
            body.append(f"    _set_{f.name}(self, {value})")
            continue
        if f.default_factory is not dataclasses.MISSING:
            args.append(f"{f.name}=_MISSING")
            body.append(f"    if {f.name} is _MISSING:\n        {f.name} = {value}")
        else:
            args.append(f"{f.name}={value}" if value else f.name)
        body.append(f"    _set_{f.name}(self, {f.name})")
    source = f"def __init__(self, {', '.join(args)}) -> None:\n" + "\n".join(body or ["    pass"]) + "\n"
    exec(source, namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    setattr(cls, "__init__", init)  # noqa: B010 - mypy rejects assigning a method
    return cls
