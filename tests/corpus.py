"""DSL programs that together use every op and construct: the round-trip and interpreter corpus."""

from __future__ import annotations

HEADER = """
import pypto_egg.language as pl
S = pl.dynamic("S")
N = pl.dynamic("N")
"""


def wrap(body: str, params: str = "x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]",
         ret: str = "pl.Tensor[[2, 3, 4], pl.FP32]", ftype: str = "InCore") -> str:  # fmt: skip
    lines = "\n".join("        " + line for line in body.strip().splitlines())
    deco = "@pl.function" if ftype == "Opaque" else f"@pl.function(type=pl.FunctionType.{ftype})"
    return f"""{HEADER}
@pl.program
class P:
    {deco}
    def main(self, {params}) -> {ret}:
{lines}
"""


MAT = "a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]"
MAT_RET = "pl.Tensor[[16, 16], pl.FP32]"
BMM = ("a: pl.Tensor[[2, 16, 32], pl.FP16], b: pl.Tensor[[2, 32, 16], pl.FP16], "
       "out: pl.Out[pl.Tensor[[2, 16, 16], pl.FP32]]")  # fmt: skip
BMM_RET = "pl.Tensor[[2, 16, 16], pl.FP32]"
V2 = "x: pl.Tensor[[8, 16], pl.FP32], out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]"
V2_RET = "pl.Tensor[[8, 16], pl.FP32]"

