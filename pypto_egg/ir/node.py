"""A faster constructor for the IR's frozen, slotted dataclasses.

The `__init__` that `dataclass(frozen=True)` generates stores each field through `object.__setattr__`, a global
lookup and a generic attribute call per field: an IR node cost about three times what the same class without
`frozen` does, and the pass builds hundreds of thousands of nodes on a long kernel (20,000 for the pages of one
batched matmul of 1,024). The replacement builds the node as an instance of a thawed twin of the class (the same
slots, no `__setattr__` of its own), where a field is stored by the interpreter's own slot store, and then gives
it its class: the class stays frozen (assignment after construction raises) and a node costs about 60 % of what
one set through the slots' descriptors did (about 40 % of the generated constructor).
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T", bound=type)


def fast_init(cls: T) -> T:
    """Give a frozen slotted dataclass a `__new__` of its constructor's signature and defaults that fills a thawed
    twin's slots and then makes it an instance of `cls` (whose `__init__` is removed: the node is whole)."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__} is not a frozen dataclass with slots")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has a __post_init__, which this constructor would skip")
    if cls.__bases__ != (object,):
        raise TypeError(f"{cls.__name__} derives from another class, whose slots its twin would not have")
    # the same slots on the same base: an instance may change between the two classes
    thawed = type(f"{cls.__name__}Thawed", (object,), {"__slots__": cls.__dict__["__slots__"]})
    namespace: dict[str, Any] = {"_MISSING": dataclasses.MISSING, "_new": object.__new__, "_Thawed": thawed}
    args: list[str] = []
    body = ["    self = _new(_Thawed)"]
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            namespace[f"_default_{f.name}"] = f.default
            value = f"_default_{f.name}"
        elif f.default_factory is not dataclasses.MISSING:
            namespace[f"_factory_{f.name}"] = f.default_factory
            value = f"_factory_{f.name}()"
        else:
            value = ""
        if not f.init:
            body.append(f"    self.{f.name} = {value}")
            continue
        if f.default_factory is not dataclasses.MISSING:
            args.append(f"{f.name}=_MISSING")
            body.append(f"    if {f.name} is _MISSING:\n        {f.name} = {value}")
        else:
            args.append(f"{f.name}={value}" if value else f.name)
        body.append(f"    self.{f.name} = {f.name}")
    body += ["    self.__class__ = cls", "    return self"]
    source = f"def __new__(cls, {', '.join(args)}):\n" + "\n".join(body) + "\n"
    exec(source, namespace)
    new = namespace["__new__"]
    new.__qualname__ = f"{cls.__qualname__}.__new__"
    new.__module__ = cls.__module__
    slots = tuple(f.name for f in dataclasses.fields(cls))
    _TWINS[cls] = thawed, slots

    def __reduce__(self: Any) -> tuple[Any, ...]:
        """Copies and pickles rebuild the node from its fields (`__new__` asks for the constructor's arguments)."""
        return _rebuilt, (type(self), tuple(getattr(self, name) for name in slots))

    # the node with some fields changed: each field read from the node or the changes, into a thawed twin
    copier = ["def _copy(node, changes):", "    self = _new(_Thawed)"]
    copier += [f"    self.{name} = changes.get({name!r}, node.{name})" for name in slots]
    copier += ["    self.__class__ = cls", "    return self"]
    namespace["cls"] = cls
    exec("\n".join(copier) + "\n", namespace)
    _COPIERS[cls] = namespace["_copy"], frozenset(slots)

    setattr(cls, "__new__", staticmethod(new))  # noqa: B010 - mypy rejects assigning a method
    setattr(cls, "__reduce__", __reduce__)  # noqa: B010
    delattr(cls, "__init__")  # object's: `type.__call__` then checks nothing more of a node `__new__` made
    return cls


_TWINS: dict[type, tuple[type, tuple[str, ...]]] = {}  # a class's thawed twin and its fields
# a class's copier (the node, its changed fields) and its fields
_COPIERS: dict[type, tuple[Any, frozenset[str]]] = {}
N = TypeVar("N")


def replaced(node: N, **changes: Any) -> N:
    """`dataclasses.replace` for a node of a `fast_init` class, at a third of its cost: no constructor call and no
    defaults re-run, the other fields taken from the node as they are (any other object: `dataclasses.replace`)."""
    found = _COPIERS.get(type(node))
    if found is None:
        return dataclasses.replace(node, **changes)  # type: ignore[type-var]
    copy, fields = found
    if not fields.issuperset(changes):
        raise TypeError(f"{type(node).__name__} has no field {sorted(set(changes) - fields)[0]!r}")
    return copy(node, changes)  # type: ignore[no-any-return]


def _rebuilt(cls: type, values: tuple[Any, ...]) -> Any:
    thawed, names = _TWINS[cls]
    node: Any = object.__new__(thawed)
    for name, value in zip(names, values):
        setattr(node, name, value)
    node.__class__ = cls
    return node
