"""The DSL's words for what the e-graph holds: dimension terms as the DSL writes them ([6, 4], S * 2), each plan
as a sentence, a term's arguments by their declared field names, a function's variables by name. Explain, the
focused view and the Python API speak through these."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..extract import Term
from ..ir.stmt import AssignStmt, Function
from ..ir.walk import blocks
from ..rules import schema

_BMM_MODES = {
    "fast": "one page: a single tile.matmul bound to the result (B-134)",
    "fused": "one tile.matmul per page, each stored straight to the consuming store's window (B-136)",
    "general": "one tile.matmul per page, gathered into a [B*M, N] Vec tile with tile.move (B-135)",
    "packed-producer": "the root of a packed accumulator: pages written into one [M, B*N] Acc tile (B-139)",
    "acc-fast": "one page: a single tile.matmul_acc on the whole 2-D accumulator (B-153)",
    "acc-cols": "one tile.matmul_acc per page into column windows [0, b*N] of the packed accumulator (B-155)",
    "acc-rows": "one tile.matmul_acc per page into row windows [b*M, 0] of the accumulator (B-154)",
}


_ROUTE = {1: "whole, sliced per page", 0: "re-loaded per batch"}

# the words for a field that holds a code, by (declaration, field): what the encoder and the rules mean by it
_CODES: dict[tuple[str, str], dict[Any, str]] = {
    ("BmmReq", "kind"): {0: "tile.batch_matmul", 1: "tile.batch_matmul_acc"},
    ("BmmReq", "lhs_view"): {0: "read as it is", 1: "read through its tile.transpose_view",
                             2: "read through a legacy tile.transpose"},
    ("BmmReq", "rhs_view"): {0: "read as it is", 1: "read through its tile.transpose_view",
                             2: "read through a legacy tile.transpose"},
    ("BmmReq", "cast"): {0: "no: the pages keep the accumulator's dtype", 1: "yes: the pages change dtype"},
    ("LoadReq", "memory"): {"none": "not given (the load's default)"},
    ("BatchMatmul", "lhs_route"): _ROUTE,
    ("BatchMatmul", "rhs_route"): _ROUTE,
    ("BatchMatmul", "reference"): {1: "yes: the reference's routes", 0: "no: another legal combination"},
}  # fmt: skip


def statement_label(sid: int, statements: Mapping[int, str] | None = None) -> str:
    """How a statement is named to a user: by its source line where it has one (`line 27`)."""
    return (statements or {}).get(sid, f"statement {sid}")


def dim_text(t: Any) -> str:
    if not isinstance(t, Term):
        return str(t)
    if t.op == "DC":
        return str(t.args[0])
    if t.op == "DSym":
        return str(t.args[0])
    ops = {"DAdd": "+", "DSub": "-", "DMul": "*", "DDiv": "//", "DMod": "%"}
    if t.op in ops:
        return f"{_operand(t.args[0])} {ops[t.op]} {_operand(t.args[1])}"
    if t.op in ("DMin", "DMax"):
        return f"{t.op[1:].lower()}({dim_text(t.args[0])}, {dim_text(t.args[1])})"
    if t.op in ("DCons", "DNil"):
        return dims_text(t)
    return str(t)


def _operand(t: Any) -> str:
    text = dim_text(t)
    return f"({text})" if isinstance(t, Term) and t.op in ("DAdd", "DSub") else text


def dims_text(t: Any) -> str:
    items = []
    while isinstance(t, Term) and t.op == "DCons":
        items.append(dim_text(t.args[0]))
        t = t.args[1]
    return "[" + ", ".join(items) + "]"


def plan_words(
    plan: Term | None,
    var_names: Mapping[int, str] | None = None,
    statements: Mapping[int, str] | None = None,
) -> str:
    """The plan as a sentence, with shapes as [6, 4]; `var_names` names the variables a plan points at by id,
    `statements` the statements (`statement_label`)."""
    if plan is None:
        return "no plan (the statement is left to the lowering's safety net)"
    a = plan.args
    words = {
        "Keep": lambda: "kept as written (nothing in it is more than 2-D)",
        "Retype": lambda: f"re-created on the flattened operands; its result is the 2-D {dims_text(a[0])}",
        "Rededuce": lambda: "re-created on the flattened operands, its type re-deduced",
        "Forward": lambda: f"forwarded to `{(var_names or {}).get(a[0], f'variable {a[0]}')}`: the statement's value is "
                           f"that variable, and it emits nothing of its own",
        "LoadFlat": lambda: f"loaded into a 2-D {dims_text(a[0])} tile (valid {dims_text(a[1])}); the tensor-rank "
                            f"source window stays",
        "LoadCollapsed": lambda: f"loaded into a 2-D {dims_text(a[0])} tile through a 2-D {dims_text(a[2])} view of "
                                 f"the tensor, window {dims_text(a[4])} at {dims_text(a[3])}",
        "ToMat": lambda: f"read into Mat (L1) for the matrix unit; {plan_words(a[0], var_names, statements) if isinstance(a[0], Term) else ''}",
        "StorePartition": lambda: f"stored with the partition window {dims_text(a[0])}",
        "StoreByPages": lambda: f"written by the batched matmul on {statement_label(a[0], statements)}, one store per page straight from "
                                f"the matmul (B-136): nothing of its own is emitted",
        "StorePartitionFlat": lambda: f"stored with the partition window {dims_text(a[0])}, its tile operand (kept "
                                      f"N-D) reshaped to {dims_text(a[1])} first (B-052)",
        "Alloc": lambda: f"allocated as the 2-D {dims_text(a[0])}",
        "AllocAcc": lambda: f"allocated as the packed accumulator {dims_text(a[0])} in Acc (L0C)",
        "AssembleFold": lambda: f"assembled at the folded offset {dims_text(a[0])}",
        "Reshape2D": lambda: f"reshaped to the 2-D {dims_text(a[0])}",
        "Transpose2D": lambda: "a 2-D transpose with a scratch tile of its source's shape (the 4-operand form)",
        "TransposeUnroll": lambda: f"unrolled into {a[0]} per-page transposes of [{a[1]}, {a[2]}] pages",
        "TransposeUnrollND": lambda: f"unrolled into {a[0]} per-page transposes of [{a[1]}, {a[2]}] pages, its input "
                                     f"(kept N-D) reshaped to [{a[0] * a[1]}, {a[2]}] first (B-104)",
        "BatchMatmul": lambda: _BMM_MODES.get(str(a[0]), f"batched matmul, mode {a[0]}")
        + f"; lhs {_ROUTE[a[1]]}, rhs {_ROUTE[a[2]]}; moves {a[3]} bytes GM -> L1 in {a[4]} operand instructions, "
        f"holds {a[5]} bytes of Mat",
        "Drop": lambda: "dropped: every batched matmul that reads it re-loads its pages (B-115)",
        "AsView": lambda: "became tile.transpose_view of its source (a zero-copy view, B-100)",
        "PackedDrain": lambda: "drained page by page out of the packed accumulator (B-175)",
        "Rewindow": lambda: f"moved to the packed accumulator's window at {dims_text(a[0])} (B-183)",
        "RowDrain": lambda: f"drained as one [{a[0]}, {a[1]}] store per row window (B-184)",
        "Fail": lambda: f"rejected: {a[0]}" + (f" ({', '.join(str(x) for x in a[1:] if x)})" if any(a[1:]) else ""),
    }  # fmt: skip
    fn = words.get(plan.op)
    return fn() if fn else str(plan)


# ---------------------------------------------------------------- reading the e-graph


def term_fields(
    term: Term, names: Mapping[int, str] | None = None, statements: Mapping[int, str] | None = None
) -> dict[str, str]:
    """A plan's arguments by their declared field names, as the DSL writes them ([6, 4], S * 2, words)."""
    d = schema.schema().get(term.op)
    if d is None or d.fields is None:
        return {}
    return {
        name: field_text(term.op, name, sort, value, names or {}, statements)
        for name, sort, value in zip(d.fields, d.sorts, term.args)
    }


