"""The differences docs/differences.md lists, each recognised by a check of its own: where a pass's output differs
from pypto-egg's answer only in ways a listed difference accounts for, which ones; and, for an output that is wrong,
the listed difference it came about by."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..errors import TypeDeductionError
from ..extract.term import Term
from ..ir.expr import Call, Expr, Var, exprs_equal
from ..ir.ops import deduce_type
from ..ir.stmt import AssignStmt, ForStmt, Function, Stmt, WhileStmt
from ..ir.tiles import effective_view
from ..ir.types import TileType
from ..ir.walk import blocks, walk_calls
from .diff import OPERAND, STATEMENT, TYPE, Site

# what each listed difference is, in the words of a verdict's detail
NAMES = {
    "D-1": "an annotation stating a flattened 2-D shape for an N-D call, taken as it is (the build flattens the "
    "call again)",
    "D-2": "a store that already carries its partition window, kept (the build appends a fifth operand)",
    "D-5": "the specification's newer behaviour (store partition windows from the tile's valid dims, packed or "
    "row-windowed accumulators, loop-carry repair), which the build predates",
    "D-6": "a re-created 2-D statement keeps the type it was printed with (the build re-deduces it, layouts and "
    "buffers included)",
    "D-7": "a legacy transpose read only by batched matmuls becomes the zero-copy transpose_view of its source (the "
    "build drops it)",
    "D-8": "a reshape to a rank > 2 shape is flattened like every N-D tile op (the build leaves it N-D)",
}

# the plans by which pypto-egg packs, windows or re-seeds an accumulator where the build stages it (§K-§Q)
_ACCUMULATOR_PLANS = frozenset({"AllocAcc", "PackedDrain", "Rewindow", "RowDrain"})
_ACCUMULATOR_MODES = frozenset({"acc-rows", "acc-cols", "packed-producer"})


@dataclass(frozen=True)
class Listed:
    names: tuple[str, ...]

    @property
    def reason(self) -> str:
        return ", ".join(self.names)

    @property
    def detail(self) -> str:
        return "; ".join(f"{n}: {NAMES[n]}" for n in self.names)


def listed_differences(
    before: Function, theirs: Function, sites: Sequence[Site], plans: Sequence[Term]
) -> Listed | None:
    """The listed differences that account for every place the output differs from pypto-egg's answer, or None
    when some place is none of theirs."""
    found: set[str] = set()
    accumulators = _packs_accumulators(plans)
    for site in sites:
        name = _accounted(site, before, theirs, accumulators)
        if name is None:
            return None
        found.add(name)
    return Listed(tuple(sorted(found))) if found else None


def _accounted(site: Site, before: Function, theirs: Function, accumulators: bool) -> str | None:
    if accumulators:
        return "D-5"  # packed, windowed or staged: every statement of the lowering differs
    ours, other = site.ours, site.theirs
    if site.kind == OPERAND and _is_store(ours) and _is_store(other) and site.operand == 3:
        return "D-5"  # the partition window
    if site.kind == TYPE and _carries(theirs) and _only_valid_shape(site):
        return "D-5"  # a repaired loop carry's narrowed valid shape (§Q)
    if site.kind == TYPE and _only_layout(site):
        return "D-6"
    if site.kind == STATEMENT and _annotated_flat(before) and _reshapes_again(theirs):
        return "D-1"
    return None


def came_about_by(before: Function, ours: Function, theirs: Function, stmt: Stmt | None) -> tuple[str, ...]:
    """The listed differences by which a wrong output came about, where they tell (named in the verdict's
    detail): the differing behaviour of the build's that the output shows."""
    found = []
    if _annotated_flat(before) and _reshapes_again(theirs):
        found.append("D-1")
    if any(c.op == "tile.store" and len(c.args) > 4 for _, c in walk_calls(theirs.body)):
        found.append("D-2")
    if isinstance(stmt, AssignStmt) and isinstance(stmt.value, Call) and stmt.value.op == "tile.store":
        found.append("D-5")  # a store's partition window
    if _dropped_transpose(before):
        found.append("D-7")
    if any(c.op == "tile.reshape" and isinstance(c.type, TileType) and c.type.rank > 2
           for _, c in walk_calls(theirs.body)):  # fmt: skip
        found.append("D-8")
    return tuple(found)


