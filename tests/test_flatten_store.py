"""tile.store (behaviours.md §E: B-051..B-057, D-12..D-16)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pypto_egg.language as pl
from pypto_egg import interp, passes
from pypto_egg.egraph import FlattenEGraph
from pypto_egg.errors import PassError, UserError
from pypto_egg.explain import explain_program
from pypto_egg.ir import python_print

from helpers import flatten

D = pl.dynamic("D")


def window_of(program) -> list[int]:
    stores = [s.value for s in program.functions[0].body if getattr(s, "value", None) is not None
              and getattr(s.value, "op", "") == "tile.store"]  # fmt: skip
    return [d.value for d in stores[-1].args[3].elements]


def store_program(tile_rows: int, cols: int, tensor: list[int], offsets: list[int]):
    dims = ", ".join(map(str, tensor))
    offs = ", ".join(map(str, offsets))
    return pl.parse(f"""
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[{tile_rows}, {cols}], pl.FP32], out: pl.Out[pl.Tensor[[{dims}], pl.FP32]]) -> pl.Tensor[[{dims}], pl.FP32]:
        t = pl.load(x, [0, 0], [{tile_rows}, {cols}])
        out = pl.store(t, [{offs}], out)
        return out
""")


def test_b055_store_into_2d_tensor_keeps_three_operands_b053_3d_gets_four():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, a: pl.Tensor[[2, 3, 4], pl.FP32], b: pl.Tensor[[32, 64], pl.FP32],
                 out_0: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]], out_1: pl.Out[pl.Tensor[[32, 64], pl.FP32]]
                 ) -> tuple[pl.Tensor[[2, 3, 4], pl.FP32], pl.Tensor[[32, 64], pl.FP32]]:  # fmt: skip
            a_tile = pl.load(a, [0, 0, 0], [2, 3, 4])
            b_tile = pl.load(b, [0, 0], [32, 64])
            out_0 = pl.store(a_tile, [0, 0, 0], out_0)
            out_1 = pl.store(b_tile, [0, 0], out_1)
            return out_0, out_1

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, a: pl.Tensor[[2, 3, 4], pl.FP32], b: pl.Tensor[[32, 64], pl.FP32],
                 out_0: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]], out_1: pl.Out[pl.Tensor[[32, 64], pl.FP32]]
                 ) -> tuple[pl.Tensor[[2, 3, 4], pl.FP32], pl.Tensor[[32, 64], pl.FP32]]:  # fmt: skip
            a_tile: pl.Tile[[6, 4], pl.FP32] = pl.tile.load(a, [0, 0, 0], [2, 3, 4], [2, 3, 4])
            b_tile: pl.Tile[[32, 64], pl.FP32] = pl.tile.load(b, [0, 0], [32, 64], [32, 64])
            out_0_1: pl.Tensor[[2, 3, 4], pl.FP32] = pl.tile.store(a_tile, [0, 0, 0], out_0, [2, 3, 4])
            out_1_1: pl.Tensor[[32, 64], pl.FP32] = pl.tile.store(b_tile, [0, 0], out_1)
            return out_0_1, out_1_1

    flatten(Before, Expected)


def test_b055_a_batch_one_tile_stored_into_a_2d_tensor_keeps_its_three_offsets_and_no_window():
    """PyPTO's test_nd_tensor_matmul_dispatch after ConvertTensorToTileOps: a [1, 16, 64] tile stored into a
    [16, 64] tensor with one offset per tile axis (the extra leading axis of extent 1 at 0)."""

    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, h: pl.Tensor[[16, 32], pl.FP16], w: pl.Tensor[[1, 32, 64], pl.FP16],
                 out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:  # fmt: skip
            a = pl.load(h, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
            b = pl.load(w, [0, 0, 0], [1, 32, 64], target_memory=pl.Mem.Mat)
            c: pl.Tile[[1, 16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.batch_matmul(a, b)
            out = pl.store(c, [0, 0, 0], out)
            return out

    after = flatten(Before)
    store = after.functions[0].body[-2].value
    assert store.op == "tile.store" and len(store.args) == 3
    assert [e.value for e in store.args[1].elements] == [0, 0, 0]


@pytest.mark.parametrize(
    "tile, offsets, tensor",
    [
        ("[16, 64]", "[0]", "[16, 64]"),
        ("[2, 8, 64]", "[0, 0, 0]", "[16, 64]"),
        ("[1, 16, 64]", "[1, 0, 0]", "[16, 64]"),
    ],
)
def test_any_other_rank_mismatch_of_a_store_is_an_error_naming_its_shapes_and_the_fix(tile, offsets, tensor):
    text = f"""
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[{tile}, pl.FP32], out: pl.Out[pl.Tensor[{tensor}, pl.FP32]]) -> pl.Tensor[{tensor}, pl.FP32]:
        t = pl.load(x, {"[0, 0]" if tile == "[16, 64]" else "[0, 0, 0]"}, {tile})
        out = pl.store(t, {offsets}, out)
        return out