def field_text(
    owner: str,
    name: str,
    sort: str,
    value: Any,
    names: Mapping[int, str],
    statements: Mapping[int, str] | None,
) -> str:
    """A field of a row or plan in words: a code by what it means, a statement by its label, a variable by its
    name, bytes as bytes; any other value as `value_text` says it."""
    code = _CODES.get((owner, name))
    if code is not None and value in code:
        return code[value]
    if sort == "i64" and (name == "stmt" or name.endswith("_stmt")):
        return "none" if value == -1 else statement_label(value, statements)
    if sort == "i64" and (name == "var" or name.endswith("_var")):
        return "none" if value == -1 else names.get(value, f"variable {value}")
    if sort == "i64" and name.endswith("bytes"):
        return "not static" if value == -1 else f"{value} bytes"
    if sort == "Plan" and isinstance(value, Term):
        return plan_words(value, names, statements)
    return value_text(sort, value, names)


def value_text(sort: str, value: Any, names: Mapping[int, str]) -> str:
    """A value of a declared sort as a user reads it: dims as the DSL writes them, a plan in words, operands as
    the call's arguments."""
    if sort == "Dims":
        return dims_text(value)
    if sort == "Dim":
        return dim_text(value)
    if sort == "Plan" and isinstance(value, Term):
        return plan_words(value, names)
    if sort == "Operands":
        items = []
        while isinstance(value, Term) and value.op == "OCons":
            head, value = value.args
            arg = head.args[0] if isinstance(head, Term) and head.args else head
            var = isinstance(head, Term) and head.op == "OVar" and isinstance(arg, int)
            items.append(names.get(arg, f"%{arg}") if var else str(arg))  # type: ignore[arg-type]
        return "(" + ", ".join(items) + ")"
    return str(value)


def variable_names(fn: Function) -> dict[int, str]:
    """A function's variables by id: its parameters, every assigned variable, loop carries and results."""
    names = {p.var.uid: p.var.name for p in fn.params}
    for body in blocks(fn.body):
        for s in body:
            if isinstance(s, AssignStmt):
                names[s.var.uid] = s.var.name
            for v in (*(ia.var for ia in getattr(s, "iter_args", ())), *getattr(s, "return_vars", ())):
                names[v.uid] = v.name
    return names
