"""pypto-egg's FlattenTileNdTo2D as a pass of PyPTO's own pipeline.

`flatten_pass` makes the PyPTO `Pass`; `replacing_flatten` puts it where PyPTO's default pipeline has the
C++ pass (every `ir.compile`, `PassManager.get_strategy()` and `@pl.jit` compilation builds its pipeline
from `PassManager._get_pass_factories`); `compile` is `ir.compile` with it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..backend import BACKENDS, get_backend
from ..egraph.engine import check_strategy
from ..errors import UserError
from ..extract.cost import CostModel
from ..passes.flatten import FlattenTileNdTo2D, flatten_tile_nd_to_2d
from .bridge import run_on_objects
from .loader import PyPTO, load_pypto

PASS_NAME = "FlattenTileNdTo2D"


@dataclass(frozen=True)
class FlattenOptions:
    """The options of pypto-egg's pass, as `passes.flatten_tile_nd_to_2d` takes them.

    `backend`: a backend name, a PyPTO `BackendType`, or None for the backend PyPTO has configured when the
    pass runs (`ir.compile` configures its `backend_type`; with none configured no capacity gate applies).
    """

    backend: Any = None
    strategy: str = "reference"
    extra_rules: Sequence[str | Path] = ()
    validate: bool = False
    cost_model: CostModel | None = None
    limits: Any = field(default=None, compare=False)

    def __post_init__(self) -> None:
        check_strategy(self.strategy)
        if self.backend is not None:
            get_backend(_backend_name(self.backend))
        object.__setattr__(self, "extra_rules", tuple(self.extra_rules))

    def egg_pass(self, pto: PyPTO) -> FlattenTileNdTo2D:
        backend = self.backend
        if backend is None and pto.backend.is_backend_configured():
            backend = pto.backend.get_backend_type()
        return flatten_tile_nd_to_2d(
            _backend_name(backend) if backend is not None else None, self.extra_rules, limits=self.limits,
            validate=self.validate, strategy=self.strategy, cost_model=self.cost_model,
        )  # fmt: skip


def _backend_name(backend: Any) -> str:
    name = backend if isinstance(backend, str) else getattr(backend, "name", str(backend))
    if name not in BACKENDS:
        raise UserError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    return str(name)


def flatten_pass(**options: Any) -> Any:
    """A PyPTO program pass named FlattenTileNdTo2D, with the C++ pass's required, produced and invalidated
    properties, that runs pypto-egg. Options: those of `FlattenOptions`."""
    return _make_pass(load_pypto(), FlattenOptions(**options))


def reference_properties(pto: PyPTO) -> Any:
    """The C++ pass's required, produced and invalidated properties, as a PyPTO `PassProperties`."""
    reference = pto.passes.flatten_tile_nd_to_2d()
    return pto.passes.PassProperties(
        reference.get_required_properties(),
        reference.get_produced_properties(),
        reference.get_invalidated_properties(),
    )


def _make_pass(pto: PyPTO, options: FlattenOptions) -> Any:
    properties = reference_properties(pto)

    def transform(program: Any) -> Any:
        return run_on_objects(pto, options.egg_pass(pto), program)

    return pto.passes.create_program_pass(transform, PASS_NAME, properties)


class _Replacement:
    """The process-wide swap of PyPTO's pass factory: the innermost open swap wins.

    `PassManager._get_pass_factories` is wrapped once, while any swap is open, and restored when the last one
    closes. Swaps may open and close on any threads; every pipeline built while one is open, on any thread,
    takes the pass of the most recently opened swap still open."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.open: list[tuple[int, Callable[[], Any]]] = []
        self.original: Any = None
        self.counter = 0

    def enter(self, pto: PyPTO, factory: Callable[[], Any]) -> int:
        with self.lock:
            self.counter += 1
            token = self.counter
            if not self.open:
                self.original = pto.pass_manager.__dict__["_get_pass_factories"]
                reference = pto.passes.flatten_tile_nd_to_2d
                original = self.original.__func__

                def factories(*args: Any, **kwargs: Any) -> tuple[Any, ...]:
                    recipe = original(*args, **kwargs)
                    with self.lock:
                        current = self.open[-1][1] if self.open else None
                    if current is None:
                        return tuple(recipe)
                    return tuple(current if f is reference else f for f in recipe)

                pto.pass_manager._get_pass_factories = staticmethod(factories)
            self.open.append((token, factory))
            return token

    def exit(self, pto: PyPTO, token: int) -> None:
        with self.lock:
            self.open = [(t, f) for t, f in self.open if t != token]
            if not self.open and self.original is not None:
                pto.pass_manager._get_pass_factories = self.original
                self.original = None


_REPLACEMENT = _Replacement()


@contextlib.contextmanager
def swapped_flatten(factory: Callable[[], Any]) -> Iterator[None]:
    """Inside, PyPTO's default pipeline makes its FlattenTileNdTo2D with `factory`; the C++ pass is back on exit,
    also after an exception. The swap is process-wide (see `_Replacement`)."""
    pto = load_pypto()
    token = _REPLACEMENT.enter(pto, factory)
    try:
        yield
    finally:
        _REPLACEMENT.exit(pto, token)


@contextlib.contextmanager
def replacing_flatten(**options: Any) -> Iterator[None]:
    """Inside, PyPTO's default pipeline (every `ir.compile`, `PassManager.get_strategy()` and `@pl.jit`
    compilation, on any thread) runs pypto-egg's FlattenTileNdTo2D instead of the C++ pass; the C++ pass is
    back on exit, also after an exception. Nested blocks: the innermost options apply.

    `@pl.jit` caches compiled kernels by their compile options, not by the pass: a kernel compiled before
    the block is served from that cache inside it."""
    pto = load_pypto()
    flatten_options = FlattenOptions(**options)
    with swapped_flatten(lambda: _make_pass(pto, flatten_options)):
        yield


def compile(program: Any, *, flatten_options: dict[str, Any] | None = None, **ir_compile_kwargs: Any) -> Any:
    """`pypto.ir.compile(program, **ir_compile_kwargs)` with pypto-egg's FlattenTileNdTo2D in its pipeline."""
    pto = load_pypto()
    with replacing_flatten(**(flatten_options or {})):
        return pto.ir.compile(program, **ir_compile_kwargs)