PROGRAMS: dict[str, str] = {
    "seed": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\nu = pl.tile.add(t, t)\nout = pl.store(u, [0, 0, 0], out)\nreturn out"
    ),
    "seed_after": wrap(
        "t: pl.Tile[[6, 4], pl.FP32] = pl.load(x, [0, 0, 0], [2, 3, 4])\nu: pl.Tile[[6, 4], pl.FP32] = pl.tile.add(t, t)\nout = pl.store(u, [0, 0, 0], out, [2, 3, 4])\nreturn out"
    ),
    "store_shapes_kw": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\nout = pl.store(t, [0, 0, 0], out, shapes=[2, 3, 4])\nreturn out"
    ),
    "sub_mul_div": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\na = pl.tile.sub(t, t)\nb = pl.tile.mul(a, t)\nc = pl.tile.div(b, t)\nout = pl.store(c, [0, 0, 0], out)\nreturn out"
    ),
    "max_min": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\na = pl.tile.maximum(t, t)\nb = pl.tile.minimum(a, t)\nout = pl.store(b, [0, 0, 0], out)\nreturn out"
    ),
    "unary": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\na = pl.tile.exp(t)\nb = pl.tile.neg(a)\nc = pl.tile.abs(b)\nd = pl.tile.relu(c)\ne = pl.tile.sqrt(d)\nout = pl.store(e, [0, 0, 0], out)\nreturn out"
    ),
    "scalar_ops": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\na = pl.tile.muls(t, 2.0)\nb = pl.tile.adds(a, 1.5)\nc = pl.tile.mul(b, 0.5)\nout = pl.store(c, [0, 0, 0], out)\nreturn out"
    ),
    "more_scalar_unary": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\na = pl.tile.subs(t, 1.0)\nb = pl.tile.divs(a, 2.0)\nc = pl.tile.maxs(b, -1.0)\nd = pl.tile.mins(c, 1.0)\ne = pl.tile.abs(d)\nf = pl.tile.adds(e, 1.0)\ng = pl.tile.log(f)\nh = pl.tile.recip(f)\ni = pl.tile.rsqrt(f)\nj = pl.tile.add(g, h)\nm = pl.tile.add(j, i)\nout = pl.store(m, [0, 0, 0], out)\nreturn out"
    ),
    "cast": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\na = pl.cast(t, target_type=pl.FP16)\nb = pl.tile.cast(a, target_type=pl.FP32, mode='round')\nout = pl.store(b, [0, 0, 0], out)\nreturn out"
    ),
    "cast_int": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\na = pl.cast(t, target_type=pl.INT32, mode='floor')\nb = pl.cast(a, target_type=pl.FP32)\nout = pl.store(b, [0, 0, 0], out)\nreturn out"
    ),
    "move": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4], target_memory=pl.Mem.Vec)\na = pl.tile.move(t, target_memory=pl.Mem.Mat)\nb = pl.tile.move(a, target_memory=pl.Mem.Vec)\nout = pl.store(b, [0, 0, 0], out)\nreturn out"
    ),
    "create_full": wrap(
        "a = pl.tile.create([2, 3, 4], dtype=pl.FP32)\nb = pl.tile.full([2, 3, 4], dtype=pl.FP32, value=2.0)\nc = pl.tile.add(a, b)\nout = pl.store(c, [0, 0, 0], out)\nreturn out"
    ),
    "create_positional_dtype": wrap("a = pl.tile.create([32, 32], pl.FP32)\nreturn out"),
    "create_acc": wrap("a = pl.tile.create([16, 16], dtype=pl.FP32, target_memory=pl.Mem.Acc)\nreturn out"),
    "assemble_slice": wrap(
        "a = pl.tile.full([4, 4], dtype=pl.FP32, value=0.0)\nt = pl.load(x, [0, 0, 0], [1, 2, 4])\nr = pl.tile.reshape(t, [2, 4])\nb = pl.tile.assemble(a, r, [2, 0])\nc = pl.tile.slice(b, [2, 4], [1, 0])\nd = pl.tile.slice(b, [2, 4], [0, 0], [1, 4])\nreturn out"
    ),
    "assemble_nd": wrap(
        "a = pl.tile.full([2, 3, 4], dtype=pl.FP32, value=0.0)\nt = pl.load(x, [1, 0, 0], [1, 3, 4])\nb = pl.tile.assemble(a, t, [1, 0, 0])\nout = pl.store(b, [0, 0, 0], out)\nreturn out"
    ),
    "reshape": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\na = pl.tile.reshape(t, [6, 4])\nb = pl.tile.reshape(a, [2, 3, 4])\nout = pl.store(b, [0, 0, 0], out)\nreturn out"
    ),
    "reinterpret": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\na = pl.tile.reinterpret_view(t, pl.INT16)\nb = pl.tile.reinterpret_view(a, dtype=pl.FP32, shape=[2, 3, 4])\nout = pl.store(b, [0, 0, 0], out)\nreturn out"
    ),
    "transpose_2d": wrap(
        "t = pl.load(x, [0, 0], [8, 16])\na = pl.transpose(t, axis1=0, axis2=1)\nb = pl.transpose(a, axis1=0, axis2=1)\nout = pl.store(b, [0, 0], out)\nreturn out",
        V2,
        V2_RET,
    ),
    "transpose_4arg": wrap(
        "t = pl.load(x, [0, 0], [8, 16])\ntmp = pl.tile.create([8, 16], dtype=pl.FP32, target_memory=pl.Mem.Vec)\na = pl.tile.transpose(t, 0, 1, tmp)\nreturn out",
        V2,
        V2_RET,
    ),
    "transpose_nd": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\na = pl.transpose(t, axis1=1, axis2=2)\nb = pl.transpose(a, axis1=-1, axis2=-2)\nout = pl.store(b, [0, 0, 0], out)\nreturn out"
    ),
    "transpose_view": wrap(
        "t = pl.load(x, [0, 0], [8, 16], target_memory=pl.Mem.Mat)\na = pl.tile.transpose_view(t)\nreturn out",
        V2,
        V2_RET,
    ),
    "read_write": wrap(
        "t = pl.load(x, [0, 0], [8, 16])\nv = pl.tile.read(t, [1, 2])\nw = pl.tile.write(t, [0, 0], v)\nout = pl.store(w, [0, 0], out)\nreturn out",
        V2,
        V2_RET,
    ),
    "row_reduce": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\na = pl.tile.row_sum(t)\nb = pl.tile.row_max(t)\nc = pl.tile.row_min(t)\nd = pl.tile.row_sum(t, keepdim=False)\nreturn out"
    ),
    "matmul": wrap(
        "ta = pl.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat)\ntb = pl.load(b, [0, 0], [32, 16], target_memory=pl.Mem.Mat)\nl = pl.tile.move(ta, target_memory=pl.Mem.Left)\nr = pl.tile.move(tb, target_memory=pl.Mem.Right)\nc = pl.tile.matmul(l, r)\nout = pl.store(c, [0, 0], out)\nreturn out",
        MAT,
        MAT_RET,
    ),
    "matmul_acc": wrap(
        "ta = pl.load(a, [0, 0], [16, 32])\ntb = pl.load(b, [0, 0], [32, 16])\nc = pl.matmul(ta, tb)\nd = pl.tile.matmul_acc(c, ta, tb, init_cond=False)\ne = pl.tile.matmul_acc(d, ta, tb)\nout = pl.store(e, [0, 0], out)\nreturn out",
        MAT,
        MAT_RET,
    ),
    "matmul_acc_cond": wrap(
        "ta = pl.load(a, [0, 0], [16, 32])\ntb = pl.load(b, [0, 0], [32, 16])\nacc = pl.tile.create([16, 16], dtype=pl.FP32, target_memory=pl.Mem.Acc)\nfor k, (c,) in pl.range(3, init_values=(acc,)):\n    d = pl.tile.matmul_acc(c, ta, tb, k == 0)\n    r = pl.yield_(d)\nout = pl.store(r, [0, 0], out)\nreturn out",
        MAT,
        MAT_RET,
    ),
    "batch_matmul": wrap(
        "ta = pl.load(a, [0, 0, 0], [2, 16, 32])\ntb = pl.load(b, [0, 0, 0], [2, 32, 16])\nc = pl.tile.batch_matmul(ta, tb)\nd = pl.tile.batch_matmul_acc(c, ta, tb)\nout = pl.store(d, [0, 0, 0], out)\nreturn out",
        BMM,
        BMM_RET,
    ),
    "batch_matmul_broadcast": wrap(
        "ta = pl.load(a, [0, 0, 0], [1, 16, 32])\ntb = pl.load(b, [0, 0, 0], [2, 32, 16])\nc = pl.tile.batch_matmul(ta, tb)\nout = pl.store(c, [0, 0, 0], out)\nreturn out",
        BMM,
        BMM_RET,
    ),
    "set_validshape": wrap(
        "t = pl.load(x, [0, 0], [8, 16])\nv = pl.tile.set_validshape(t, 4, 16)\nout = pl.store(v, [0, 0], out)\nreturn out",
        V2,
        V2_RET,
    ),
    "tensor_view_create": wrap(
        "v = pl.tensor.view(x, [6, 4])\nt = pl.load(v, [0, 0], [6, 4])\nc = pl.create_tensor([4, 4], dtype=pl.FP32, layout=pl.TensorLayout.ND)\nreturn out"
    ),
    "for_range": wrap(
        "for i in pl.range(2):\n    t = pl.load(x, [i, 0, 0], [1, 3, 4])\n    pl.store(t, [i, 0, 0], out)\nreturn out"
    ),
    "for_iter_args": wrap(
        "for i, (o,) in pl.range(0, 2, 1, init_values=(out,)):\n    t = pl.load(x, [i, 0, 0], [1, 3, 4])\n    o2 = pl.store(t, [i, 0, 0], o)\n    r = pl.yield_(o2)\nreturn r"
    ),
    "parallel": wrap(
        "for i, (o,) in pl.parallel(2, init_values=(out,)):\n    t = pl.load(x, [i, 0, 0], [1, 3, 4])\n    o2 = pl.store(t, [i, 0, 0], o)\n    r = pl.yield_(o2)\nreturn r"
    ),
    "pipeline": wrap(
        "for i, (o,) in pl.pipeline(0, 2, 1, stage=2, init_values=(out,)):\n    t = pl.load(x, [i, 0, 0], [1, 3, 4])\n    o2 = pl.store(t, [i, 0, 0], o)\n    r = pl.yield_(o2)\nreturn r"
    ),
    "unroll_two_carries": wrap(
        "t0 = pl.tile.full([1, 3, 4], dtype=pl.FP32, value=0.0)\nfor i, (o, acc) in pl.unroll(2, init_values=(out, t0)):\n    t = pl.load(x, [i, 0, 0], [1, 3, 4])\n    a = pl.tile.add(acc, t)\n    o2 = pl.store(a, [i, 0, 0], o)\n    r, s = pl.yield_(o2, a)\nreturn r"
    ),
    "while": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\nfor acc, n in pl.while_(init_values=(t, 0)):\n    pl.cond(n < 3)\n    a = pl.tile.add(acc, t)\n    acc_out, n_out = pl.yield_(a, n + 1)\nout = pl.store(acc_out, [0, 0, 0], out)\nreturn out"
    ),
    "if_else": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\nif k > 2:\n    a = pl.tile.exp(t)\n    r = pl.yield_(a)\nelse:\n    b = pl.tile.neg(t)\n    r = pl.yield_(b)\nout = pl.store(r, [0, 0, 0], out)\nreturn out",
        "x: pl.Tensor[[2, 3, 4], pl.FP32], k: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]",
    ),
    "if_no_else": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\nif k == 1 and not k == 2:\n    pl.store(t, [0, 0, 0], out)\nreturn out",
        "x: pl.Tensor[[2, 3, 4], pl.FP32], k: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]",
    ),
    "scope": wrap(
        "with pl.at(level=pl.Level.CORE_GROUP, name_hint='inner'):\n    t = pl.load(x, [0, 0, 0], [2, 3, 4])\nout = pl.store(t, [0, 0, 0], out)\nreturn out"
    ),
    "scalar_arith": wrap(
        "a = k * 2 + 1\nb = a // 3 - k % 2\nc = pl.min(a, b)\nd = pl.max(c, 0)\ne = -d\nt = pl.load(x, [0, 0, 0], [2, 3, 4])\nreturn out",
        "x: pl.Tensor[[2, 3, 4], pl.FP32], k: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]",
    ),
    "dynamic_valid": wrap(
        "for c, (o,) in pl.range(0, s, 16, init_values=(out,)):\n    v = pl.min(16, s - c)\n    t = pl.load(x, [0, c, 0], [1, 16, 64], valid_shape=[1, v, 64])\n    o2 = pl.store(t, [0, c, 0], o)\n    r = pl.yield_(o2)\nreturn r",
        "x: pl.Tensor[[1, S, 64], pl.FP32], s: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[1, S, 64], pl.FP32]]",
        "pl.Tensor[[1, S, 64], pl.FP32]",
    ),
    "dynamic_tile_type": wrap(
        "t: pl.Tile[[16, 512], pl.BF16, pl.TileView(valid_shape=[S, 512])] = pl.tile.load(x, [0, 0, 0], [1, 16, 512], [1, S, 512])\nreturn x",
        "x: pl.Tensor[[1, S, 512], pl.BF16]",
        "pl.Tensor[[1, S, 512], pl.BF16]",
    ),
    "tile_view_zn": wrap(
        "t: pl.Tile[[2, 16, 128], pl.FP16, pl.Mem.Mat, pl.TileView(blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.col_major)] = pl.tile.load(x, [0, 0, 0], [2, 16, 128], target_memory=pl.Mem.Mat)\nreturn x",
        "x: pl.Tensor[[2, 16, 128], pl.FP16]",
        "pl.Tensor[[2, 16, 128], pl.FP16]",
    ),
    "tensor_view_types": wrap(
        "t = pl.tile.load(x, [0, 0, 0], [1, 16, 128], target_memory=pl.Mem.Mat)\nreturn x",
        "x: pl.Tensor[[2, 16, 128], pl.FP16, pl.TensorView(stride=[2048, 128, 1], layout=pl.TensorLayout.ND, valid_shape=[1, 16, 128])]",
        "pl.Tensor[[2, 16, 128], pl.FP16]",
    ),
    "tensor_view_dn": wrap(
        "t = pl.tile.load(w, [0, 0, 0], [1, 64, 32], target_memory=pl.Mem.Mat)\nreturn w",
        "w: pl.Tensor[[1, 64, 32], pl.BF16, pl.TensorView(stride=[], layout=pl.TensorLayout.DN)]",
        "pl.Tensor[[1, 64, 32], pl.BF16]",
    ),
    "memref_name": wrap(
        "t: pl.Tile[[2, 3, 4], pl.FP32, ping, pl.Mem.Vec] = pl.load(x, [0, 0, 0], [2, 3, 4], target_memory=pl.Mem.Vec)\nreturn out"
    ),
    "memref": wrap(
        "t: pl.Tile[[2, 3, 4], pl.FP32, pl.MemRef('ping'), pl.Mem.Vec] = pl.load(x, [0, 0, 0], [2, 3, 4], target_memory=pl.Mem.Vec)\nreturn out"
    ),
    "attrs_atomic": wrap(
        "t = pl.tile.load(x, [0, 0, 0], [2, 3, 4], attrs={'__compiler_tensor_to_tile_mat_bridge': True})\nout = pl.store(t, [0, 0, 0], out, atomic=pl.AtomicType.Add)\nreturn out"
    ),
    "inout": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\nx2 = pl.store(t, [0, 0, 0], x)\nreturn x2",
        "x: pl.InOut[pl.Tensor[[2, 3, 4], pl.FP32]]",
    ),
    "aiv_aic": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\nout = pl.store(t, [0, 0, 0], out)\nreturn out", ftype="AIV"
    ),
    "opaque": wrap("return out", ftype="Opaque"),
    "more_elementwise": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\na = pl.tile.fmod(t, t)\nb = pl.tile.sin(a)\nc = pl.tile.cos(b)\ntmp = pl.tile.create([2, 3, 4], dtype=pl.FP32)\nd = pl.tile.rem(c, t, tmp)\ne = pl.tile.prelu(d, t, tmp)\nf = pl.tile.part_add(e, t)\ng = pl.tile.part_mul(f, t)\nh = pl.tile.part_max(g, t)\ni = pl.tile.part_min(h, t)\nj = pl.tile.fmods(i, 2.0)\nk = pl.tile.rems(j, 3.0, tmp)\nm = pl.tile.rsqrt(k, tmp)\nn = pl.tile.recip(m, high_precision=True)\no = pl.tile.div(n, t, high_precision=True)\nout = pl.store(o, [0, 0, 0], out)\nreturn out"
    ),
    "bitwise": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\ntmp = pl.tile.create([2, 3, 4], dtype=pl.INT16)\na = pl.tile.and_(t, t)\nb = pl.tile.or_(a, t)\nc = pl.tile.xor(b, t, tmp)\nd = pl.tile.shl(c, t)\ne = pl.tile.shr(d, t)\nf = pl.tile.ands(e, 3)\ng = pl.tile.ors(f, 4)\nh = pl.tile.shls(g, 1)\ni = pl.tile.shrs(h, 1)\nj = pl.tile.xors(i, 5, tmp)\nk = pl.tile.not_(j)\nout = pl.store(k, [0, 0, 0], out)\nreturn out",
        "x: pl.Tensor[[2, 3, 4], pl.INT16], out: pl.Out[pl.Tensor[[2, 3, 4], pl.INT16]]",
        "pl.Tensor[[2, 3, 4], pl.INT16]",
    ),
    "expands": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\ntmp = pl.tile.create([2, 3, 4], dtype=pl.FP32)\nr = pl.tile.row_sum(t, tmp)\nq = pl.tile.row_prod(t, tmp)\na = pl.tile.row_expand(t, r)\nb = pl.tile.row_expand_add(a, r, tmp)\nc = pl.tile.row_expand_sub(b, r)\nd = pl.tile.row_expand_mul(c, q)\ne = pl.tile.row_expand_div(d, r)\nf = pl.tile.row_expand_max(e, r)\ng = pl.tile.row_expand_min(f, r)\nh = pl.tile.row_expand_expdif(g, r)\ncv = pl.tile.create([1, 1, 4], dtype=pl.FP32)\ni = pl.tile.col_expand(h, cv)\nj = pl.tile.col_expand_add(i, cv)\nk = pl.tile.col_expand_sub(j, cv)\nm = pl.tile.col_expand_mul(k, cv)\nn = pl.tile.col_expand_div(m, cv)\no = pl.tile.col_expand_max(n, cv)\np = pl.tile.col_expand_min(o, cv)\nw = pl.tile.col_expand_expdif(p, cv)\ny = pl.tile.expands(w, 1.0)\nout = pl.store(y, [0, 0, 0], out)\nreturn out"
    ),
    "fillpad": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\na = pl.tile.fillpad(t, pad_value=pl.PadValue.max)\nb = pl.tile.fillpad_inplace(a)\nout = pl.store(b, [0, 0, 0], out)\nreturn out"
    ),
    "positional_attrs": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\na = pl.tile.cast(t, pl.FP16)\nb = pl.tile.cast(a, pl.FP32, 'rint')\ni = pl.cast(3, pl.INDEX)\nk = pl.const(7, pl.INT32)\nf = pl.const(1.5, pl.FP16)\nc = pl.tile.move(b, target_memory=pl.Mem.Vec, blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.none_box)\nout = pl.store(c, [0, 0, 0], out)\nreturn out"
    ),
    "int_dtypes": wrap(
        "t = pl.load(x, [0, 0, 0], [2, 3, 4])\na = pl.tile.muls(t, 3)\nb = pl.tile.adds(a, -2)\nout = pl.store(b, [0, 0, 0], out)\nreturn out",
        "x: pl.Tensor[[2, 3, 4], pl.INT32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.INT32]]",
        "pl.Tensor[[2, 3, 4], pl.INT32]",
    ),
}

CALLS = (
    HEADER
    + """
@pl.program
class Calls:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
        t = pl.load(x, [0, 0, 0], [2, 3, 4])
        out = pl.store(t, [0, 0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore, level=pl.Level.CHIP_DIE, role=pl.Role.SubWorker)
    def worker(x: pl.Tensor[[2, 3, 4], pl.FP32]) -> tuple[pl.Tensor[[2, 3, 4], pl.FP32], pl.Tensor[[2, 3, 4], pl.FP32]]:
        return x, x

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
        r = self.kernel(x, out)
        a, b = self.worker(r)
        return b
"""
)
PROGRAMS["calls"] = CALLS
