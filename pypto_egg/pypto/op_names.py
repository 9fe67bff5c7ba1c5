"""Op names across the bridge: the DSL spells a leaf that is a Python keyword with a trailing underscore
(`tile.and_`), PyPTO's IR registers it without (`tile.and`)."""

from __future__ import annotations

import keyword

from ..ir.ops import REGISTRY


def ir_name(op: str) -> str:
    """The name PyPTO's IR registers the op `op` under."""
    head, _, leaf = op.rpartition(".")
    return f"{head}.{leaf[:-1]}" if leaf.endswith("_") and keyword.iskeyword(leaf[:-1]) else op


def dsl_name(name: str) -> str:
    """pypto-egg's spelling of the op PyPTO's IR registers as `name` (the inverse of `ir_name`)."""
    leaf = name.rpartition(".")[2]
    return f"{name}_" if keyword.iskeyword(leaf) and f"{name}_" in REGISTRY else name
