"""Execute IR on numpy arrays: the semantic oracle every lowering is checked against.

Tensors are mutable buffers (a store writes in place and returns the same buffer); tiles are fresh arrays
of their physical shape. Elements outside a tile's valid region are zero here, and a store writes only the
valid region, so two equivalent programs leave identical outputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir.expr import (
    BinOp,
    Call,
    ConstBool,
    ConstFloat,
    ConstInt,
    DynDim,
    Expr,
    MakeTuple,
    TupleGetItem,
    UnaryOp,
    Var,
    type_of,
)
from ..ir.stmt import (
    AssertStmt,
    AssignStmt,
    BreakStmt,
    ContinueStmt,
    EvalStmt,
    ForStmt,
    Function,
    IfStmt,
    ParamDirection,
    Program,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    Stmt,
    WhileStmt,
    YieldStmt,
)
from ..ir.types import DataType, PadValue, ScalarType, TensorType, TileType
from .gather_ops import GATHER_SEMANTICS
from .machine_ops import SEMANTICS, BoundsError, InterpError, NotInterpretable, inside
from .shape_ops import SHAPE_SEMANTICS


def np_dtype(dt: DataType) -> np.dtype[Any]:
    return np.dtype(dt.numpy_name)


@dataclass
class _Signal:
    kind: str  # "yield" | "return" | "break" | "continue"
    values: tuple[Any, ...]


_SCALAR_BIN: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b, "min": min, "max": max,
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b, "and": lambda a, b: bool(a) and bool(b),
    "or": lambda a, b: bool(a) or bool(b),
}  # fmt: skip
_UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "tile.exp": np.exp, "tile.neg": np.negative, "tile.sqrt": np.sqrt, "tile.abs": np.abs,
    "tile.relu": lambda x: np.maximum(x, 0), "tile.log": np.log, "tile.recip": lambda x: 1 / x,
    "tile.rsqrt": lambda x: 1 / np.sqrt(x), "tile.sin": np.sin, "tile.cos": np.cos, "tile.not_": np.invert,
}  # fmt: skip
_BINARY: dict[str, Callable[[np.ndarray, Any], np.ndarray]] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "maximum": np.maximum,
    "minimum": np.minimum, "adds": np.add, "subs": np.subtract, "muls": np.multiply, "divs": np.divide,
    "maxs": np.maximum, "mins": np.minimum, "fmod": np.fmod, "fmods": np.fmod, "rem": np.remainder,
    "rems": np.remainder, "and_": np.bitwise_and, "ands": np.bitwise_and, "or_": np.bitwise_or, "ors": np.bitwise_or,
    "xor": np.bitwise_xor, "xors": np.bitwise_xor, "shl": np.left_shift, "shls": np.left_shift,
    "shr": np.right_shift, "shrs": np.right_shift, "part_add": np.add, "part_mul": np.multiply,
    "part_max": np.maximum, "part_min": np.minimum, "prelu": lambda x, a: np.where(x > 0, x, x * a),
}  # fmt: skip
# row_expand_* / col_expand_*: the vector broadcasts along the rows or columns of the tile
_EXPAND: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "": lambda x, v: np.broadcast_to(v, x.shape), "_add": np.add, "_sub": np.subtract, "_mul": np.multiply,
    "_div": np.divide, "_max": np.maximum, "_min": np.minimum, "_expdif": lambda x, v: np.exp(x - v),
}  # fmt: skip


class _Machine:
    def __init__(self, program: Program, strict: bool = False) -> None:
        self.program = program
        self.env: dict[int, Any] = {}
        self.dyn: dict[str, int] = {}
        self.strict = strict  # a slice or an assemble past its tile is a BoundsError, not clipped

    # ------------------------------------------------------------ scalars and dims

    def value(self, e: Expr) -> Any:
        if isinstance(e, Var):
            if e.uid not in self.env:
                raise InterpError(f"variable '{e.name}' is read before it is defined")
            return self.env[e.uid]
        if isinstance(e, ConstInt | ConstFloat | ConstBool):
            return e.value
        if isinstance(e, DynDim):
            if e.name not in self.dyn:
                raise InterpError(f"dynamic dimension {e.name} is not bound by any input shape")
            return self.dyn[e.name]
        if isinstance(e, BinOp):
            return _SCALAR_BIN[e.op](self.value(e.lhs), self.value(e.rhs))
        if isinstance(e, UnaryOp):
            v = self.value(e.operand)
            return (not v) if e.op == "not" else -v
        if isinstance(e, MakeTuple):
            return tuple(self.value(x) for x in e.elements)
        if isinstance(e, TupleGetItem):
            return self.value(e.tuple)[e.index]
        if isinstance(e, Call):
            return self.call(e)
        raise InterpError(f"cannot evaluate {e!r}")

    def ints(self, e: Expr | Sequence[Expr]) -> tuple[int, ...]:
        vals = self.value(e) if isinstance(e, MakeTuple) else tuple(self.value(x) for x in e)  # type: ignore[union-attr]
        return tuple(int(v) for v in vals)

    def valid_of(self, t: TileType) -> tuple[int, ...]:
        return self.ints(t.valid_shape)

    # ------------------------------------------------------------ ops

    def call(self, c: Call) -> Any:
        if c.is_function:
            callee = self.program.function(c.op)
            args = [self.value(a) for a in c.args]
            out = _Machine(self.program, self.strict).run_function(callee, args)
            return out[0] if len(out) == 1 else tuple(out)
        a = c.args
        op = c.op
        name = op.rsplit(".", 1)[-1]
        ty = c.type
        if op == "tile.load":
            return self.load(c)
        if op == "tile.store":
            return self.store(c)
        if op in _UNARY:
            with np.errstate(all="ignore"):
                return _UNARY[op](self.value(a[0])).astype(self.value(a[0]).dtype)
        if name in _BINARY:
            x, y = self.value(a[0]), self.value(a[1])
            with np.errstate(all="ignore"):
                return _BINARY[name](x, y).astype(x.dtype)
        if op == "tile.cast":
            return self.cast(self.value(a[0]), c.kwarg("target_type"), c.kwarg("mode", 0))
        if op == "cast":
            target = np_dtype(c.kwarg("target_type"))
            return float(self.value(a[0])) if target.kind == "f" else int(self.value(a[0]))
        if op.startswith(("tile.row_expand", "tile.col_expand")):
            x, v = self.value(a[0]), self.value(a[1])
            # the vector is the first column (row_expand) or row (col_expand) of its tile
            v = v[..., :1] if op.startswith("tile.row_expand") else v[..., :1, :]
            with np.errstate(all="ignore"):
                return np.array(_EXPAND[op.split("_expand", 1)[1]](x, v), dtype=x.dtype)
        if op in ("tile.fillpad", "tile.fillpad_inplace"):
            return self.fillpad(c)
        if op == "tile.slice":
            x, shape, offs = self.value(a[0]), self.ints(a[1]), self.ints(a[2])
            if self.strict:
                inside(op, "window", offs, shape, x.shape)
            return self.slice(x, shape, offs)
        if op == "tile.assemble":
            target, source, offs = self.value(a[0]), self.value(a[1]), self.ints(a[2])
            if self.strict:
                inside(op, "source", offs, source.shape, target.shape)
            return self.assemble(target, source, offs)
        if op in ("tile.matmul", "tile.batch_matmul"):
            return self.matmul(self.value(a[0]), self.value(a[1]), ty)
        if op in ("tile.matmul_acc", "tile.batch_matmul_acc"):
            prod = self.matmul(self.value(a[1]), self.value(a[2]), ty)
            init = bool(self.value(a[3])) if len(a) > 3 else False
            return prod if init else (self.value(a[0]) + prod).astype(prod.dtype)
        semantics = SHAPE_SEMANTICS.get(op) or SEMANTICS.get(op) or GATHER_SEMANTICS.get(op)
        if semantics is not None:
            return semantics(self, c)
        raise NotInterpretable(op, "the interpreter has no semantics for it")

    def fillpad(self, c: Call) -> np.ndarray:
        """Every element outside the operand's valid region takes the pad value."""
        src_t = type_of(c.args[0])
        assert isinstance(src_t, TileType)
        x = self.value(c.args[0]).copy()
        pad = c.kwarg("pad_value", PadValue.zero)
        if isinstance(pad, PadValue):
            info = np.finfo(x.dtype) if x.dtype.kind == "f" else np.iinfo(x.dtype)
            pad = {PadValue.max: info.max, PadValue.min: info.min}.get(pad, 0)
        keep = np.zeros(x.shape, dtype=bool)
        keep[tuple(slice(0, v) for v in self.valid_of(src_t))] = True
        x[~keep] = pad
        return x

    def load(self, c: Call) -> np.ndarray:
        src = self.value(c.args[0])
        offs, shapes = self.ints(c.args[1]), self.ints(c.args[2])
        valid = self.ints(c.args[3]) if len(c.args) > 3 else shapes
        if c.kwarg("clamp", False):  # the read narrowed to the source's edge
            valid = tuple(max(0, min(v, n - o)) for v, o, n in zip(valid, offs, src.shape))
        ty = c.type
        assert isinstance(ty, TileType)
        if any(o < 0 or o + v > n for o, v, n in zip(offs, valid, src.shape)):
            raise BoundsError(
                f"tile.load window {list(offs)}+{list(valid)} runs past tensor {list(src.shape)}"
            )
        window = np.zeros(shapes, dtype=src.dtype)
        window[tuple(slice(0, v) for v in valid)] = src[tuple(slice(o, o + v) for o, v in zip(offs, valid))]
        return window.reshape(self.ints(ty.shape))

    def store(self, c: Call) -> np.ndarray:
        """Write the tile's valid region: into the partition box when one is given; else a tile of lower rank
        lands on the tensor's trailing axes, or (when its rows exceed the axis they land on) is written as
        consecutive row-major rows."""
        tile_t = type_of(c.args[0])
        assert isinstance(tile_t, TileType)
        data = self.value(c.args[0])
        dst = self.value(c.args[2])
        offs = self.ints(c.args[1])
        if (
            len(offs) > dst.ndim and len(c.args) <= 3
        ):  # one offset per tile axis: the extra ones address unit axes
            extra, offs = offs[: len(offs) - dst.ndim], offs[len(offs) - dst.ndim :]
            if any(extra):
                raise BoundsError(f"tile.store offsets {list(extra)} address axes of extent 1 that tensor "
                                  f"{list(dst.shape)} lacks")  # fmt: skip
        valid = self.valid_of(tile_t)
        region = data[tuple(slice(0, v) for v in valid)]
        if len(c.args) > 3:
            window = self.ints(c.args[3])
            aligned = (1,) * (len(window) - len(valid)) + valid
            if (
                len(aligned) == len(window)
                and int(np.prod(window)) != region.size
                and all(v <= w for v, w in zip(aligned, window))
            ):  # a tile narrower than its window writes its valid rows at the window's origin
                window = aligned
        elif len(valid) < dst.ndim:
            window = (1,) * (dst.ndim - len(valid)) + valid  # the tile's dims land on the trailing axes
            if any(w > n for w, n in zip(window, dst.shape)):  # its rows span several axes: a row-major run
                return self.store_rows(region.reshape(-1, valid[-1]) if valid else region, offs, dst)
        elif len(valid) > dst.ndim:  # a tile of higher rank than its tensor: leading axes merge row-major
            k = len(valid) - dst.ndim
            window = (int(np.prod(valid[: k + 1])), *valid[k + 1 :])
        else:
            window = valid
        if int(np.prod(window)) != region.size:
            raise InterpError(
                f"tile.store partition {list(window)} does not hold the {list(valid)} valid tile"
            )
        if len(window) != dst.ndim or any(o < 0 or o + w > n for o, w, n in zip(offs, window, dst.shape)):
            raise BoundsError(
                f"tile.store window {list(offs)}+{list(window)} runs past tensor {list(dst.shape)}"
            )
        dst[tuple(slice(o, o + w) for o, w in zip(offs, window))] = region.reshape(window)
        return dst

    @staticmethod
    def store_rows(rows: np.ndarray, offs: tuple[int, ...], dst: np.ndarray) -> np.ndarray:
        if any(not 0 <= o < n for o, n in zip(offs, dst.shape)):
            raise BoundsError(f"tile.store offsets {list(offs)} are outside tensor {list(dst.shape)}")
        flat = dst.reshape(-1, dst.shape[-1])
        r0 = 0
        for o, n in zip(offs[:-1], dst.shape[:-1]):
            r0 = r0 * n + o
        c0 = offs[-1]
        if r0 + rows.shape[0] > flat.shape[0] or c0 + rows.shape[1] > flat.shape[1]:
            raise BoundsError(
                f"tile.store of {rows.shape[0]}x{rows.shape[1]} rows at {list(offs)} runs past tensor {list(dst.shape)}"
            )
        flat[r0 : r0 + rows.shape[0], c0 : c0 + rows.shape[1]] = rows
        return dst

    @staticmethod
    def slice(x: np.ndarray, shape: tuple[int, ...], offs: tuple[int, ...]) -> np.ndarray:
        out = np.zeros(shape, dtype=x.dtype)
        src = x[tuple(slice(o, o + s) for o, s in zip(offs, shape))]
        out[tuple(slice(0, n) for n in src.shape)] = src
        return out

    @staticmethod
    def assemble(target: np.ndarray, source: np.ndarray, offs: tuple[int, ...]) -> np.ndarray:
        out = target.copy()
        region = out[tuple(slice(o, o + s) for o, s in zip(offs, source.shape))]
        region[...] = source[tuple(slice(0, n) for n in region.shape)]
        return out

    @staticmethod
    def matmul(x: np.ndarray, y: np.ndarray, ty: Any) -> np.ndarray:
        dt = np_dtype(ty.dtype)
        work = np.float64 if dt.kind == "f" else np.int64
        return np.matmul(x.astype(work), y.astype(work)).astype(dt)

    @staticmethod
    def cast(x: np.ndarray, dtype: DataType, mode: int) -> np.ndarray:
        target = np_dtype(dtype)
        if target.kind in "iu" and x.dtype.kind == "f":
            rounding = {3: np.floor, 4: np.ceil, 5: np.trunc}.get(mode, np.rint)
            with np.errstate(all="ignore"):
                return rounding(x).astype(target)
        return x.astype(target)

    # ------------------------------------------------------------ statements

    def run_function(self, fn: Function, args: Sequence[Any]) -> list[Any]:
        if fn.source is not None:
            raise InterpError(
                f"function '{fn.name}' was kept as its text (the DSL's reader cannot read it), so it cannot be "
                f"interpreted; interpret the functions it calls instead"
            )
        for p, a in zip(fn.params, args):
            self.bind_dyn(p.var.type, a)
            self.env[p.var.uid] = a
        sig = self.block(fn.body)
        return list(sig.values) if sig is not None and sig.kind == "return" else []

    def bind_dyn(self, ty: Any, value: Any) -> None:
        if isinstance(ty, TensorType | TileType) and isinstance(value, np.ndarray):
            for d, n in zip(ty.shape, value.shape):
                if isinstance(d, DynDim) and self.dyn.setdefault(d.name, n) != n:
                    raise InterpError(f"dynamic dimension {d.name} bound to both {self.dyn[d.name]} and {n}")

    def block(self, stmts: Sequence[Stmt]) -> _Signal | None:
        for s in stmts:
            sig = self.stmt(s)
            if sig is not None:
                return sig
        return None

    def stmt(self, s: Stmt) -> _Signal | None:
        if isinstance(s, AssignStmt):
            self.env[s.var.uid] = self.value(s.value)
        elif isinstance(s, EvalStmt):
            self.value(s.expr)
        elif isinstance(s, SeqStmts):
            return self.block(s.stmts)
        elif isinstance(s, ScopeStmt):
            return self.block(s.body)
        elif isinstance(s, YieldStmt):
            return _Signal("yield", tuple(self.value(v) for v in s.values))
        elif isinstance(s, BreakStmt | ContinueStmt):
            return _Signal("break" if isinstance(s, BreakStmt) else "continue", ())
        elif isinstance(s, AssertStmt):
            if not self.value(s.condition):
                raise InterpError(f"assertion failed: {s.message or 'assert'}")
        elif isinstance(s, ReturnStmt):
            return _Signal("return", tuple(self.value(v) for v in s.values))
        elif isinstance(s, IfStmt):
            body = s.then_body if self.value(s.condition) else (s.else_body or ())
            sig = self.block(body)
            if sig is not None and sig.kind in ("return", "break", "continue"):
                return sig
            if s.return_vars:
                if sig is None:
                    raise InterpError("an if statement with return values ended a branch without pl.yield_")
                for rv, v in zip(s.return_vars, sig.values):
                    self.env[rv.uid] = v
        elif isinstance(s, ForStmt):
            carried = [self.value(ia.init) for ia in s.iter_args]
            for i in range(int(self.value(s.start)), int(self.value(s.stop)), int(self.value(s.step))):
                self.env[s.loop_var.uid] = i
                for ia, v in zip(s.iter_args, carried):
                    self.env[ia.var.uid] = v
                sig = self.block(s.body)
                if sig is not None and sig.kind == "return":
                    return sig
                if sig is not None and sig.kind == "break":
                    break
                if s.iter_args and (sig is None or sig.kind != "continue"):
                    if sig is None:
                        raise InterpError("a loop with init_values ended its body without pl.yield_")
                    carried = list(sig.values)
            for rv, v in zip(s.return_vars, carried):
                self.env[rv.uid] = v
        elif isinstance(s, WhileStmt):
            carried = [self.value(ia.init) for ia in s.iter_args]
            while True:
                for ia, v in zip(s.iter_args, carried):
                    self.env[ia.var.uid] = v
                if not self.value(s.condition):
                    break
                sig = self.block(s.body)
                if sig is not None and sig.kind == "return":
                    return sig
                if sig is None:
                    raise InterpError("a pl.while_ loop ended its body without pl.yield_")
                carried = list(sig.values)
            for rv, v in zip(s.return_vars, carried):
                self.env[rv.uid] = v
        return None


