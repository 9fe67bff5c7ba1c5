"""The `pl` DSL: write tile programs as decorated Python classes, read back with `ast`.

import pypto_egg.language as pl

@pl.program
class Before:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[2, 3, 4], pl.FP32], ...) -> ...:
        ...
"""

from __future__ import annotations

from ..errors import DSLError
from ..ir.types import AtomicType, CompactMode, DataType, MemorySpace, PadValue, TensorLayout, TileLayout
from .parser import parse, parse_all, parse_file, program
from .runtime import (
    Array,
    DynamicDim,
    FunctionType,
    InOut,
    Level,
    MemRef,
    Out,
    PipeType,
    Ptr,
    Role,
    Scalar,
    ScopeMode,
    SplitMode,
    Tensor,
    TensorView,
    Tile,
    TileView,
    Tuple,
    UnknownType,
    adir,
    dynamic,
    function,
    pld,
)

FP32 = DataType.FP32
FP16 = DataType.FP16
BF16 = DataType.BF16
FP8E4M3FN = DataType.FP8E4M3FN
FP8E5M2 = DataType.FP8E5M2
FP8E8M0 = DataType.FP8E8M0
HF8 = DataType.HF8
HF4 = DataType.HF4
FP4 = DataType.FP4
INT4 = DataType.INT4
INT8 = DataType.INT8
INT16 = DataType.INT16
INT32 = DataType.INT32
INT64 = DataType.INT64
UINT4 = DataType.UINT4
UINT8 = DataType.UINT8
UINT16 = DataType.UINT16
UINT32 = DataType.UINT32
UINT64 = DataType.UINT64
INDEX = DataType.INDEX
BOOL = DataType.BOOL
TASK_ID = DataType.TASK_ID
Mem = MemorySpace

__all__ = [
    "BF16",
    "BOOL",
    "FP4",
    "FP8E4M3FN",
    "FP8E5M2",
    "FP8E8M0",
    "FP16",
    "FP32",
    "HF4",
    "HF8",
    "INDEX",
    "INT4",
    "INT8",
    "INT16",
    "INT32",
    "INT64",
    "TASK_ID",
    "UINT4",
    "UINT8",
    "UINT16",
    "UINT32",
    "UINT64",
    "Array",
    "DSLError",
    "PipeType",
    "Ptr",
    "ScopeMode",
    "SplitMode",
    "Tuple",
    "UnknownType",
    "adir",
    "pld",
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
    "parse_all",
    "parse_file",
    "program",
]