"""
    with pytest.raises(UserError) as info:
        pl.parse(text)
    message = str(info.value)
    assert f"offsets {offsets} for the tile {tile} and the rank-2 tensor {tensor}" in message
    assert "one offset per axis of the tensor" in message and "extent 1 at offset 0" in message


def test_b056_aligned_window_pads_leading_ones():
    after = flatten(store_program(16, 32, [4, 16, 32], [2, 0, 0]))
    assert window_of(after) == [1, 16, 32]


def test_b056_rows_spread_over_whole_leading_axes():
    after = flatten(store_program(6, 8, [2, 3, 8], [0, 0, 0]))
    assert window_of(after) == [2, 3, 8]


def test_b056_rows_within_one_axis_keep_the_aligned_window():
    after = flatten(store_program(3, 8, [4, 3, 8], [1, 0, 0]))
    assert window_of(after) == [1, 3, 8]


def test_b056_partial_outer_axis_after_whole_inner_axes():
    after = flatten(store_program(6, 8, [4, 3, 8], [2, 0, 0]))
    assert window_of(after) == [2, 3, 8]


def test_b056_four_d_tensor_window():
    after = flatten(store_program(8, 4, [3, 2, 4, 4], [1, 0, 0, 0]))
    assert window_of(after) == [1, 2, 4, 4]


def test_b191_dynamic_innermost_tensor_dim_does_not_block_a_window():
    src = """
import pypto_egg.language as pl
D = pl.dynamic("D")

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[6, 8], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, D], pl.FP32]]) -> pl.Tensor[[2, 3, D], pl.FP32]:
        t = pl.load(x, [0, 0], [6, 8])
        out = pl.store(t, [0, 0, 0], out)
        return out