def run(
    program: Program,
    function_name: str,
    inputs: dict[str, Any],
    dyn: dict[str, int] | None = None,
    strict: bool = False,
) -> dict[str, Any]:
    """Run one function; returns {"return": [values...], <Out/InOut param name>: final array, ...}.

    Tensor inputs are copied, so the caller's arrays are never written. `dyn` gives the dynamic dims that no
    input shape binds (those only the body's types name). `strict`: a slice or an assemble whose box reaches
    outside its tile raises BoundsError (as a load or a store past its tensor always does) rather than being
    clipped.
    """
    fn = program.function(function_name)
    args: list[Any] = []
    for p in fn.params:
        if p.var.name not in inputs:
            raise InterpError(f"missing input '{p.var.name}' for function '{function_name}'")
        v = inputs[p.var.name]
        if isinstance(p.var.type, TensorType | TileType):
            v = np.array(v, dtype=np_dtype(p.var.type.dtype), copy=True)
        args.append(v)
    m = _Machine(program, strict)
    m.dyn = dict(dyn or {})
    rets = m.run_function(fn, args)
    out: dict[str, Any] = {"return": rets}
    for p, a in zip(fn.params, args):
        if p.direction is not ParamDirection.In:
            out[p.var.name] = a
    return out


def random_inputs(fn: Function, seed: int = 0, dyn: dict[str, int] | None = None,
                  scalars: dict[str, Any] | None = None, unique: bool = False) -> dict[str, Any]:  # fmt: skip
    """Random arrays for every tensor/tile parameter (Out tensors start filled with a sentinel).

    Scalar parameters come first (1 unless `scalars` gives one), so a shape that names a scalar parameter
    takes its value; a parameter of another kind (a communication context, a pointer) is an opaque None.
    `unique`: each element of every input a value no other element has, as far as its dtype can tell them apart,
    so any element moved to the wrong place shows (the checker's first input)."""
    rng = np.random.default_rng(seed)
    taken = 0  # the distinct values handed out so far (`unique`)
    scalars = scalars or {}
    m = _Machine(Program("_", (fn,)))
    m.dyn = dict(dyn or {})
    out: dict[str, Any] = {}
    for p in fn.params:
        if isinstance(p.var.type, ScalarType):
            out[p.var.name] = scalars.get(p.var.name, 1)
            m.env[p.var.uid] = out[p.var.name]
    for p in fn.params:
        ty = p.var.type
        if isinstance(ty, TensorType | TileType):
            shape = m.ints(ty.shape)
            dt = np_dtype(ty.dtype)
            if p.direction is ParamDirection.Out:
                out[p.var.name] = np.full(shape, -7).astype(dt)
            elif unique and dt.kind in "fiu":
                out[p.var.name] = _distinct(shape, dt, taken)
                taken += out[p.var.name].size
            elif dt.kind == "f":
                out[p.var.name] = rng.uniform(-2, 2, size=shape).astype(dt)
            elif dt.kind == "b":
                out[p.var.name] = rng.integers(0, 2, size=shape).astype(dt)
            elif dt.kind == "u":
                out[p.var.name] = rng.integers(0, 16, size=shape).astype(dt)
            else:
                out[p.var.name] = rng.integers(-8, 8, size=shape).astype(dt)
        elif p.var.name not in out:
            out[p.var.name] = None
    return out


