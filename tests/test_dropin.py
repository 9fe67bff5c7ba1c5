"""Drop-in compatibility: the language the reference prints, its ops, and its answers (issue 7)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto_egg.language as pl
from pypto_egg import interp, ir, passes
from pypto_egg.errors import PassError
from pypto_egg.ir import python_print

from corpus import PROGRAMS, wrap
from helpers import flatten, roundtrip

HERE = Path(__file__).parent
SHARED = HERE.parent.parent / "shared"


def test_reference_printed_forms_roundtrip_and_pass_through_unchanged():
    """MemRefs with offsets and sizes, pl.Ptr, distributed tensors, pl.Tuple / pl.Array, func_attr, decorator
    keywords, pl.scope / pl.split_aiv, break / continue / assert, annotated yields, pl.const and scalar casts,
    pld ops, self.kernel(..., attrs=...) and pl.submit: read, printed back, and left alone by the pass."""
    program = pl.parse((HERE / "programs" / "reference_forms.py").read_text())
    text = python_print(program)
    again = roundtrip(program)
    assert python_print(again) == text
    for spelled in (
        'pl.MemRef("mem_ddr_0", 0, 64)',
        "pl.MemRef(mem_vec_2__ssa_v0, 0, 512)",
        "pld.DistributedTensor[[1, 16], pl.FP32, pl.TensorView(valid_shape=[1, 8], stride=[16, 1]",
        "pl.func_attr({'split': pl.SplitMode.UP_DOWN, 'split_aiv': True})",
        "auto_scope=False)",
        "with pl.scope(mode=pl.ScopeMode.MANUAL):",
        "for aiv__ssa_v0 in pl.split_aiv(2, mode=pl.SplitMode.NONE):",
        "acc__rv_v2: pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec] = pl.yield_(nxt__ssa_v0)",
        "pl.cast(rank__ssa_v0, pl.INDEX)",
        "pl.const(1, pl.INT32)",
        "pl.Tuple[pl.Tensor[[8, 16], pl.FP32], pl.Scalar[pl.TASK_ID]] = pl.submit(self.kernel,",
        'attrs={"arg_directions": [pl.adir.input, pl.adir.output_existing]}',
        "@pl.function(type=pl.FunctionType.Spmd",
        "assert True, 'always'",
        "(idx__ssa_v0 << 2) + (idx__ssa_v0 & 3)",
        "pl.tile.alloc(pl.Mem.Vec, 512)",
    ):
        assert spelled in text, spelled
    after = passes.flatten_tile_nd_to_2d()(program)
    ir.assert_structural_equal(after, program)


def test_function_call_takes_the_call_site_annotation():
    """A dynamic-shape kernel returns [M, 64]; the call site is [256, 64], as the reference prints it."""
    text = """
import pypto_egg.language as pl
M = pl.dynamic("M")

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[M, 64], pl.FP32]) -> pl.Tensor[[M, 64], pl.FP32]:
        return x

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, x: pl.Tensor[[256, 64], pl.FP32]) -> pl.Tensor[[256, 64], pl.FP32]:
        y: pl.Tensor[[256, 64], pl.FP32] = self.kernel(x, attrs={"arg_directions": [pl.adir.input]})
        return y
