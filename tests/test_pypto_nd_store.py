"""PyPTO's own `test_nd_tensor_matmul_dispatch` program (tests/ut/ir/transforms/test_flatten_tile_nd_to_2d.py at
e2d0f78ae): after ConvertTensorToTileOps its InCore function stores a batch-1 matmul's [1, 16, 64] Acc tile into
a rank-2 [16, 64] tensor with three offsets. The store gets no partition window and keeps its offsets (B-055), as
the C++ pass does, and PyPTO's pipeline with pypto-egg's pass writes the C++ pass's code for it."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from pypto_egg.pypto import compile as compile_with_egg
from pypto_egg.pypto import load_pypto
from pypto_egg.pypto.compare import DETERMINISTIC, generated_code

from pypto_ref import requires_pypto, set_reference_backend

pytestmark = requires_pypto


def nd_tensor_matmul_program() -> Any:
    """The test's program, built as it builds it: tensor.matmul of a 2-D by a [1, 64, 256] operand, assembled
    into a rank-2 output at three offsets."""
    pto = load_pypto()
    from pypto.ir import IRBuilder
    from pypto.ir.op import tensor_ops

    ir, dt = pto.core_ir, pto.core.DataType
    ib = IRBuilder()
    with ib.program("main") as prog:
        prog.declare_function("main_incore_0")
        with ib.function("main_incore_0", type=ir.FunctionType.InCore) as f:
            h = f.param("h", ir.TensorType([16, 256], dt.BF16))
            w = f.param("w", ir.TensorType([1, 64, 256], dt.BF16))
            out_p = f.param("out_0", ir.TensorType([16, 64], dt.FP32), direction=ir.ParamDirection.Out)
            f.return_type(ir.TensorType([16, 64], dt.FP32))
            y_acc = ib.let("y_acc", tensor_ops.matmul(h, w, b_trans=True, out_dtype=dt.FP32))
            out_r = ib.let("out_0", tensor_ops.assemble(out_p, y_acc, [0, 0, 0]))
            ib.return_stmt(out_r)
        prog.add_function(f.get_result())
    return prog.get_result()


def test_the_three_offset_store_is_flattened_as_the_cxx_pass_flattens_it():
    pto = load_pypto()
    set_reference_backend()
    from pypto_egg.pypto import flatten_pass

    converted = pto.passes.convert_tensor_to_tile_ops()(nd_tensor_matmul_program())
    assert "pl.tile.store(y_acc__tile, [0, 0, 0], out_0)" in pto.ir.python_print(converted)
    ours = flatten_pass()(converted)
    theirs = pto.passes.flatten_tile_nd_to_2d()(converted)
    assert pto.ir.python_print(ours) == pto.ir.python_print(theirs)
    assert "pl.tile.store(matmul_0, [0, 0, 0], out_0)" in pto.ir.python_print(ours)


def test_pyptos_pipeline_compiles_it_with_pyptoeggs_pass_to_the_cxx_pass_code():
    pto = load_pypto()
    with tempfile.TemporaryDirectory() as tmp:
        ref, egg = Path(tmp) / "reference", Path(tmp) / "pypto-egg"
        pto.ir.compile(nd_tensor_matmul_program(), output_dir=str(ref), **DETERMINISTIC)
        compile_with_egg(nd_tensor_matmul_program(), output_dir=str(egg), **DETERMINISTIC)
        reference, ours = generated_code(ref), generated_code(egg)
    assert reference and ours == reference