def _distinct(shape: tuple[int, ...], dt: np.dtype[Any], start: int) -> np.ndarray:
    """Consecutive values from `start`, wrapped where the dtype runs out of exact ones (a float16 holds every
    integer up to 2,048; an integer type its own range)."""
    n = int(np.prod(shape))
    k = np.arange(start, start + n, dtype=np.int64)
    if dt == np.float16:
        k = k % 2048
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        k = (
            info.min + (k - info.min) % (int(info.max) - int(info.min) + 1)
            if dt.kind == "i"
            else k % (int(info.max) + 1)
        )
    return k.astype(dt).reshape(shape)


def outputs_equal(a: dict[str, Any], b: dict[str, Any], rtol: float = 1e-5, atol: float = 1e-5) -> bool:
    return not output_differences(a, b, rtol, atol)


def output_differences(
    a: dict[str, Any], b: dict[str, Any], rtol: float = 1e-5, atol: float = 1e-5
) -> list[str]:
    """Human-readable differences between two `run` results (exact for integers, tight for floats)."""
    diffs: list[str] = []
    if a.keys() != b.keys():
        return [f"output names differ: {sorted(a)} vs {sorted(b)}"]
    for k in a:
        xs, ys = (a[k], b[k]) if k == "return" else ([a[k]], [b[k]])
        if len(xs) != len(ys):
            diffs.append(f"{k}: {len(xs)} vs {len(ys)} values")
            continue
        for i, (x, y) in enumerate(zip(xs, ys)):
            x, y = np.asarray(x), np.asarray(y)
            if x.shape != y.shape:
                diffs.append(f"{k}[{i}]: shape {x.shape} vs {y.shape}")
            elif x.dtype.kind == "f":
                if not np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True):
                    diffs.append(f"{k}[{i}]: max abs diff {np.nanmax(np.abs(x - y))}")
            elif not np.array_equal(x, y):
                diffs.append(f"{k}[{i}]: {int(np.sum(x != y))} elements differ")
    return diffs
