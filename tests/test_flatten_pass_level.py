"""Pass level (§A: B-001..B-006), preconditions (§B: B-010..B-013), dynamic shapes (§P)."""

from __future__ import annotations

import contextlib
import textwrap
from dataclasses import replace

import pytest

import pypto_egg.language as pl
from pypto_egg import passes
from pypto_egg.errors import InternalError, PassError
from pypto_egg.ir import python_print
from pypto_egg.passes import IRProperty

from corpus import PROGRAMS
from helpers import flatten

S = pl.dynamic("S")


def test_b001_name_and_properties():
    p = passes.flatten_tile_nd_to_2d()
    assert p.name == "FlattenTileNdTo2D"
    assert {IRProperty.SSAForm, IRProperty.IncoreTileOps, IRProperty.NormalizedStmtStructure} <= p.required
    assert {IRProperty.SSAForm, IRProperty.TileOps2D, IRProperty.NormalizedStmtStructure} <= p.produced
    assert not p.invalidated
    assert p.get_name() == "FlattenTileNdTo2D" and "TileOps2D" in p.get_produced_properties()
    assert {"SSAForm", "IncoreTileOps"} <= p.get_required_properties()
    assert issubclass(PassError, ValueError) and issubclass(InternalError, RuntimeError)


@pytest.mark.parametrize("ftype", ["Orchestration", "Opaque", "Group"])
def test_b002_non_incore_functions_are_returned_unchanged(ftype):
    decorator = "@pl.function" if ftype == "Opaque" else f"@pl.function(type=pl.FunctionType.{ftype})"
    src = f"""
import pypto_egg.language as pl
S = pl.dynamic("S")

@pl.program
class P:
    {decorator}
    def main(self, x: pl.Tensor[[2, S, 4], pl.FP32]) -> pl.Tensor[[2, S, 4], pl.FP32]:
        t = pl.load(x, [0, 0, 0], [2, S, 4])
        u = pl.tile.exp(t)
        return x
"""
    before = pl.parse(src)
    after = passes.flatten_tile_nd_to_2d()(before)
    assert after is before and after.functions[0] is before.functions[0]


def test_b006_params_and_return_types_are_never_retyped():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, t: pl.Tile[[2, 3, 4], pl.FP32], x: pl.Tensor[[2, 3, 4], pl.FP32]
        ) -> pl.Tensor[[2, 3, 4], pl.FP32]:
            u = pl.load(x, [0, 0, 0], [2, 3, 4])
            return x

    after = flatten(Before, meaning=False)
    assert after.functions[0].params == Before.functions[0].params
    assert after.functions[0].return_types == Before.functions[0].return_types


def test_b010_d01_dynamic_physical_dim_of_an_nd_tile_is_rejected_with_the_remedy():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, x: pl.Tensor[[2, S, 512], pl.FP32]) -> pl.Tensor[[2, S, 512], pl.FP32]:
            t = pl.load(x, [0, 0, 0], [2, S, 512])
            return x

    with pytest.raises(PassError) as info:
        passes.flatten_tile_nd_to_2d()(Before)
    text = str(info.value)
    assert "cannot be flattened to 2D" in text and "pl.parallel" in text and "reshap" in text
    assert "tile.load" in text and "dimension 1" in text and "variable 't'" in text


def test_a_tile_op_nested_in_another_calls_operands_is_refused_with_how_to_bind_it():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]
        ) -> pl.Tensor[[2, 3, 4], pl.FP32]:
            t = pl.load(x, [0, 0, 0], [2, 3, 4])
            out = pl.store(pl.tile.exp(t), [0, 0, 0], out)
            return out

    with pytest.raises(PassError) as info:
        passes.flatten_tile_nd_to_2d()(Before)
    text = str(info.value)
    assert "tile op 'tile.exp' is an operand of 'tile.store'" in text and "one tile op per statement" in text
    assert "bind it to a variable of its own first" in text and "variable 'out'" in text


def test_b010_dynamic_physical_dim_of_a_2d_tile_is_allowed():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, x: pl.Tensor[[S, 512], pl.FP32]) -> pl.Tensor[[S, 512], pl.FP32]:
            t = pl.load(x, [0, 0], [S, 512])
            u = pl.tile.exp(t)
            return x

    after = passes.flatten_tile_nd_to_2d()(Before)
    assert after.functions[0].body[0] is Before.functions[0].body[0]


@pytest.mark.parametrize("op", ["slice", "read", "write"])
def test_b011_d03_read_write_slice_on_nd_tiles_are_rejected(op):
    call = {
        "slice": "pl.tile.slice(t, [1, 3, 4], [0, 0, 0])",
        "read": "pl.tile.read(t, [0, 0, 0])",
        "write": "pl.tile.write(t, [0, 0, 0], 1.0)",
    }[op]
    src = f"""
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[2, 3, 4], pl.FP32]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
        t = pl.load(x, [0, 0, 0], [2, 3, 4])
        r = {call}
        return x
"""
    with pytest.raises(PassError, match=rf"FlattenTileNdTo2D: tile\.{op} is not supported on >2D tiles"):
        passes.flatten_tile_nd_to_2d()(pl.parse(src))