"""
    after = flatten(pl.parse(src), dyn={"D": 8})
    assert window_of(after) == [2, 3, 8]


@pytest.mark.parametrize(
    ("rows", "cols", "tensor", "offsets", "pattern"),
    [
        (
            12,
            8,
            [2, 2, 4, 8],
            [0, 0, 0, 0],
            r"must fill axis 1 \(extent 2\) a whole number of times, but 3 rows remain",
        ),
        (6, 8, [4, 4, 8], [0, 2, 0], r"must fill axis 1 \(extent 4\) a whole number of times"),
        (6, 8, [4, 3, 8], [0, 1, 0], r"fills axis 1 \(extent 3\) completely, so it must start at offset 0"),
        (6, 8, [2, 3, 8], [0, 0, 4], r"writes 8 columns at offset 4 of an axis whose extent is 8"),
        (6, 8, [4, 3, 8], [3, 0, 0], r"writes 2 rows at offset 3 of axis 0, whose extent is 4"),
        (12, 8, [2, 3, 8], [0, 0, 0], r"6x8|12x8 tile into a tensor whose leading axes hold only 6 rows"),
    ],
    ids=["D-12-4d", "D-12-offset", "D-13", "D-14", "D-15", "D-16"],
)
def test_b056_store_window_rejections(rows, cols, tensor, offsets, pattern):
    with pytest.raises(PassError, match=pattern) as info:
        passes.flatten_tile_nd_to_2d()(store_program(rows, cols, tensor, offsets))
    assert "tile.store" in str(info.value) and "variable 'out'" in str(info.value)


@pytest.mark.parametrize(
    ("tensor", "offsets", "pattern"),
    [
        # two axes start off 0: the innermost is reported, where the walk meets it first
        ([2, 2, 2, 2, 8], [0, 1, 1, 0, 0], r"fills axis 2 \(extent 2\) completely"),
        # an offset off 0, then rows that do not divide the next axis: the walk stops at the offset (D-13, not D-12)
        ([2, 2, 2, 8], [0, 0, 1, 0], r"fills axis 2 \(extent 2\) completely"),
        # the columns overrun and the rows do not divide an axis: the columns are checked first (D-14, not D-12)
        ([2, 4, 8], [0, 0, 4], r"writes 8 columns at offset 4"),
    ],
    ids=["D-13-innermost-first", "D-13-before-D-12", "D-14-before-D-12"],
)
def test_b056_the_window_walk_reports_its_first_failure(tensor, offsets, pattern):
    """B-056: the columns are checked, then the leading axes innermost first; the first failure is reported."""
    rows = 16 if len(tensor) == 5 else 6
    with pytest.raises(PassError, match=pattern):
        passes.flatten_tile_nd_to_2d()(store_program(rows, 8, tensor, offsets))


def test_b053_window_uses_the_valid_dims_of_the_tile():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[1, 16, 512], pl.FP32], out: pl.Out[pl.Tensor[[1, 16, 512], pl.FP32]]
        ) -> pl.Tensor[[1, 16, 512], pl.FP32]:
            t = pl.load(x, [0, 0, 0], [1, 16, 512], valid_shape=[1, 10, 512])
            out = pl.store(t, [0, 0, 0], out)
            return out

    assert window_of(flatten(Before)) == [1, 10, 512]


def test_b054_store_kwargs_are_kept():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]
        ) -> pl.Tensor[[2, 3, 4], pl.FP32]:
            t = pl.load(x, [0, 0, 0], [2, 3, 4])
            out = pl.store(t, [0, 0, 0], out, atomic=pl.AtomicType.Add)
            return out

    after = flatten(Before, meaning=False)
    assert "pl.tile.store(t, [0, 0, 0], out, [2, 3, 4], atomic=pl.AtomicType.Add)" in python_print(after)


def test_b052_safety_net_reshapes_an_nd_tile_operand():
    """A rank-3 tile parameter is never retyped (B-006), so its store gets `flat_tile` first."""

    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, t: pl.Tile[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]
        ) -> pl.Tensor[[2, 3, 4], pl.FP32]:
            out = pl.store(t, [0, 0, 0], out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def main(
            self, t: pl.Tile[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]
        ) -> pl.Tensor[[2, 3, 4], pl.FP32]:
            flat_tile: pl.Tile[[6, 4], pl.FP32] = pl.tile.reshape(t, [6, 4])
            out_1: pl.Tensor[[2, 3, 4], pl.FP32] = pl.tile.store(flat_tile, [0, 0, 0], out, [2, 3, 4])
            return out_1

    after = flatten(Before, Expected, verify=False)
    assert after.functions[0].body[0].var.name == "flat_tile"
    assert after.functions[0].params == Before.functions[0].params


_KEPT_HEAD = """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, t: pl.Tile[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
"""
_KEPT_BODIES = {
    # an op re-deduced from the parameter keeps its N-D result (B-090)
    "rededuced": (
        "        u = pl.tile.exp(t)\n        out = pl.store(u, [0, 0, 0], out)\n        return out\n",
        "pl.tile.reshape(u, [6, 4])",
    ),
    # a loop carry seeded by the parameter names its buffer (B-170), in a function with no accumulator
    "carry": (
        "        for i, (c,) in pl.range(2, init_values=(t,)):\n            d = pl.tile.exp(c)\n"
        "            c2 = pl.yield_(d)\n        out = pl.store(c2, [0, 0, 0], out)\n        return out\n",
        "pl.tile.reshape(c2, [6, 4])",
    ),
    # an N-D transpose of the parameter reshapes its input (B-104); the second reads a flattened tile
    "transpose": (
        "        u = pl.tile.transpose(t, 1, 2)\n        v = pl.tile.transpose(u, 1, 2)\n"
        "        out = pl.store(v, [0, 0, 0], out)\n        return out\n",
        "trans_in_2d: pl.Tile[[6, 4], pl.FP32] = pl.tile.reshape(t, [6, 4])",
    ),
}


@pytest.mark.parametrize("body", sorted(_KEPT_BODIES))
def test_b052_b104_what_the_rules_keep_nd_is_reshaped_and_nothing_else(body):
    """The rules follow a tile parameter the pass keeps N-D (B-006) to its users (kept.egg): a store of it, of
    a carry it seeds or of an op re-deduced from it gets `flat_tile` first (B-052), an N-D transpose of it
    `trans_in_2d` (B-104); a flattened operand is never reshaped. The same programs as PyPTO's pass gives."""
    text, reshape = _KEPT_BODIES[body]
    after = python_print(flatten(pl.parse(_KEPT_HEAD + text), verify=False))
    assert reshape in after
    assert after.count("pl.tile.reshape(") == 1, after
    plan = "TransposeUnrollND" if body == "transpose" else "StorePartitionFlat"
    eg = FlattenEGraph(pl.parse(_KEPT_HEAD + text), "main")
    assert plan in {p.op for p in eg.plan_terms().values() if p is not None}


def test_d02_a_window_walk_over_a_dynamic_axis_names_the_remedy():
    src = """
import pypto_egg.language as pl
S = pl.dynamic("S")

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[12, 8], pl.FP32], out: pl.Out[pl.Tensor[[S, 3, 8], pl.FP32]]) -> pl.Tensor[[S, 3, 8], pl.FP32]:
        t = pl.load(x, [0, 0], [12, 8])
        out = pl.store(t, [0, 0, 0], out)
        return out
"""
    with pytest.raises(
        PassError,
        match=r"dynamic \(non-constant\) dimension in tile.store partition window.*pl.range/pl.parallel",
    ):
        passes.flatten_tile_nd_to_2d()(pl.parse(src))


def test_d02_dynamic_tile_rows_cannot_be_spread_over_axes():
    src = """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[12, 16], pl.FP32], n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[2, 3, 8], pl.FP32]]) -> pl.Tensor[[2, 3, 8], pl.FP32]:
        t = pl.load(x, [0, 0], [12, 16], valid_shape=[n, 16])
        out = pl.store(t, [0, 0, 0], out)
        return out
"""
    with pytest.raises(PassError, match=r"dynamic \(non-constant\) dimension in tile.store tile operand"):
        passes.flatten_tile_nd_to_2d()(pl.parse(src))


def test_a_tile_of_higher_rank_than_its_tensor_is_refused():
    src = """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[2, 2, 4, 8], pl.FP32], out: pl.Out[pl.Tensor[[2, 4, 8], pl.FP32]]) -> pl.Tensor[[2, 4, 8], pl.FP32]:
        t = pl.load(x, [0, 0, 0, 0], [1, 2, 4, 8])
        out = pl.store(t, [0, 0, 0], out)
        return out
"""
    with pytest.raises(PassError, match=r"rank-4 tile into a rank-3 tensor.*pl.tile.reshape"):
        passes.flatten_tile_nd_to_2d()(pl.parse(src))


@settings(max_examples=150)
@given(
    st.lists(st.sampled_from([1, 2, 3, 4, 8]), min_size=3, max_size=4),
    st.sampled_from([1, 2, 3, 4, 6, 8, 12, 16]),
    st.sampled_from([1, 2, 4, 8]),
    st.data(),
)
def test_any_2d_store_into_an_nd_tensor_is_lowered_faithfully_or_refused(tensor, rows, cols, data):
    """Whatever the shapes and offsets: the pass either refuses with a PassError, or the program it returns
    stores exactly what the original stores (when the original is a valid program at all)."""
    offsets = [data.draw(st.sampled_from([0, 0, 1, 2])) for _ in tensor]
    before = store_program(rows, cols, tensor, offsets)
    try:
        after = passes.flatten_tile_nd_to_2d()(before)
    except PassError:
        return
    inputs = interp.random_inputs(before.functions[0], 0)
    try:
        want = interp.run(before, "main", inputs)
    except interp.InterpError:
        return  # the original itself writes outside the tensor
    assert not interp.output_differences(want, interp.run(after, "main", inputs))


def given_window_program(window: list[int], offsets: list[int]):
    """A [4, 8] tile stored into a [4, 2, 8] tensor with the partition the program already gives."""
    return pl.parse(f"""
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[4, 8], pl.FP32], out: pl.Out[pl.Tensor[[4, 2, 8], pl.FP32]]) -> pl.Tensor[[4, 2, 8], pl.FP32]:
        t = pl.load(x, [0, 0], [4, 8])
        out = pl.tile.store(t, {offsets}, out, {window})
        return out
""")


@pytest.mark.parametrize("window", [[4, 1, 8], [2, 2, 8]])
def test_d2_a_given_window_that_holds_the_tile_is_kept(window):
    """The rows land where the program says: never in the pass's own window (D-2)."""
    before = given_window_program(window, [0, 0, 0])
    after = flatten(before)  # the interpreter checks both sides
    assert window_of(after) == window


def test_d2_a_given_window_keeps_what_the_store_computes():
    """[4, 1, 8] writes out[0:4, 0, :]; the pass's own window would write out[0:2, 0:2, :]."""
    before = given_window_program([4, 1, 8], [0, 0, 0])
    after = passes.flatten_tile_nd_to_2d()(before)
    inputs = interp.random_inputs(before.function("main"), 3)
    got = interp.run(after, "main", inputs)["out"]
    assert (got[:, 0, :] == inputs["x"]).all()


def test_d2_a_given_window_of_another_element_count_is_refused():
    with pytest.raises(PassError) as err:
        passes.flatten_tile_nd_to_2d()(given_window_program([2, 1, 8], [0, 0, 0]))
    text = str(err.value)
    assert "tile.store" in text and "out" in text and "[2, 1, 8]" in text and "32" in text


def test_d2_a_given_window_past_the_tensor_is_refused():
    with pytest.raises(PassError) as err:
        passes.flatten_tile_nd_to_2d()(given_window_program([2, 2, 8], [0, 1, 0]))
    text = str(err.value)
    assert "tile.store" in text and "axis 1" in text


def test_d2_a_given_window_of_another_rank_is_refused():
    with pytest.raises(PassError) as err:
        passes.flatten_tile_nd_to_2d()(given_window_program([4, 8], [0, 0, 0]))
    assert "rank" in str(err.value)


def test_d2_explain_names_the_rule_that_kept_a_given_window():
    stores = [s for s in explain_program(given_window_program([4, 1, 8], [0, 0, 0])).statements
              if "tile.store" in s.source]  # fmt: skip
    assert [r.name for r in stores[0].rules] == ["store-given-window-kept"]
    plain = [s for s in explain_program(store_program(16, 32, [4, 16, 32], [2, 0, 0])).statements
             if "tile.store" in s.source]  # fmt: skip
    assert not any(name.startswith("store-given") for name in plain[0].not_chosen_by)
