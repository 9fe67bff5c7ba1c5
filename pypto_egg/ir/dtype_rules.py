"""The element types an op accepts, where PyPTO's deduction refuses the others: each refusal in PyPTO's words, so
a program PyPTO's reader refuses is refused here for the same reason (the type-deduction differential,
tests/test_pypto_refusals.py, holds the two together)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import RefusedType
from .expr import Expr, type_of
from .types import DataType, TileType

_FP16_FP32 = frozenset({DataType.FP16, DataType.FP32})
_TDIV = frozenset({DataType.INT16, DataType.INT32, DataType.FP16, DataType.FP32})
_TSUBS = frozenset(
    {DataType.INT8, DataType.INT16, DataType.INT32, DataType.FP16, DataType.FP32, DataType.BF16}
)
_GATHER = frozenset({DataType.FP16, DataType.FP32, DataType.INT16, DataType.INT32})
_TROWEXPANDADD = frozenset({DataType.INT8, DataType.INT16, DataType.INT32, DataType.FP16, DataType.FP32})
_FLOAT = frozenset(d for d in DataType if d.is_float)
_INTEGER = frozenset(d for d in DataType if d.is_int and d not in (DataType.INDEX, DataType.TASK_ID))


def pypto_name(dtype: DataType) -> str:
    """A dtype as PyPTO's messages print it (`fp32`, `bfloat16`, `uint8`)."""
    return "bfloat16" if dtype is DataType.BF16 else dtype.label.lower()


@dataclass(frozen=True)
class Accepts:
    """Operand `operand` of the op must have one of `dtypes`; `message` says why not, `{got}` the dtype given."""

    operand: int
    dtypes: frozenset[DataType]
    message: str
    when: str = ""  # a keyword the rule holds under only when it is true (`high_precision`); "": always


def _fp32_only(op: str) -> tuple[Accepts, ...]:
    return (Accepts(0, frozenset({DataType.FP32}), f"{op} is FP32-only, but got input with dtype {{got}}. Cast the "
                    f"input to FP32 explicitly via pl.cast(tile, pl.FP32) before applying {op}."),)  # fmt: skip


def _integer(op: str, *operands: int) -> tuple[Accepts, ...]:
    return tuple(Accepts(i, _INTEGER, f"The operator {op} requires integer tile dtype, but got {{got}}")
                 for i in operands)  # fmt: skip


RULES: dict[str, tuple[Accepts, ...]] = {
    "tile.log": (Accepts(0, _FP16_FP32, "tile.log requires an FP16 or FP32 tile operand, but got {got}"),),
    "tile.sin": _fp32_only("tile.sin"),
    "tile.cos": _fp32_only("tile.cos"),
    "tile.not_": (Accepts(0, frozenset({DataType.INT16, DataType.UINT16}),
                          "The operator tile.not requires int16 or uint16 tile dtype, but got {got}"),),
    "tile.div": (Accepts(0, _TDIV, "The operator tile.div requires dtype in {{INT16, INT32, FP16, FP32}}, but got "
                                   "{got}"),
                 Accepts(0, _FLOAT, "The operator tile.div supports high_precision only for FP16 or FP32 because the "
                                    "PTOAS high-precision template does not implement integer division",
                         when="high_precision")),
    "tile.and_": _integer("tile.and", 0, 1),
    "tile.or_": _integer("tile.or", 0, 1),
    "tile.subs": (Accepts(0, _TSUBS, "The operator tile.subs requires tile dtype in {{INT8, INT16, INT32, FP16, "
                                     "FP32, BF16}}, but got {got}"),),
    "tile.prelu": (Accepts(0, _FP16_FP32, "The operator tile.prelu requires src dtype in {{FP16, FP32}}, but got {got}"),),
    "tile.row_min": (Accepts(0, _TDIV, "The operator tile.row_min requires input dtype in {{INT16, INT32, FP16, FP32}}, "
                                       "but got {got}"),),
    "tile.sort32": (Accepts(0, _FP16_FP32, "The operator tile.sort32 requires src dtype to be FP16 or FP32, but got "
                                           "{got}"),),
    "tile.mrgsort_format1": (Accepts(0, _FP16_FP32, "The operator tile.mrgsort_format1 requires src dtype to be FP16 "
                                                    "or FP32, but got {got}"),),
    "tile.gather": (Accepts(0, _GATHER, "The operator tile.gather requires src dtype to be FP16, FP32, INT16, or "
                                        "INT32, but got {got}"),),
    "tile.gather_mask": (Accepts(0, _GATHER, "The operator tile.gather_mask requires src dtype to be FP16, FP32, "
                                             "INT16, or INT32, but got {got}"),),
    "tile.mscatter": (Accepts(0, _GATHER, "The operator tile.mscatter requires src dtype to be FP16, FP32, INT16, or "
                                          "INT32, but got {got}"),
                      Accepts(1, frozenset({DataType.INT32}), "The operator tile.mscatter requires idx dtype to be "
                                                              "INT32, but got {got}")),
    "tile.row_expand_add": (Accepts(0, _TROWEXPANDADD, "The operator tile.row_expand_add requires dtype in {{INT8, "
                                                       "INT16, INT32, FP16, FP32}}, but got {got}"),),
    "tile.recip": (Accepts(0, _FP16_FP32, "The operator tile.recip supports high_precision only for FP16 or FP32 "
                                          "because the PTOAS high-precision template does not implement other dtypes",
                           when="high_precision"),),
    "tile.shls": _integer("tile.shls", 0),
    "tile.shrs": _integer("tile.shrs", 0),
    "tile.ands": _integer("tile.ands", 0),
    "tile.ors": _integer("tile.ors", 0),
}  # fmt: skip


def check_dtypes(op: str, args: Sequence[Expr], kwargs: Mapping[str, Any]) -> None:
    """Refuse a call whose operand has a dtype the op does not take (an op without a rule takes any)."""
    for rule in RULES.get(op, ()):
        if rule.when and not kwargs.get(rule.when):
            continue
        t = type_of(args[rule.operand]) if rule.operand < len(args) else None
        if isinstance(t, TileType) and t.dtype not in rule.dtypes:
            raise RefusedType(rule.message.format(got=pypto_name(t.dtype)))
