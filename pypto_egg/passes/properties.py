"""IR properties a pass requires and produces (B-001)."""

from __future__ import annotations

import enum


class IRProperty(enum.StrEnum):
    """A property name; compares equal to its string (`"TileOps2D" in produced`)."""

    SSAForm = "SSAForm"
    IncoreTileOps = "IncoreTileOps"
    NormalizedStmtStructure = "NormalizedStmtStructure"
    TileOps2D = "TileOps2D"

    def __repr__(self) -> str:
        return self.value
