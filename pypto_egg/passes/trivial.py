"""Functions with nothing to flatten skip the e-graph.

Most real kernels are already 2-D. For them no rule can choose anything but `Keep`, so building an
e-graph would only confirm it. `nothing_to_flatten` names the inputs some rule acts on; any of them
sends the function through the full pipeline. `tests/test_skip_trivial.py` checks the two paths agree.
"""

from __future__ import annotations

from collections.abc import Callable

from pypto_egg.extract.lower import Lowerer

from ..egraph.encode import BMM_OPS, Encoding
from ..ir.expr import Call, tile_operand_types, type_of
from ..ir.stmt import AssignStmt, EvalStmt, ForStmt, Function, IfStmt, WhileStmt
from ..ir.types import MemorySpace, TensorType, TileType, is_nd_tile
from ..ir.walk import blocks
from .verify import VERIFIED_FORMS, form_holds

# ops on a tile a rule may rewrite although every tile is 2-D
_ACC_WINDOW_OPS = ("tile.slice", "tile.assemble")  # accumulator row windows (§O)


def nothing_to_flatten(fn: Function) -> bool:
    """No tile of rank > 2 (not even as an operand or result of another op: then no precondition has anything
    to check either), no store into a tensor of rank > 2 (its partition window), no batched matmul, no
    3-operand transpose (its scratch tile), and no window of an accumulator."""
    return _scan(fn) is not None


def lowered_if_trivial(fn: Function) -> tuple[Function, bool] | None:
    """What the lowering makes of a function with nothing to flatten, or None when some rule acts on it (one walk
    tells both), with whether that walk saw TileOps2D hold on it, as passes/verify.py checks it, when it is
    returned as it is. Every plan of such a function is `Keep`: statements the reference re-creates lose their attrs
    (B-040, B-090) and take the MemRef an in-place op's deduction states. The same object when nothing changes, as
    when no tile op has attrs to lose (a load keeps its own) and none reads a tile that binds a MemRef: then the
    lowering is not run at all."""
    scan = _scan(fn)
    if scan is None:
        return None
    retouched, holds_2d = scan
    if not retouched:
        return fn, holds_2d
    lowerer = Lowerer(fn, Encoding(), {})
    out = lowerer.run()
    return (out, False) if lowerer.rewrote else (fn, holds_2d)


def _scan(fn: Function) -> tuple[bool, bool] | None:
    """None when some rule acts on the function (see `nothing_to_flatten`); else whether the lowering may retouch
    one of its statements (a tile op with attrs other than a load, or one reading a tile that binds a MemRef), and
    whether TileOps2D holds: no N-D tile is left to it, so only a transpose without its four operands (one of
    three goes through the e-graph) or an assemble's offset that is not a (row, col) literal can break it (B-211,
    B-212). Most functions of a model are such 2-D kernels: only the ops `_ACTED_ON` names have a second look."""
    if any(is_nd_tile(p.var.type) for p in fn.params):
        return None
    retouched = False
    holds_2d = True
    for block in blocks(fn.body):
        for s in block:
            value: object
            if type(s) is AssignStmt:
                if is_nd_tile(s.var.type):
                    return None
                value = s.value
            elif type(s) is EvalStmt:
                value = s.expr
            else:
                if isinstance(s, ForStmt | WhileStmt) and any(is_nd_tile(ia.var.type) for ia in s.iter_args):
                    return None
                if isinstance(s, ForStmt | WhileStmt | IfStmt) and any(
                    is_nd_tile(v.type) for v in s.return_vars
                ):
                    return None
                continue
            if type(value) is not Call or value.is_function:
                continue
            nd_operand = memref = False
            for t in tile_operand_types(value.args):
                if len(t.shape) > 2:
                    nd_operand = True
                if t.memref is not None:
                    memref = True
            op = value.op
            if op.startswith("tile."):
                acted_on = _ACTED_ON.get(op)
                if nd_operand or is_nd_tile(value.type) or (acted_on is not None and acted_on(value)):
                    return None
                if memref or (value.attrs and op != "tile.load"):
                    retouched = True
                if op in VERIFIED_FORMS and not form_holds(value):
                    holds_2d = False
            elif nd_operand or is_nd_tile(value.type):
                return None  # (an N-D tile the preconditions look at, B-010)
    return retouched, holds_2d


def _store_into_nd(call: Call) -> bool:
    """A store into a tensor of rank > 2 gets its partition window (B-056)."""
    if len(call.args) <= 2:
        return False
    dst = type_of(call.args[2])
    return isinstance(dst, TensorType) and dst.rank > 2


def _window_of_acc(call: Call) -> bool:
    """A window of an accumulator (or of a tile not yet placed) may be row-packed (§O)."""
    if not call.args:
        return False
    t = type_of(call.args[0])
    return isinstance(t, TileType) and t.memory in (None, MemorySpace.Acc)


# the tile ops some rule acts on although none of their operands or results is an N-D tile, each with what tells
_ACTED_ON: dict[str, Callable[[Call], bool]] = {
    **{op: lambda _call: True for op in BMM_OPS},
    "tile.store": _store_into_nd,
    "tile.transpose": lambda call: len(call.args) == 3,  # its scratch tile
    **{op: _window_of_acc for op in _ACC_WINDOW_OPS},
}
