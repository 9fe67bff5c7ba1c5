"""What a Fail plan stands for: the rules name a failure by its code and numbers, and this module words it as
the user error (or internal error) of pypto_egg.diagnostics, with the statement's variable and position."""

from __future__ import annotations

from pypto_egg import diagnostics as diag
from pypto_egg.errors import InternalError
from pypto_egg.ir.expr import Call, type_of
from pypto_egg.ir.ops import tuple_elems
from pypto_egg.ir.stmt import AssignStmt, Stmt
from pypto_egg.ir.types import TensorType, TileType

from .term import Term, as_int


def failure(s: Stmt, call: Call, plan: Term) -> Exception:
    """The user error (or internal error) a Fail plan stands for."""
    code = str(plan.field("code"))
    nums = [as_int(plan.field(f"n{i}")) for i in range(1, 6)]
    var = s.var.name if isinstance(s, AssignStmt) else None
    span = s.span or call.span
    if code == "D-02":
        return diag.dynamic_dim("tile.store partition window", var, span)
    if code == "D-02-TILE":
        return diag.dynamic_dim("tile.store tile operand", var, span)
    if code == "D-02-BMM":
        return diag.dynamic_dim(f"{call.op} {('lhs', 'rhs')[nums[0]]} dim {nums[1]}", var, span)
    if code == "BMM-ACC-DYN":
        return diag.acc_dims_not_static(type_of(call.args[0]), var, span)
    if code == "D-07":
        dst, src = type_of(call.args[0]), type_of(call.args[1])
        return diag.assemble_noncontiguous(src.shape, dst.shape, var, span)  # type: ignore[union-attr]
    if code == "D-20":
        return diag.transpose_batch_axis(nums[0], nums[1], nums[2], var, span)
    if code == "D-21":
        return diag.transpose_axis_range(nums[0], nums[1], var, span)
    if code.startswith("D-30:"):
        acc_t = type_of(call.args[0])
        dtype = acc_t.dtype.label if isinstance(acc_t, TileType) else "?"
        rank = acc_t.rank if isinstance(acc_t, TileType) else 0
        return diag.accumulator_rejected(code[5:], nums[0], nums[1], nums[2], dtype, rank, nums[4], var, span)
    if code == "D-40":
        return diag.row_windows_do_not_divide(nums[0], nums[1], var, span)
    if code.startswith("D-41:"):
        return diag.row_windows_rejected(code[5:], nums[0], nums[1], nums[2], nums[3], var, span)
    if code == "BMM-BCAST":
        return diag.batch_dims_do_not_broadcast(call.op, nums[0], nums[1], var, span)
    if code == "B-150":
        return diag.bmm_acc_not_2d(nums[0], var, span)
    if code == "BMM-STORE-RANK":
        return diag.bmm_store_rank(var, span)
    if code == "LOAD-NONCONTIG":
        return InternalError(
            f"{diag.PASS}: tile.load NZ 2D source-window collapse requires the valid sub-box of the leading dims "
            f"to be contiguous in row-major order{diag.where(var, span)}"
        )
    if code.startswith("STORE-GIVEN-"):
        tile, tensor = type_of(call.args[0]), type_of(call.args[2])
        assert isinstance(tile, TileType) and isinstance(tensor, TensorType)
        return diag.given_window_rejected(
            code,
            nums,
            tile.valid_shape,
            tuple_elems(call.op, call.args[3], "shapes"),
            tensor.shape,
            tuple_elems(call.op, call.args[1], "offsets"),
            var,
            span,
        )
    err = diag.store_failure(code, nums, var, span)
    return err if err is not None else diag.internal(f"unknown diagnostic {code} {nums}")
