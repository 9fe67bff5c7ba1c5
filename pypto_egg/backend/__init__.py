"""Backend descriptions: on-chip memory sizes per space, asserted into the e-graph as Capacity facts.

Rules read capacities only through those facts; no size is written in a rule file. With no backend
the capacity gates report fit (no Capacity facts are asserted).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UserError
from ..ir.types import MemorySpace

KIB = 1024
# the rows of one L0C fractal block: a product is laid out at a pitch of whole fractals, and packing aligns to it
DEFAULT_FRACTAL_ROWS = 16


@dataclass(frozen=True)
class Backend:
    name: str
    capacity: dict[MemorySpace, int]
    fractal_rows: int = DEFAULT_FRACTAL_ROWS  # asserted as the FractalRow fact

    def bytes_of(self, space: MemorySpace) -> int | None:
        return self.capacity.get(space)


def fractal_rows(backend: Backend | None) -> int:
    """The fractal height the rules and the carry repair read: the backend's, or the default with none."""
    return backend.fractal_rows if backend is not None else DEFAULT_FRACTAL_ROWS


ASCEND_910B = Backend(
    "Ascend910B",
    {
        MemorySpace.Mat: 512 * KIB,
        MemorySpace.Acc: 128 * KIB,
        MemorySpace.Left: 64 * KIB,
        MemorySpace.Right: 64 * KIB,
        MemorySpace.Vec: 184 * KIB,
        MemorySpace.Bias: 1 * KIB,
    },
)
ASCEND_950 = Backend(
    "Ascend950",
    {
        MemorySpace.Mat: 512 * KIB,
        MemorySpace.Acc: 256 * KIB,
        MemorySpace.Left: 64 * KIB,
        MemorySpace.Right: 64 * KIB,
        MemorySpace.Vec: 240 * KIB,
        MemorySpace.Bias: 4 * KIB,
        MemorySpace.LeftScale: 4 * KIB,
        MemorySpace.RightScale: 4 * KIB,
    },
)
BACKENDS = {b.name: b for b in (ASCEND_910B, ASCEND_950)}


def get_backend(name: str | Backend | None) -> Backend | None:
    if name is None or isinstance(name, Backend):
        return name
    try:
        return BACKENDS[name]
    except KeyError:
        raise UserError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)} (or none)") from None
