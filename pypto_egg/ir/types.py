"""Data types, memory spaces, layouts and the value types of the tile IR."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

from .node import fast_init

if TYPE_CHECKING:
    from .expr import Expr


class DataType(enum.Enum):
    """Element types; `bits` is the storage width (sub-byte types round up to a byte in `nbytes`).

    The interpreter computes the 8- and 4-bit float formats in float32 and TASK_ID as int64: they
    only have to carry values through the ops the pass rewrites, not round like the hardware.
    """

    FP32 = ("FP32", 32, "float32")
    FP16 = ("FP16", 16, "float16")
    BF16 = ("BF16", 16, "float32")
    FP8E4M3FN = ("FP8E4M3FN", 8, "float32")
    FP8E5M2 = ("FP8E5M2", 8, "float32")
    FP8E8M0 = ("FP8E8M0", 8, "float32")
    HF8 = ("HF8", 8, "float32")
    FP4 = ("FP4", 4, "float32")
    HF4 = ("HF4", 4, "float32")
    INT4 = ("INT4", 4, "int8")
    INT8 = ("INT8", 8, "int8")
    INT16 = ("INT16", 16, "int16")
    INT32 = ("INT32", 32, "int32")
    INT64 = ("INT64", 64, "int64")
    UINT4 = ("UINT4", 4, "uint8")
    UINT8 = ("UINT8", 8, "uint8")
    UINT16 = ("UINT16", 16, "uint16")
    UINT32 = ("UINT32", 32, "uint32")
    UINT64 = ("UINT64", 64, "uint64")
    INDEX = ("INDEX", 64, "int64")
    BOOL = ("BOOL", 8, "bool")
    TASK_ID = ("TASK_ID", 64, "int64")

    def __init__(self, label: str, bits: int, numpy_name: str) -> None:
        self.label = label
        self.bits = bits
        self.nbytes = (bits + 7) // 8
        self.numpy_name = numpy_name

    @property
    def is_float(self) -> bool:
        return self.numpy_name.startswith("float")

    @property
    def is_int(self) -> bool:
        return not self.is_float and self is not DataType.BOOL

    def __repr__(self) -> str:
        return f"pl.{self.label}"


class MemorySpace(enum.Enum):
    DDR = "DDR"
    Vec = "Vec"
    Mat = "Mat"
    Left = "Left"
    Right = "Right"
    Acc = "Acc"
    Bias = "Bias"
    LeftScale = "LeftScale"
    RightScale = "RightScale"

    def __repr__(self) -> str:
        return f"pl.Mem.{self.value}"


class TileLayout(enum.Enum):
    none_box = "none_box"
    row_major = "row_major"
    col_major = "col_major"

    def __repr__(self) -> str:
        return f"pl.TileLayout.{self.value}"


class TensorLayout(enum.Enum):
    ND = "ND"
    DN = "DN"
    NZ = "NZ"
    MX_A_ZZ = "MX_A_ZZ"
    MX_B_NN = "MX_B_NN"

    def __repr__(self) -> str:
        return f"pl.TensorLayout.{self.value}"


class PadValue(enum.Enum):
    null = "null"
    zero = "zero"
    max = "max"
    min = "min"

    def __repr__(self) -> str:
        return f"pl.PadValue.{self.value}"


class CompactMode(enum.Enum):
    null = "null"
    normal = "normal"

    def __repr__(self) -> str:
        return f"pl.CompactMode.{self.value}"


class AtomicType(enum.Enum):
    None_ = 0
    Add = 1

    def __repr__(self) -> str:
        return f"pl.AtomicType.{self.name}"


@fast_init
@dataclass(frozen=True, slots=True)
class NamedConst:
    """A DSL enum member the pass carries but never interprets (`pl.ScopeMode.MANUAL`, `pl.adir.input`)."""

    path: str  # "ScopeMode.MANUAL"
    root: str = "pl"

    def __repr__(self) -> str:
        return f"{self.root}.{self.path}"


Shape = tuple["Expr", ...]


@fast_init
@dataclass(frozen=True, slots=True)
class ScalarType:
    dtype: DataType


@fast_init
@dataclass(frozen=True, slots=True)
class TensorView:
    stride: Shape = ()
    layout: TensorLayout = TensorLayout.ND
    valid_shape: Shape = ()
    pad: PadValue | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class MemRef:
    """`pl.MemRef("mem_vec_0", 0, 1024)`: a named buffer (or a `pl.Ptr` variable), an offset and a size."""

    base: str | Expr
    offset: Expr | None = None
    size: Expr | None = None
    slots: Expr | None = None  # a ring of buffers, `pl.MemRef("ping", 0, 1024, slots=2)[i % 2]`
    slot: Expr | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class TensorType:
    """A tensor in global memory; `distributed` marks `pld.DistributedTensor` (one window per rank)."""

    shape: Shape
    dtype: DataType
    view: TensorView | None = None
    memref: MemRef | None = None
    distributed: bool = False

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def layout(self) -> TensorLayout:
        return self.view.layout if self.view is not None else TensorLayout.ND


@fast_init
@dataclass(frozen=True, slots=True)
class TileView:
    """A tile's view; a field left as None takes the implicit value for the tile's shape and space."""

    valid_shape: Shape | None = None
    stride: Shape | None = None
    start_offset: Expr | None = None
    blayout: TileLayout | None = None
    slayout: TileLayout | None = None
    fractal: int | None = None
    pad: PadValue | None = None
    compact: CompactMode | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class TileType:
    shape: Shape
    dtype: DataType
    memory: MemorySpace | None = None
    view: TileView | None = None
    memref: MemRef | None = None

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def valid_shape(self) -> Shape:
        if self.view is not None and self.view.valid_shape is not None:
            return self.view.valid_shape
        return self.shape


@fast_init
@dataclass(frozen=True, slots=True)
class TupleType:
    types: tuple[Type, ...]


@fast_init
@dataclass(frozen=True, slots=True)
class OpaqueType:
    """A type the pass never looks inside (`pl.Ptr`, `pl.UnknownType`, `pld.CommCtxType`,
    `pl.Array[4, pl.TASK_ID]`, ...), kept as the text it is printed as."""

    text: str


UNKNOWN_TYPE = OpaqueType("pl.UnknownType")

Type = Union[ScalarType, TensorType, TileType, TupleType, OpaqueType]


def is_nd_tile(t: object) -> bool:
    return type(t) is TileType and len(t.shape) > 2  # (by exact class: the IR's types have no subclasses)
