"""Source positions carried by IR nodes."""

from __future__ import annotations

from dataclasses import dataclass

from .node import fast_init


@fast_init
@dataclass(frozen=True, slots=True)
class Span:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"
