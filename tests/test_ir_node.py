"""The IR's fast frozen-dataclass constructor behaves as the generated one does, copies and pickles included."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import itertools
import pickle
from dataclasses import dataclass, field
from typing import Any

import pytest

from pypto_egg.ir import expr, stmt, types
from pypto_egg.ir.node import fast_init, replaced

_counter = itertools.count()


@dataclass(frozen=True, slots=True)
class _Plain:
    a: int
    b: str = "b"
    c: list[int] = field(default_factory=list)
    d: int = field(default_factory=lambda: next(_counter), compare=False)
    e: int = field(default=7, init=False)


def test_defaults_factories_and_init_false_fields_match_the_generated_constructor() -> None:
    fast: Any = fast_init(dataclass(frozen=True, slots=True)(_copy_of_plain()))
    cases: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((1,), {}), ((1, "x"), {}), ((1,), {"c": [2]}), ((1,), {"b": "y", "d": 5}),
    ]  # fmt: skip
    for args, kwargs in cases:
        want, got = _Plain(*args, **kwargs), fast(*args, **kwargs)
        names = [f.name for f in dataclasses.fields(_Plain) if f.name != "d" or "d" in kwargs]  # d: a counter
        assert [getattr(got, n) for n in names] == [getattr(want, n) for n in names]
    assert fast(1).c is not fast(1).c  # a factory runs per call
    assert fast(1).d != fast(1).d
    assert fast(1).e == 7


def test_the_class_stays_frozen_and_keeps_its_signature() -> None:
    fast: Any = fast_init(dataclass(frozen=True, slots=True)(_copy_of_plain()))
    node = fast(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.a = 2  # type: ignore[misc]
    assert list(inspect.signature(fast).parameters) == ["a", "b", "c", "d"]
    with pytest.raises(TypeError):
        fast()  # the required field stays required
    assert dataclasses.replace(node, a=3).a == 3


def test_only_frozen_slotted_dataclasses_are_accepted() -> None:
    with pytest.raises(TypeError, match="not a frozen dataclass with slots"):
        fast_init(dataclass(slots=True)(type("Open", (), {"__annotations__": {"a": int}})))
    with pytest.raises(TypeError, match="not a frozen dataclass with slots"):
        fast_init(dataclass(frozen=True)(type("NoSlots", (), {"__annotations__": {"a": int}})))


def test_every_ir_node_class_uses_it() -> None:
    classes = [
        v
        for m in (expr, stmt, types)
        for v in vars(m).values()
        if isinstance(v, type) and dataclasses.is_dataclass(v) and v.__module__ == m.__name__
    ]
    assert classes
    slow = [
        c.__name__ for c in classes if "_Thawed" not in c.__new__.__code__.co_names or "__init__" in vars(c)
    ]
    assert slow == []


def test_copies_and_pickles_keep_every_field() -> None:
    fast: Any = fast_init(dataclass(frozen=True, slots=True)(_copy_of_plain()))
    globals()["Copy"] = fast  # (pickle finds a class by its module and name)
    try:
        node = fast(1, "x", [2], 5)
        for again in (copy.copy(node), copy.deepcopy(node), pickle.loads(pickle.dumps(node))):
            assert type(again) is fast
            assert [again.a, again.b, again.c, again.d, again.e] == [1, "x", [2], 5, 7]
            with pytest.raises(dataclasses.FrozenInstanceError):
                again.a = 2
        var = expr.Var("v", None)
        assert copy.deepcopy(var).uid == var.uid  # a variable's copy is the same variable
    finally:
        del globals()["Copy"]


def _copy_of_plain() -> type:
    ns: dict[str, object] = {"__annotations__": dict(_Plain.__annotations__)}
    for f in dataclasses.fields(_Plain):
        ns[f.name] = field(
            default=f.default, default_factory=f.default_factory, init=f.init, compare=f.compare
        )
    return type("Copy", (), ns)


def test_replaced_matches_dataclasses_replace_and_keeps_the_node_frozen() -> None:
    fast: Any = fast_init(dataclass(frozen=True, slots=True)(_copy_of_plain()))
    node = fast(1, "x", [3], 9)
    for changes in ({}, {"a": 2}, {"b": "y", "c": [4]}, {"d": 11}):
        got, want = replaced(node, **changes), dataclasses.replace(node, **changes)
        assert type(got) is type(node) and got == want and got is not node
        assert [getattr(got, f.name) for f in dataclasses.fields(got)] == [
            getattr(want, f.name) for f in dataclasses.fields(want)
        ]
    assert replaced(node, b="z").c is node.c  # the other fields as they are, no factory re-run
    with pytest.raises(dataclasses.FrozenInstanceError):
        replaced(node, a=3).a = 4  # type: ignore[misc]
    with pytest.raises(TypeError, match="no field 'z'"):
        replaced(node, z=1)
    # an IR node, and a class without the fast constructor (dataclasses.replace does it)
    v = expr.Var("x", types.ScalarType(types.DataType.INT64))
    s = stmt.AssignStmt(v, expr.ConstInt(1))
    assert replaced(s, value=expr.ConstInt(2)) == dataclasses.replace(s, value=expr.ConstInt(2))
    assert replaced(_Plain(1), b="q") == dataclasses.replace(_Plain(1), b="q")