def _packs_accumulators(plans: Sequence[Term]) -> bool:
    return any(
        p.op in _ACCUMULATOR_PLANS or (p.op == "BatchMatmul" and str(p.field("mode")) in _ACCUMULATOR_MODES)
        for p in plans
    )


def _is_store(s: Stmt | None) -> bool:
    return isinstance(s, AssignStmt) and isinstance(s.value, Call) and s.value.op == "tile.store"


def _types(site: Site) -> tuple[TileType, TileType] | None:
    a, b = site.ours, site.theirs
    if isinstance(a, AssignStmt) and isinstance(b, AssignStmt):
        ta, tb = a.var.type, b.var.type
        if isinstance(ta, TileType) and isinstance(tb, TileType):
            return ta, tb
    if isinstance(a, ForStmt | WhileStmt) and isinstance(b, ForStmt | WhileStmt):
        pairs = [(x.var.type, y.var.type) for x, y in zip(a.iter_args, b.iter_args)]
        pairs += [(x.type, y.type) for x, y in zip(a.return_vars, b.return_vars)]
        differing = [
            (x, y) for x, y in pairs if x != y and isinstance(x, TileType) and isinstance(y, TileType)
        ]
        if differing:
            return differing[0]  # type: ignore[return-value]
    return None


def _only_layout(site: Site) -> bool:
    """Two tile types of one shape, dtype and valid shape that differ in layouts, buffer or memory only."""
    pair = _types(site)
    if pair is None:
        return False
    a, b = pair
    return _same_dims(a.shape, b.shape) and a.dtype == b.dtype and _same_dims(a.valid_shape, b.valid_shape)


def _only_valid_shape(site: Site) -> bool:
    pair = _types(site)
    if pair is None:
        return False
    a, b = pair
    va, vb = effective_view(a), effective_view(b)
    return (
        _same_dims(a.shape, b.shape)
        and a.dtype == b.dtype
        and not _same_dims(a.valid_shape, b.valid_shape)
        and (va.blayout, va.slayout) == (vb.blayout, vb.slayout)
    )


def _same_dims(a: tuple[Expr, ...], b: tuple[Expr, ...]) -> bool:
    """Dims equal by value (two variables, each side's own, taken as the same dim)."""
    return len(a) == len(b) and all(
        exprs_equal(x, y) or (isinstance(x, Var) and isinstance(y, Var)) for x, y in zip(a, b)
    )


def _carries(fn: Function) -> bool:
    return any(isinstance(s, ForStmt | WhileStmt) and s.iter_args for body in blocks(fn.body) for s in body)


def _annotated_flat(fn: Function) -> bool:
    """D-1's input: an N-D call whose annotation states its flattened 2-D shape."""
    for stmt, call in _assigned_tile_calls(fn):
        try:
            deduced = deduce_type(call.op, call.args, dict(call.kwargs), call.type)
        except TypeDeductionError:
            continue
        if isinstance(deduced, TileType) and deduced.rank > 2 and getattr(stmt.var.type, "rank", 0) == 2:
            return True
    return False


def _reshapes_again(fn: Function) -> bool:
    return any(c.op == "tile.reshape" for _, c in walk_calls(fn.body))


def _dropped_transpose(fn: Function) -> bool:
    """D-7's input: a legacy transpose whose every use is a batched matmul's operand."""
    legacy = {
        s.var.uid for s, c in _assigned_tile_calls(fn) if c.op == "tile.transpose" and len(c.args) in (3, 4)
    }
    if not legacy:
        return False
    used_else = set()
    for _, call in walk_calls(fn.body):
        uses = {a.uid for a in call.args if isinstance(a, Var)} & legacy
        if uses and call.op not in ("tile.batch_matmul", "tile.batch_matmul_acc"):
            used_else |= uses
    return bool(legacy - used_else)


def _assigned_tile_calls(fn: Function) -> Iterator[tuple[AssignStmt, Call]]:
    for stmt, call in walk_calls(fn.body):
        if isinstance(stmt, AssignStmt) and call.op.startswith("tile."):
            yield stmt, call
