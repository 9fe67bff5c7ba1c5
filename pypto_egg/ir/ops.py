"""Every op of the registry with its type deduction (the schema is registry.py's; the matmul family's
deductions are deduce_matmul.py's, a load's and a store's deduce_memory.py's, the helpers they share deduce_common.py's).

The registry is the only global of the package; it is filled once, when this module is imported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import RefusedType, TypeDeductionError
from .deduce_common import (
    _elementwise_result,
    _implicit_column_layout,
    _inherited,
    _same_dim,
    _tensor,
    _tile,
    fmt_shape,
    tuple_elems,
)
from .deduce_matmul import (
    _batch_matmul,
    _batch_matmul_acc,
    _matmul,
    _matmul_acc,
)
from .deduce_memory import _load, _store
from .deduce_reshape import _reinterpret, _reshape
from .dtype_rules import RULES, check_dtypes, pypto_name
from .expr import BinOp, Call, ConstInt, Expr, exprs_equal, static_int, type_of
from .extents import window_valid
from .node import replaced
from .registry import REGISTRY, Kwargs, OpDef, OutputMemory, register
from .signatures import SIGNATURES
from .span import Span
from .tiles import effective_view, implicit_layouts, make_tile_type, retile, tile_layouts
from .types import (
    UNKNOWN_TYPE,
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
    Type,
)


def _in(space: MemorySpace) -> OutputMemory:
    return lambda args, kw: space


def _from_keyword(default: MemorySpace | None = None) -> OutputMemory:
    return lambda args, kw: kw.get("target_memory", default)


def _from_operand(args: Sequence[Expr], kw: Kwargs) -> MemorySpace | None:
    for a in args:
        t = type_of(a)
        if isinstance(t, TileType) and t.memory is not None:
            return t.memory
    return None


VEC, ACC = _in(MemorySpace.Vec), _in(MemorySpace.Acc)


def get_op(name: str) -> OpDef:
    try:
        return REGISTRY[name]
    except KeyError:
        raise TypeDeductionError(f"unknown op '{name}'") from None


def deduce_type(op: str, args: Sequence[Expr], kwargs: Kwargs, annotation: Type | None = None) -> Type:
    """The result type of a call: deduced, or (for an op without deduction) the annotation."""
    d = get_op(op)
    if len(args) < d.required or (len(args) > len(d.params) and not d.variadic):
        raise TypeDeductionError(
            f"{op} takes {d.required}..{len(d.params)} operands ({', '.join(d.params)}), got {len(args)}"
        )
    if kwargs and not d.any_keyword and not d.kwargs.issuperset(kwargs):
        unknown = set(kwargs) - d.kwargs
        raise TypeDeductionError(
            f"{op} does not accept keyword(s) {sorted(unknown)}; accepted: {sorted(d.kwargs)}"
        )
    if op in RULES:
        check_dtypes(op, args, kwargs)
    if d.deduce is None:
        return annotation if annotation is not None else UNKNOWN_TYPE
    result = d.deduce(op, args, kwargs)
    if d.memory is not None and isinstance(result, TileType) and result.memory is None:
        # placed after its view was put in canonical form unplaced: a view the shape alone implies is then
        # the implicit view of the space, as the reference's registry does it
        memory = d.memory(args, kwargs)
        if memory is not None:
            return retile(result, memory=memory)
    return result


def make_call(
    op: str,
    args: Sequence[Expr],
    kwargs: Kwargs | None = None,
    attrs: Sequence[tuple[str, Any]] = (),
    span: Span | None = None,
    annotation: Type | None = None,
) -> Call:
    """Create an op call with its result type deduced by the registry."""
    kw = dict(kwargs or {})
    return Call(op, tuple(args), deduce_type(op, args, kw, annotation), tuple(kw.items()), tuple(attrs), span)


# ---------------------------------------------------------------- deductions


def _create(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    """tile.create: an Acc tile has the Acc box layout; `transpose=True` the transposed Mat one (ZN);
    `flat_layout=True` an unboxed Mat tile; any other the layout its shape implies. The registry places it
    in its target memory."""
    shape = tuple_elems(op, args[0], "shape")
    dtype = _dtype_kwarg(op, kw)
    memory = None
    compact = CompactMode.normal if kw.get("compact") else None
    if kw.get("flat_layout"):
        view, memory = TileView(compact=compact), MemorySpace.Mat
    elif kw.get("target_memory") is MemorySpace.Acc:
        b, sl, f = implicit_layouts(tuple(shape), MemorySpace.Acc)
        view, memory = TileView(blayout=b, slayout=sl, fractal=f, compact=compact), MemorySpace.Acc
    elif kw.get("transpose"):
        view = TileView(blayout=TileLayout.row_major, slayout=TileLayout.col_major, compact=compact)
    else:
        view = TileView(blayout=_implicit_column_layout(shape), compact=compact)
    return make_tile_type(shape, dtype, memory, view)


def _full(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    """tile.full: a fresh view with the default layouts, whatever the shape (so a [N, 1] tile is row_major)."""
    shape = tuple_elems(op, args[0], "shape")
    return make_tile_type(shape, _dtype_kwarg(op, kw), None, TileView())


def _dtype_kwarg(op: str, kw: Kwargs) -> DataType:
    dtype = kw.get("dtype")
    if not isinstance(dtype, DataType):
        raise TypeDeductionError(f"{op} needs dtype=pl.<DTYPE>")
    return dtype


def _binary(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    a = _tile(op, args, 0, "lhs")
    b = _tile(op, args, 1, "rhs")
    same = a.shape is b.shape  # (one object: operands of one shape, as the lowering shares decoded dims)
    if not same and (
        a.rank != b.rank or not all(_same_dim(x, y) or static_int(y) == 1 for x, y in zip(a.shape, b.shape))
    ):
        raise TypeDeductionError(f"{op}: operand shapes {fmt_shape(a.shape)} and {fmt_shape(b.shape)} differ")
    if a.dtype != b.dtype:
        raise TypeDeductionError(f"{op}: operand dtypes {a.dtype.label} and {b.dtype.label} differ")
    shape = a.shape if same else tuple(y if static_int(x) == 1 else x for x, y in zip(a.shape, b.shape))
    return _elementwise_result(a, shape=shape)


def _shift(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    """Shifts keep the lhs type; the shift amounts may have another integer width."""
    a = _tile(op, args, 0, "lhs")
    _tile(op, args, 1, "rhs")
    return _elementwise_result(a)


def _unary(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    return _elementwise_result(_tile(op, args, 0, "tile"))


def _scalar(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    t = _tile(op, args, 0, "tile")
    if not isinstance(type_of(args[1]), ScalarType):
        raise TypeDeductionError(f"{op}: operand 'scalar' must be a scalar")
    return _elementwise_result(t)


def _cast(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    t = _tile(op, args, 0, "tile")
    dtype = kw.get("target_type")
    if not isinstance(dtype, DataType):
        raise TypeDeductionError(f"{op} needs target_type=pl.<DTYPE>")
    if op == "tile.cast" and dtype is t.dtype:  # as PyPTO's deduction refuses it
        raise RefusedType(f"{op}: target_type {pypto_name(dtype)} equals input dtype; same-dtype cast is not a valid "
                          f"operation. Remove the cast or use a different target_type.")  # fmt: skip
    return _elementwise_result(t, dtype)


def _move(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    """A move takes the layout of a destination that has one of its own (the boxed spaces), else keeps
    the source's; L0B (Right) is row_major; `blayout=` / `slayout=` override. The fractal is the
    destination's, the valid shape and pad the source's."""
    t = _tile(op, args, 0, "tile")
    memory = kw.get("target_memory", MemorySpace.Vec)
    src = effective_view(t)
    b, sl, f = implicit_layouts(t.shape, memory)
    if (b, sl, f) == implicit_layouts(t.shape, None):
        b, sl, _ = tile_layouts(t)
    if memory is MemorySpace.Right:
        b = TileLayout.row_major
    b, sl = kw.get("blayout", b), kw.get("slayout", sl)
    view = TileView(valid_shape=src.valid_shape, blayout=b, slayout=sl, fractal=f, pad=src.pad)
    return make_tile_type(t.shape, t.dtype, memory, view)


def normalize_axis(op: str, axis: Expr, rank: int) -> int:
    a = static_int(axis)
    if a is None:
        raise TypeDeductionError(f"{op}: axes must be integer literals")
    if a < 0:
        a += rank
    if not 0 <= a < rank:
        raise TypeDeductionError(f"{op}: axis {static_int(axis)} is out of range for rank {rank}")
    return a


def _transpose(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    t = _tile(op, args, 0, "tile")
    a1 = normalize_axis(op, args[1], t.rank)
    a2 = normalize_axis(op, args[2], t.rank)
    shape = list(t.shape)
    shape[a1], shape[a2] = shape[a2], shape[a1]
    if len(args) > 3:
        _tile(op, args, 3, "scratch")
    # a fresh view with the default layouts, fully valid: the transposed [N, 1] of a [1, N] row is row_major
    return make_tile_type(tuple(shape), t.dtype, None, TileView())


def _transpose_view(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    t = _tile(op, args, 0, "tile")
    if t.rank < 2:
        raise TypeDeductionError(f"{op}: needs a tile of rank >= 2, got {fmt_shape(t.shape)}")
    shape = (*t.shape[:-2], t.shape[-1], t.shape[-2])
    valid = (*t.valid_shape[:-2], t.valid_shape[-1], t.valid_shape[-2])
    src = effective_view(t)
    # the transpose dual: each layout's major-ness flips, none_box stays (NZ <-> ZN, NN <-> ZZ, ND <-> DN)
    flip = {TileLayout.row_major: TileLayout.col_major, TileLayout.col_major: TileLayout.row_major}
    b, sl, _ = tile_layouts(t)
    view = TileView(valid_shape=valid, blayout=flip.get(b, b), slayout=flip.get(sl, sl), fractal=src.fractal,
                    pad=src.pad, compact=src.compact)  # fmt: skip
    return make_tile_type(shape, t.dtype, t.memory, view)


def _slice(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    t = _tile(op, args, 0, "tile")
    shape = tuple_elems(op, args[1], "shape")
    offset = tuple_elems(op, args[2], "offset")
    if len(shape) != t.rank or len(offset) != t.rank:
        raise TypeDeductionError(
            f"{op}: shape {fmt_shape(shape)} and offset {fmt_shape(offset)} must match the rank of {fmt_shape(t.shape)}"
        )
    requested = tuple_elems(op, args[3], "valid_shape") if len(args) > 3 else None
    # a window is valid where its source is (B-090: the slice's own deduction)
    window = window_valid(t.shape, t.valid_shape, offset, shape, requested)
    valid = None if all(exprs_equal(v, n) for v, n in zip(window, shape)) else window
    if len(args) > 4:
        dropped = {normalize_axis(op, a, t.rank) for a in tuple_elems(op, args[4], "drop_dims")}
        keep = [i for i in range(len(shape)) if i not in dropped]
        shape = tuple(shape[i] for i in keep)
        valid = tuple(valid[i] for i in keep) if valid else None
        if len(shape) < 2:  # tiles stay 2-D: unit axes in front
            units = (ConstInt(1),) * (2 - len(shape))
            shape, valid = units + shape, (units + valid) if valid else None
    # a window shares its source's layouts; a source without a view gives the layout the shape implies
    if t.view is not None:
        v = t.view
        view = TileView(valid_shape=valid or None, blayout=v.blayout, slayout=v.slayout, fractal=v.fractal,
                        pad=v.pad, compact=v.compact)  # fmt: skip
    else:
        view = TileView(valid_shape=valid or None, blayout=_implicit_column_layout(shape))
    if isinstance(kw.get("pad_value"), PadValue) and kw["pad_value"] is not PadValue.null:
        view = replaced(view, pad=kw["pad_value"])
    return make_tile_type(shape, t.dtype, None, view)


def _assemble(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    """The target's type, its view spelled out (an implicit Mat target keeps its NZ layout)."""
    t = _tile(op, args, 0, "target")
    _tile(op, args, 1, "source")
    return make_tile_type(t.shape, t.dtype, t.memory, replaced(effective_view(t), valid_shape=t.valid_shape))