"""
    program = pl.parse(text)
    call = program.function("orch").body[0].value
    assert str(call.type.shape[0].value) == "256"
    assert dict(call.attrs) == {"arg_directions": [ir.NamedConst("adir.input")]}
    roundtrip(program)


@pytest.mark.parametrize(
    ("body", "op", "shape"),
    [
        ("r = pl.tile.fmod(t, t)", "tile.fmod", [6, 4]),
        ("r = pl.tile.sin(t)", "tile.sin", [6, 4]),
        ("tmp = pl.tile.create([2, 3, 4], dtype=pl.FP32)\nr = pl.tile.rem(t, t, tmp)", "tile.rem", [6, 4]),
        (
            "v = pl.tile.create([2, 3, 1], dtype=pl.FP32)\nr = pl.tile.row_expand_div(t, v)",
            "tile.row_expand_div",
            [6, 4],
        ),
        (
            "v = pl.tile.create([1, 1, 4], dtype=pl.FP32)\nr = pl.tile.col_expand_mul(t, v)",
            "tile.col_expand_mul",
            [6, 4],
        ),
        ("r = pl.tile.expands(t, 2.0)", "tile.expands", [6, 4]),
        ("r = pl.tile.fillpad(t, pad_value=pl.PadValue.max)", "tile.fillpad", [6, 4]),
        (
            "tmp = pl.tile.create([2, 3, 4], dtype=pl.FP32)\nr = pl.tile.row_sum(t, tmp)",
            "tile.row_sum",
            [6, 1],
        ),
        ("r = pl.tile.cast(t, pl.FP16)", "tile.cast", [6, 4]),
    ],
)
def test_deduced_ops_flatten_on_nd_tiles_and_keep_meaning(body, op, shape):
    store = (
        "r32 = pl.tile.cast(r, target_type=pl.FP32)\n"
        if op == "tile.cast"
        else "r32 = pl.tile.adds(r, 0.0)\n"
    )
    ret = "pl.Tensor[[2, 3, 4], pl.FP32]" if shape[1] == 4 else "pl.Tensor[[2, 3, 1], pl.FP32]"
    params = f"x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[{ret}]"
    before = pl.parse(
        wrap(
            f"t = pl.load(x, [0, 0, 0], [2, 3, 4])\n{body}\n{store}out = pl.store(r32, [0, 0, 0], out)\nreturn out",
            params,
            ret,
        )
    )
    after = flatten(before)
    stmt = next(s for s in after.functions[0].body if isinstance(s, ir.AssignStmt) and s.value.op == op)
    assert [d.value for d in stmt.var.type.shape] == shape


def test_an_op_without_deduction_on_an_nd_tile_is_refused_with_its_name_and_a_remedy():
    before = pl.parse(
        wrap(
            "t = pl.load(x, [0, 0, 0], [2, 3, 4])\n"
            "s: pl.Tile[[2, 3, 4], pl.FP32] = pl.tile.gather_mask(t, 1)\n"
            "out = pl.store(s, [0, 0, 0], out)\nreturn out"
        )
    )
    with pytest.raises(
        PassError, match=r"tile.gather_mask cannot be flattened.*\[2, 3, 4\].*pl.tile.reshape.*'s'"
    ):
        passes.flatten_tile_nd_to_2d()(before)


def test_an_op_without_deduction_and_without_a_tile_result_takes_the_flattened_tile():
    """D-3's limit: pld.tile.remote_store yields no tile, so it reads the [1, 16, 32] tile flattened to
    [16, 32], as the reference does (B-090)."""
    text = (
        SHARED / "realworld-sample" / "pre" / "ut.codegen.distributed.test_distributed_pto_codegen__P__167.py"
    )
    if not text.is_file():
        pytest.skip("shared/realworld-sample is not beside the project")
    src = text.read_text().replace("[16, 32], pl.FP16, pl.MemRef", "[1, 16, 32], pl.FP16, pl.MemRef")
    src = src.replace("[0, 0], [16, 32], [16, 32]", "[0, 0, 0], [1, 16, 32], [1, 16, 32]")
    after = python_print(passes.flatten_tile_nd_to_2d(backend="Ascend910B")(pl.parse(src)))
    assert "tile__ssa_v0: pl.Tile[[16, 32], pl.FP16" in after
    assert "pld.tile.remote_store(tile__ssa_v0, data__ssa_v0, peer__ssa_v0, [0, 0, 0])" in after


def test_ops_without_deduction_pass_through_a_function_that_is_flattened():
    before = pl.parse(
        wrap(
            "i: pl.Scalar[pl.INDEX] = pl.tile.get_block_idx()\n"
            "t = pl.load(x, [0, 0, 0], [2, 3, 4])\n"
            "u = pl.tile.exp(t)\n"
            "pl.system.bar_v()\n"
            "out = pl.store(u, [0, 0, 0], out)\nreturn out"
        )
    )
    after = passes.flatten_tile_nd_to_2d()(before)
    text = python_print(after)
    assert "i: pl.Scalar[pl.INDEX] = pl.tile.get_block_idx()" in text
    assert "pl.system.bar_v()" in text
    assert "u: pl.Tile[[6, 4], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)" in text


def test_rebuilt_statements_lose_their_attrs_but_loads_keep_them():
    """B-040 keeps a load's attrs; the ops the reference re-creates downstream of it (B-090) lose theirs."""
    before = pl.parse(
        wrap(
            "t = pl.load(x, [0, 0], [8, 16], attrs={'pipeline_membership': '0:0'})\n"
            "u = pl.tile.exp(t, attrs={'pipeline_membership': '0:0'})\n"
            "c = pl.tile.create([8, 16], dtype=pl.FP32, attrs={'keep': True})\n"
            "out = pl.store(u, [0, 0], out)\nreturn out",
            "x: pl.Tensor[[8, 16], pl.FP32], out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]",
            "pl.Tensor[[8, 16], pl.FP32]",
        )
    )
    after = flatten(before)
    text = python_print(after)
    assert "pl.tile.load(x, [0, 0], [8, 16], [8, 16], attrs={\"pipeline_membership\": '0:0'})" in text
    assert "pl.tile.exp(t)" in text
    assert 'attrs={"keep": True}' in text  # not downstream of a load: kept verbatim (B-061)