def test_b013_last_axis_row_reductions_flatten_through_the_generic_path():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 1], pl.FP32]]
        ) -> pl.Tensor[[2, 3, 1], pl.FP32]:
            t = pl.load(x, [0, 0, 0], [2, 3, 4])
            r = pl.tile.row_sum(t)
            m = pl.tile.row_max(t)
            s = pl.tile.add(r, m)
            out = pl.store(s, [0, 0, 0], out)
            return out

    after = flatten(Before)
    assert [d.value for d in after.functions[0].body[1].var.type.shape] == [6, 1]


def test_b013_reduction_without_keepdim_on_nd_tile_is_rejected():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, x: pl.Tensor[[2, 3, 4], pl.FP32]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
            t = pl.load(x, [0, 0, 0], [2, 3, 4])
            r = pl.tile.row_sum(t, keepdim=False)
            return x

    with pytest.raises(PassError, match="tile.row_sum' on >2D tile must use keepdim=True"):
        passes.flatten_tile_nd_to_2d()(Before)


def test_p_dynamic_chunk_loop_keeps_the_runtime_tail():
    chunk = 16

    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, x: pl.Tensor[[2, S, 64], pl.FP32], out: pl.Out[pl.Tensor[[2, S, 64], pl.FP32]],
                 s_dim: pl.Scalar[pl.INDEX]) -> pl.Tensor[[2, S, 64], pl.FP32]:  # fmt: skip
            for c, (o,) in pl.range(0, s_dim, chunk, init_values=(out,)):
                valid = pl.min(chunk, s_dim - c)
                t = pl.load(x, [1, c, 0], [1, chunk, 64], valid_shape=[1, valid, 64])
                f = pl.cast(t, target_type=pl.FP16)
                g = pl.cast(f, target_type=pl.FP32)
                o = pl.store(g, [1, c, 0], o)
                r = pl.yield_(o)
            return r

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, x: pl.Tensor[[2, S, 64], pl.FP32], out: pl.Out[pl.Tensor[[2, S, 64], pl.FP32]],
                 s_dim: pl.Scalar[pl.INDEX]) -> pl.Tensor[[2, S, 64], pl.FP32]:  # fmt: skip
            for c, (o,) in pl.range(0, s_dim, 16, init_values=(out,)):
                valid: pl.Scalar[pl.INDEX] = pl.min(16, s_dim - c)
                t: pl.Tile[[16, 64], pl.FP32, pl.TileView(valid_shape=[valid, 64])] = pl.tile.load(
                    x, [1, c, 0], [1, 16, 64], [1, valid, 64]
                )
                f: pl.Tile[[16, 64], pl.FP16, pl.TileView(valid_shape=[valid, 64])] = pl.tile.cast(
                    t, target_type=pl.FP16
                )
                g: pl.Tile[[16, 64], pl.FP32, pl.TileView(valid_shape=[valid, 64])] = pl.tile.cast(
                    f, target_type=pl.FP32
                )
                o_1: pl.Tensor[[2, S, 64], pl.FP32] = pl.tile.store(g, [1, c, 0], o, [1, valid, 64])
                r = pl.yield_(o_1)
            return r

    for s in (5, 16, 37):
        flatten(Before, Expected, dyn={"S": s}, scalars={"s_dim": s})


def test_input_program_is_never_mutated_even_when_the_pass_fails():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[12, 8], pl.FP32], out: pl.Out[pl.Tensor[[2, 2, 4, 8], pl.FP32]]
        ) -> pl.Tensor[[2, 2, 4, 8], pl.FP32]:
            t = pl.load(x, [0, 0], [12, 8])
            out = pl.store(t, [0, 0, 0, 0], out)
            return out

    text = python_print(Before)
    with pytest.raises(PassError):
        passes.flatten_tile_nd_to_2d()(Before)
    assert python_print(Before) == text


def test_backend_capacities_are_asserted_as_facts():
    from pypto_egg.egraph import FlattenEGraph

    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, x: pl.Tensor[[2, 3, 4], pl.FP32]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
            t = pl.load(x, [0, 0, 0], [2, 3, 4])
            return x

    for backend, acc in (("Ascend910B", 131072), ("Ascend950", 262144)):
        eg = FlattenEGraph(Before, "main", backend=backend)
        eg.saturate()
        caps = dict(eg.view().relations["Capacity"])
        assert caps["Acc"] == acc and caps["Mat"] == 524288
    eg = FlattenEGraph(Before, "main")
    eg.saturate()
    assert not eg.view().relations.get("Capacity")
    with pytest.raises(ValueError, match="unknown backend 'Ascend310'"):
        passes.flatten_tile_nd_to_2d(backend="Ascend310")


