"""The `pl` DSL: write tile programs as decorated Python classes, read back with `ast`.

import pypto_egg.language as pl

@pl.program
class Before:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[2, 3, 4], pl.FP32], ...) -> ...:
        ...
"""

from __future__ import annotations

from ..ir.types import AtomicType, CompactMode, DataType, MemorySpace, PadValue, TensorLayout, TileLayout
from .parser import parse, parse_file, program
from .runtime import (
    DynamicDim,
    FunctionType,
    InOut,
    Level,
    MemRef,
    Out,
    Role,
    Scalar,
    Tensor,
    TensorView,
    Tile,
    TileView,
    dynamic,
    function,
)

FP32 = DataType.FP32
FP16 = DataType.FP16
BF16 = DataType.BF16
INT8 = DataType.INT8
INT16 = DataType.INT16
INT32 = DataType.INT32
INT64 = DataType.INT64
UINT8 = DataType.UINT8
INDEX = DataType.INDEX
BOOL = DataType.BOOL
Mem = MemorySpace

__all__ = [
    "BF16",
    "BOOL",
    "FP16",
    "FP32",
    "INDEX",
    "INT8",
    "INT16",
    "INT32",
    "INT64",
    "UINT8",
    "AtomicType",
    "CompactMode",
    "DynamicDim",
    "FunctionType",
    "InOut",
    "Level",
    "Mem",
    "MemRef",
    "MemorySpace",
    "Out",
    "PadValue",
    "Role",
    "Scalar",
    "Tensor",
    "TensorLayout",
    "TensorView",
    "Tile",
    "TileLayout",
    "TileView",
    "dynamic",
    "function",
    "parse",
    "parse_file",
    "program",
]