def test_break_continue_and_assert_run_in_the_interpreter():
    program = pl.parse(
        wrap(
            "t = pl.load(x, [0, 0], [8, 16])\n"
            "for i, (acc,) in pl.range(5, init_values=(t,)):\n"
            "    assert i < 5, 'in range'\n"
            "    if i == 3:\n"
            "        break\n"
            "    if i == 1:\n"
            "        continue\n"
            "    nxt = pl.tile.adds(acc, 1.0)\n"
            "    res = pl.yield_(nxt)\n"
            "out = pl.store(res, [0, 0], out)\nreturn out",
            "x: pl.Tensor[[8, 16], pl.FP32], out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]",
            "pl.Tensor[[8, 16], pl.FP32]",
        )
    )
    inputs = interp.random_inputs(program.functions[0], seed=3)
    got = interp.run(program, "main", inputs)
    np.testing.assert_allclose(got["out"], inputs["x"] + 2.0, rtol=1e-6)  # i = 0 and i = 2 add one each


def test_new_dtypes_parse_print_and_size():
    for name, nbytes in (
        ("UINT16", 2),
        ("UINT32", 4),
        ("UINT64", 8),
        ("INT4", 1),
        ("FP8E4M3FN", 1),
        ("TASK_ID", 8),
    ):
        dt = getattr(pl, name)
        assert dt.nbytes == nbytes
        program = pl.parse(
            wrap(
                f"t: pl.Tile[[16, 16], pl.{name}] = pl.load(x, [0, 0], [16, 16])\nreturn out",
                f"x: pl.Tensor[[16, 16], pl.{name}], out: pl.Out[pl.Tensor[[16, 16], pl.{name}]]",
                f"pl.Tensor[[16, 16], pl.{name}]",
            )
        )
        assert f"pl.Tile[[16, 16], pl.{name}]" in python_print(roundtrip(program))


def test_tensor_layouts_of_the_reference_parse():
    program = pl.parse(
        wrap(
            "return out",
            "x: pl.Tensor[[16, 16], pl.FP8E8M0, pl.TensorView(stride=[16, 1], layout=pl.TensorLayout.MX_A_ZZ)], "
            "out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]",
            "pl.Tensor[[16, 16], pl.FP32]",
        )
    )
    assert "layout=pl.TensorLayout.MX_A_ZZ" in python_print(roundtrip(program))


def test_corpus_programs_with_new_ops_interpret_identically_after_the_pass():
    for name in ("more_elementwise", "expands", "fillpad", "positional_attrs"):
        flatten(pl.parse(PROGRAMS[name]))


@pytest.mark.skipif(
    not (SHARED / "tools" / "realworld" / "run.py").exists(), reason="shared/ is not beside the project"
)
def test_real_programs_of_the_shared_sample_agree_with_the_reference(tmp_path):
    """The 675 real programs: all parse, 672 agree with the reference (all 25 N-D ones), and every
    disagreement is a stale N-D annotation on a load (docs/differences.md, D-1)."""
    out = tmp_path / "rw.jsonl"
    proc = subprocess.run(
        [sys.executable, str(SHARED / "tools" / "realworld" / "run.py"), str(SHARED / "realworld-sample"), "--quiet",
         "--jsonl", str(out)],
        capture_output=True, text=True, timeout=1200, env={**os.environ, "PYTHONPATH": str(HERE.parent)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    records = [json.loads(line) for line in out.read_text().splitlines()]
    n = len(records)
    agree = sum(r["outcome"] in ("agree", "both-reject") for r in records)
    nd = [r for r in records if r["nd"]]
    assert sum(r["stage"] != "parse" if "stage" in r else True for r in records) == n, proc.stdout[-3000:]
    assert n == 675 and agree >= 672, proc.stdout[-3000:]
    assert sum(r["outcome"] in ("agree", "both-reject") for r in nd) == len(nd) == 25
    explained = ("tile.load",)  # a stale N-D annotation: D-1
    for r in records:
        if r["outcome"] not in ("agree", "both-reject"):
            assert r["outcome"] == "DIFF" and any(k in r["first_diff"] for k in explained), r


def test_a_name_defined_in_a_loop_body_is_not_visible_after_the_loop():
    """D-4: loop results are the names a trailing pl.yield_ binds; a body value has one value per iteration."""
    with pytest.raises(pl.DSLError, match=r"name 'u' is not defined"):
        pl.parse(
            wrap(
                "t = pl.load(x, [0, 0, 0], [2, 3, 4])\nfor i in pl.range(2):\n    u = pl.tile.exp(t)\n"
                "out = pl.store(u, [0, 0, 0], out)\nreturn out"
            )
        )