def _read(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    t = _tile(op, args, 0, "tile")
    return ScalarType(t.dtype)


def _write(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    return _tile(op, args, 0, "tile")


def _row_reduce(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    t = _tile(op, args, 0, "tile")
    b, sl, _ = tile_layouts(t)
    if op == "tile.row_min" and (b, sl) != (TileLayout.row_major, TileLayout.none_box):
        raise TypeDeductionError(
            f"{op} needs a row-major (ND) input, got blayout={b.name}, slayout={sl.name}; "
            f"a [N, 1] column is col_major: reduce it with tile.col_min, or move it to a row-major tile first"
        )
    keep = kw.get("keepdim", True)
    valid = t.valid_shape
    if keep:
        shape: tuple[Expr, ...] = (*t.shape[:-1], ConstInt(1))
        vshape: tuple[Expr, ...] = (*valid[:-1], ConstInt(1))
    else:
        shape, vshape = tuple(t.shape[:-1]), tuple(valid[:-1])
    # a row reduction's column is col_major, a [1, 1] one included
    return make_tile_type(shape, t.dtype, None, TileView(valid_shape=vshape, blayout=TileLayout.col_major))


def _set_validshape(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    t = _tile(op, args, 0, "tile")
    if t.rank != 2:
        raise TypeDeductionError(f"{op}: only 2-D tiles, got {fmt_shape(t.shape)}")
    view = replaced(effective_view(t), valid_shape=(args[1], args[2]))
    return make_tile_type(t.shape, t.dtype, None, view, t.memref)


def contiguous_strides(shape: Sequence[Expr]) -> tuple[Expr, ...]:
    strides: list[Expr] = []
    acc: Expr = ConstInt(1)
    for d in reversed(shape):
        strides.append(acc)
        sa, sd = static_int(acc), static_int(d)
        acc = ConstInt(sa * sd) if sa is not None and sd is not None else BinOp("mul", d, acc)
    return tuple(reversed(strides))


def _tensor_view(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    src = _tensor(op, args, 0, "tensor")
    shape = tuple_elems(op, args[1], "shape") if len(args) > 1 else src.shape
    valid = tuple_elems(op, args[2], "valid_shape") if len(args) > 2 else ()
    layout = kw.get("layout", src.layout)
    return TensorType(
        shape, src.dtype, TensorView(contiguous_strides(shape), layout, valid), None, src.distributed
    )


def _tensor_create(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    shape = tuple_elems(op, args[0], "shape")
    dtype = kw.get("dtype")
    if not isinstance(dtype, DataType):
        raise TypeDeductionError(f"{op} needs dtype=pl.<DTYPE>")
    layout = kw.get("layout", TensorLayout.ND)
    view = None if layout is TensorLayout.ND else TensorView((), layout)
    return TensorType(shape, dtype, view)


def _expand(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    """row_expand* / col_expand* / expands: the result has the shape and view of the first operand."""
    return _elementwise_result(_tile(op, args, 0, "tile"))


def _fillpad(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    """The padded tile; the in-place form writes (and so names) its operand's buffer."""
    t = _tile(op, args, 0, "tile")
    pad = kw.get("pad_value", PadValue.zero)
    view = replaced(_inherited(t, None), pad=pad if isinstance(pad, PadValue) else PadValue.zero)
    return make_tile_type(t.shape, t.dtype, t.memory, view, t.memref)


def _scalar_cast(op: str, args: Sequence[Expr], kw: Kwargs) -> Type:
    dtype = kw.get("target_type")
    if not isinstance(dtype, DataType):
        raise TypeDeductionError(f"{op} needs a target dtype, e.g. pl.cast(x, pl.INDEX)")
    return ScalarType(dtype)


BINARY_OPS = ("tile.add", "tile.sub", "tile.mul", "tile.div", "tile.maximum", "tile.minimum")
SCALAR_OPS = ("tile.adds", "tile.subs", "tile.muls", "tile.divs", "tile.maxs", "tile.mins")
# same-shape element-wise ops without a scalar twin the parser dispatches to
MORE_BINARY_OPS = (
    "tile.fmod", "tile.and_", "tile.or_", "tile.part_add", "tile.part_mul",
    "tile.part_max", "tile.part_min",
)  # fmt: skip
MORE_SCALAR_OPS = ("tile.fmods", "tile.shls", "tile.shrs", "tile.ands", "tile.ors")
UNARY_OPS = (
    "tile.exp",
    "tile.neg",
    "tile.sqrt",
    "tile.abs",
    "tile.relu",
    "tile.log",
    "tile.recip",
    "tile.rsqrt",
    "tile.sin",
    "tile.cos",
    "tile.not_",
)
_EXPAND_SUFFIXES = ("", "_add", "_sub", "_mul", "_div", "_max", "_min", "_expdif")
EXPAND_OPS = (
    *(f"tile.{axis}_expand{sfx}" for axis in ("row", "col") for sfx in _EXPAND_SUFFIXES),
    "tile.expands",
)
ROW_REDUCE_OPS = ("tile.row_sum", "tile.row_max", "tile.row_min", "tile.row_prod")
SCALAR_FORM = dict(zip(BINARY_OPS, SCALAR_OPS))


def canonical_operands(op: str, args: tuple[Expr, ...]) -> tuple[str, tuple[Expr, ...]]:
    """An op call as the registry takes it, however it was written: a tile.load's valid shape is its shape when it
    names none, and a binary tile op whose second operand is a scalar is its scalar form (tile.add -> tile.adds)."""
    if op == "tile.load" and len(args) == 3:
        args = (*args, args[2])
    if op in SCALAR_FORM and len(args) > 1 and isinstance(type_of(args[1]), ScalarType):
        op = SCALAR_FORM[op]
    return op, args


_HIGH_PRECISION = ("tile.div", "tile.recip", "tile.log", "tile.rsqrt")

register(
    "tile.load",
    ("tensor", "offsets", "shapes", "valid_shape"),
    _load,
    3,
    ("target_memory", "transpose", "clamp"),
    memory=_from_keyword(),
)
register("tile.store", ("tile", "offsets", "output_tensor", "shapes"), _store, 3, ("atomic",))
register(
    "tile.create", ("shape",), _create, 1, ("dtype", "target_memory", "transpose", "flat_layout", "compact"),
    memory=_from_keyword(),
)  # fmt: skip
register("tile.full", ("shape", "value"), _full, 2, ("dtype",), kwarg_params=("value",), memory=VEC)
for _name in BINARY_OPS:
    hp = ("high_precision",) if _name in _HIGH_PRECISION else ()
    register(_name, ("lhs", "rhs"), _binary, kwargs=hp, memory=VEC)
for _name in MORE_BINARY_OPS:
    register(_name, ("lhs", "rhs"), _binary, memory=VEC)
for _name in ("tile.rem", "tile.xor", "tile.prelu"):
    register(_name, ("lhs", "rhs", "tmp"), _binary, 2, memory=VEC)
for _name in ("tile.shl", "tile.shr"):
    register(_name, ("lhs", "rhs"), _shift, memory=VEC)
for _name in SCALAR_OPS + MORE_SCALAR_OPS:
    register(_name, ("tile", "scalar"), _scalar, memory=VEC)
for _name in ("tile.rems", "tile.xors"):
    register(_name, ("tile", "scalar", "tmp"), _scalar, 2, memory=VEC)
for _name in UNARY_OPS:
    extra = ("tmp",) if _name == "tile.rsqrt" else ()
    hp = ("high_precision",) if _name in _HIGH_PRECISION else ()
    register(_name, ("tile", *extra), _unary, 1, hp, memory=VEC)
for _name in EXPAND_OPS:
    register(_name, ("tile", "operand", "tmp"), _expand, 2, memory=VEC)
for _name in ROW_REDUCE_OPS:
    register(_name, ("tile", "tmp_tile"), _row_reduce, 1, kwargs=("keepdim",), memory=VEC)
for _name in ("tile.fillpad", "tile.fillpad_inplace"):
    register(_name, ("tile",), _fillpad, kwargs=("pad_value",), memory=VEC)
register("tile.cast", ("tile",), _cast, kwargs=("target_type", "mode"), memory=VEC)
register("cast", ("value",), _scalar_cast, kwargs=("target_type", "mode"))
register("tile.move", ("tile",), _move, kwargs=("target_memory", "blayout", "slayout"))
register("tile.reshape", ("tile", "shape"), _reshape, memory=_from_operand)
register("tile.reinterpret_view", ("tile", "shape"), _reinterpret, 1, ("dtype",), kwarg_params=("shape",),
          memory=_from_operand)  # fmt: skip
register("tile.transpose", ("tile", "axis1", "axis2", "scratch"), _transpose, 3, memory=_from_operand)
register("tile.transpose_view", ("tile",), _transpose_view, memory=_from_operand)
register("tile.slice", ("tile", "shape", "offset", "valid_shape", "drop_dims"), _slice, 3, ("pad_value",),
          memory=_from_operand)  # fmt: skip
register("tile.assemble", ("target", "source", "offset"), _assemble, memory=_from_operand)
register("tile.read", ("tile", "indices"), _read)
register("tile.write", ("tile", "indices", "value"), _write, memory=VEC)
register("tile.matmul", ("lhs", "rhs"), _matmul, memory=ACC)
register("tile.matmul_acc", ("acc", "lhs", "rhs", "init_cond"), _matmul_acc, 3, memory=ACC)
register("tile.batch_matmul", ("lhs", "rhs"), _batch_matmul, memory=ACC)
register("tile.batch_matmul_acc", ("acc", "lhs", "rhs", "init_cond"), _batch_matmul_acc, 3, memory=ACC)
register("tile.set_validshape", ("tile", "valid_rows", "valid_cols"), _set_validshape, memory=_from_operand)
register("tensor.view", ("tensor", "shape", "valid_shape"), _tensor_view, 1, ("layout",))
register("tensor.create", ("shape",), _tensor_create, kwargs=("dtype", "layout", "manual_dep", "init_value"))


def _register_annotated() -> None:
    """Every other op the DSL names: its signature, and its annotation as its result type."""
    for name, sig in SIGNATURES.items():
        if name in REGISTRY or not name.startswith(
            ("tile.", "tensor.", "system.", "array.", "prefetch.", "pld.")
        ):
            continue
        params = tuple(p.rstrip("*") for p in sig if not p.endswith("**"))
        REGISTRY[name] = OpDef(
            name,
            params,
            0,
            frozenset(params),
            None,
            variadic=any(p.endswith("*") and not p.endswith("**") for p in sig),
            any_keyword=any(p.endswith("**") for p in sig),
        )
    # the top-level helpers that take a function and its arguments
    for name, params in (
        ("submit", ("func", "args")),
        ("spmd_submit", ("func", "args")),
        ("split_aiv", ("count",)),
    ):
        REGISTRY.setdefault(name, OpDef(name, params, 0, frozenset(), None, variadic=True, any_keyword=True))


_register_annotated()
