"""The tile IR: types, expressions, statements, the op registry, printing and equality."""

from .equality import StructuralMismatch, assert_structural_equal, structural_equal
from .expr import (
    BinOp,
    Call,
    ConstBool,
    ConstFloat,
    ConstInt,
    DynDim,
    Expr,
    MakeTuple,
    TupleGetItem,
    UnaryOp,
    Var,
    static_int,
    type_of,
)
from .ops import REGISTRY, deduce_type, make_call
from .printer import print_expr, print_type, python_print
from .span import Span
from .stmt import (
    AssignStmt,
    EvalStmt,
    ForStmt,
    Function,
    FunctionType,
    IfStmt,
    IterArg,
    LoopKind,
    Param,
    ParamDirection,
    Program,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    Stmt,
    WhileStmt,
    YieldStmt,
)
from .types import (
    AtomicType,
    CompactMode,
    DataType,
    MemorySpace,
    PadValue,
    ScalarType,
    TensorLayout,
    TensorType,
    TensorView,
    TileLayout,
    TileType,
    TileView,
    TupleType,
    Type,
    make_tile_type,
)

__all__ = [
    "REGISTRY", "AssignStmt", "AtomicType", "BinOp", "Call", "CompactMode", "ConstBool", "ConstFloat", "ConstInt",
    "DataType", "DynDim", "EvalStmt", "Expr", "ForStmt", "Function", "FunctionType", "IfStmt", "IterArg", "LoopKind",
    "MakeTuple", "MemorySpace", "PadValue", "Param", "ParamDirection", "Program", "ReturnStmt", "ScalarType",
    "ScopeStmt", "SeqStmts", "Span", "Stmt", "StructuralMismatch", "TensorLayout", "TensorType", "TensorView",
    "TileLayout", "TileType", "TileView", "TupleGetItem", "TupleType", "Type", "UnaryOp", "Var", "WhileStmt",
    "YieldStmt", "assert_structural_equal", "deduce_type", "make_call", "make_tile_type", "print_expr", "print_type",
    "python_print", "static_int", "structural_equal", "type_of",
]