def test_d02b_merged_row_count_overflow_is_a_user_error():
    src = """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[2, 3, 4], pl.FP32]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
        a = pl.tile.create([4294967296, 4294967296, 4], dtype=pl.FP32)
        return x
"""
    with pytest.raises(
        PassError, match=r"integer overflow when computing merged dimension in tile.create tile"
    ):
        passes.flatten_tile_nd_to_2d()(pl.parse(src))


def _kernels(*bodies: str) -> pl.Program:
    fns = "".join(
        f"""
    @pl.function(type=pl.FunctionType.InCore)
    def k{i}(self, x: pl.Tensor[[2, 16, 32], pl.FP32], out: pl.Out[pl.Tensor[[2, 16, 32], pl.FP32]]) -> pl.Tensor[[2, 16, 32], pl.FP32]:
{textwrap.indent(body.strip(), " " * 8)}
"""
        for i, body in enumerate(bodies)
    )
    return pl.parse(f"import pypto_egg.language as pl\n\n@pl.program\nclass P:{fns}")


GOOD = "t = pl.load(x, [0, 0, 0], [2, 16, 32])\nu = pl.tile.exp(t)\nout = pl.store(u, [0, 0, 0], out)\nreturn out"
BAD_LOWERING = "t = pl.load(x, [0, 0, 0], [2, 16, 32])\nv = pl.tile.transpose(t, 0, 1)\nreturn out"  # D-20
BAD_PRE = "t = pl.load(x, [0, 0, 0], [2, 16, 32])\nv = pl.tile.read(t, [0, 0, 0])\nreturn out"  # D-03


def test_b005_one_e_graph_serves_every_incore_function_and_each_is_lowered_as_alone():
    program = _kernels(GOOD, GOOD.replace("tile.exp", "tile.neg"), GOOD)
    together = passes.flatten_tile_nd_to_2d()
    after = together(program)
    assert len(together.reports) == 1 and together.reports[0].function == "k0, k1, k2"
    from pypto_egg.ir import python_print

    for fn in program.functions:  # the same function as the pass gives it in a program of its own
        alone = passes.flatten_tile_nd_to_2d()(replace(program, functions=(fn,)))
        assert python_print(replace(after, functions=(after.function(fn.name),))) == python_print(alone)
    flatten(program)  # and the interpreter agrees on both sides


def test_b003_errors_come_in_function_order_across_the_shared_e_graph():
    with pytest.raises(PassError, match=r"tile\.transpose"):  # k0's lowering error before k1's precondition
        passes.flatten_tile_nd_to_2d()(_kernels(BAD_LOWERING, BAD_PRE))
    with pytest.raises(PassError, match=r"tile\.read"):
        passes.flatten_tile_nd_to_2d()(_kernels(GOOD, BAD_PRE, BAD_LOWERING))


def test_functions_that_share_statement_objects_are_each_rewritten():
    program = _kernels(GOOD)
    twin = replace(program.functions[0], name="k1")
    program = replace(program, functions=(program.functions[0], twin))
    after = passes.flatten_tile_nd_to_2d()(program)
    assert [d.value for d in after.functions[1].body[0].var.type.shape] == [32, 32]
    from pypto_egg.ir import python_print

    assert python_print(after.functions[1]) == python_print(after.functions[0]).replace("def k0(", "def k1(")


def test_the_pass_leaves_the_cyclic_collector_as_the_caller_set_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """No process-wide side effect: the pass neither switches, freezes nor tunes Python's collector (the
    caller's other threads and objects are the caller's), and it gives its answer with the collector on
    or off."""
    import gc

    program = pl.parse(PROGRAMS["seed"])
    touched: list[str] = []
    for name in ("disable", "enable", "freeze", "unfreeze", "set_threshold", "collect"):
        monkeypatch.setattr(gc, name, lambda *a, _n=name, **k: touched.append(_n))
    was, frozen = gc.isenabled(), gc.get_freeze_count()
    after = passes.flatten_tile_nd_to_2d()(program)
    assert touched == [] and gc.isenabled() == was and gc.get_freeze_count() == frozen
    monkeypatch.undo()
    gc.disable()
    try:
        off = passes.flatten_tile_nd_to_2d()(pl.parse(PROGRAMS["seed"]))
    finally:
        (gc.enable if was else gc.disable)()
    assert python_print(off) == python_print(after) and "pl.Tile[[6, 4]" in python_print(after)


def test_a_run_leaves_no_reference_cycle_behind() -> None:
    """Everything a pass call makes is freed by reference counting when its caller drops it: a cycle would wait
    for the caller's next full collection, holding its memory, and every cycle-free object the cycle reaches,
    until then."""
    import gc

    programs = [pl.parse(text) for text in PROGRAMS.values()]
    flatten = passes.flatten_tile_nd_to_2d()
    for program in programs:  # a first call loads the rule sets, which live as long as the process
        with contextlib.suppress(PassError):
            flatten(program)
    gc.collect()
    for program in programs:
        with contextlib.suppress(PassError):  # a refused program leaves no cycle either
            flatten(program)
    assert gc.collect() == 0
