"""Functions with nothing to flatten skip the e-graph.

Most real kernels are already 2-D. For them no rule can choose anything but `Keep`, so building an
e-graph would only confirm it. `nothing_to_flatten` names the inputs some rule acts on; any of them
sends the function through the full pipeline. `tests/test_skip_trivial.py` checks the two paths agree.
"""

from __future__ import annotations

from pypto_egg.extract.lower import Lowerer

from ..egraph.encode import BMM_OPS, Encoding
from ..ir.expr import type_of
from ..ir.stmt import AssignStmt, ForStmt, Function, IfStmt, WhileStmt
from ..ir.types import MemorySpace, TensorType, TileType, is_nd_tile
from ..ir.walk import blocks, walk_calls

# ops on a tile a rule may rewrite although every tile is 2-D
_ACC_WINDOW_OPS = ("tile.slice", "tile.assemble")  # accumulator row windows (§O)


def nothing_to_flatten(fn: Function) -> bool:
    """No tile of rank > 2, no store into a tensor of rank > 2 (its partition window), no batched matmul,
    no 3-operand transpose (its scratch tile), and no window of an accumulator."""
    if any(is_nd_tile(p.var.type) for p in fn.params):
        return False
    for block in blocks(fn.body):
        for s in block:
            if isinstance(s, AssignStmt) and is_nd_tile(s.var.type):
                return False
            if isinstance(s, ForStmt | WhileStmt) and any(is_nd_tile(ia.var.type) for ia in s.iter_args):
                return False
            if isinstance(s, ForStmt | WhileStmt | IfStmt) and any(is_nd_tile(v.type) for v in s.return_vars):
                return False
    for _, call in walk_calls(fn.body):
        if not call.op.startswith("tile."):
            continue
        if call.op in BMM_OPS or is_nd_tile(call.type) or any(is_nd_tile(type_of(a)) for a in call.args):
            return False
        if call.op == "tile.store" and len(call.args) > 2:
            dst = type_of(call.args[2])
            if isinstance(dst, TensorType) and dst.rank > 2:
                return False
        if call.op == "tile.transpose" and len(call.args) == 3:
            return False
        if call.op in _ACC_WINDOW_OPS and call.args:
            t = type_of(call.args[0])
            if isinstance(t, TileType) and t.memory in (None, MemorySpace.Acc):
                return False
    return True


def retouch(fn: Function) -> Function:
    """What the lowering does to a function whose every plan is `Keep`: statements the reference re-creates
    lose their attrs (B-040, B-090). The same object when nothing changes."""
    lowerer = Lowerer(fn, Encoding(), {})
    out = lowerer.run()
    return out if lowerer.rewrote else fn
