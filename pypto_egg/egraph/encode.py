"""Encode one function's tile statements as fact rows for the rules in rules/encode.egg.

Every dimension expression and dimension list is interned once (the facts form a DAG, so the
e-graph starts shared); every tile-op statement gets an id and one request row. The control-flow
skeleton stays in Python: the lowering walks the same statements and reads each one's plan.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from ..backend import DEFAULT_FRACTAL_ROWS
from ..errors import InternalError
from ..ir.expr import (
    ARITH_OPS,
    BinOp,
    Call,
    ConstFloat,
    ConstInt,
    DynDim,
    Expr,
    MakeTuple,
    Var,
    static_int,
    type_of,
)
from ..ir.stmt import (
    AssignStmt,
    Stmt,
)
from ..ir.types import MemorySpace, TensorType, TileType
from ..rules.schema import ROW
from .accel.fact_folder import FactFolder
from .accel.fact_table import layout
from .rules import fact_relations

# relation name -> column count, as rules/encode.egg declares them
RELATIONS: dict[str, int] = fact_relations()
BMM_OPS = ("tile.batch_matmul", "tile.batch_matmul_acc")
_ROW_FORMATS = {n: "\t".join(["%s"] * n) + "\n" for n in set(RELATIONS.values())}  # arity -> one row
_LAYOUT = layout()


def _stored_format(rel: str) -> tuple[str, bool]:
    """One row of a packed relation in its table's file, and whether it is a %-format (the relation's cells lead
    the row in order: one C-level format of all of them) or a str.format template (its cells placed by sort)."""
    stored = _LAYOUT.relations[rel]
    template = "\t".join((rel, *("" if c == '""' else c for c in _LAYOUT.pads(rel)))) + "\n"
    if stored.places == tuple(range(len(stored.places))):
        return template.format(*["%s"] * len(stored.places)), True
    return template, False


# a relation a fact table stores -> one row of it there
_STORED_FORMATS = {rel: _stored_format(rel) for rel in _LAYOUT.relations if rel in RELATIONS}


def non_contiguous(valid: tuple[int, ...], dims: tuple[int, ...]) -> bool:
    """Whether a valid box is not row-major contiguous over dims (B-042, B-012d): past the leading axes of 1, the
    first other axis is the boundary and every axis after it but the last must be whole. Ranks that differ count
    as contiguous."""
    if len(valid) != len(dims):
        return False
    lead = 0
    while lead < len(valid) - 1 and valid[lead] == 1:
        lead += 1
    return any(valid[j] != dims[j] for j in range(lead + 1, len(valid) - 1))


def overflows(tile: tuple[int, ...], tensor: tuple[int, ...]) -> bool:
    """Whether some dim of a tile exceeds the tensor's it lands on, the two right-aligned (B-053: a tile's leading
    axes the tensor lacks are padding and never overflow)."""
    return any(x > y for x, y in zip(reversed(tile), reversed(tensor)))


def fold_offsets(offsets: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, int]:
    """Static N-D offsets over a shape of their rank as the (row, column) of the shape flattened to 2-D (B-042,
    B-070): the leading offsets fold row-major, over every dim but the first and the last; the last is the column."""
    row = offsets[0]
    for o, d in zip(offsets[1:-1], shape[1:-1]):
        row = row * d + o
    return row, offsets[-1]


def _pages_at_most(shape: tuple[Expr, ...], fractal_rows: int) -> int:
    """How many pages a tile of this shape can be cut into: its batch product when N-D, its rows over the
    fractal height when 2-D (a row window); 0 when a dim that counts is dynamic."""
    if len(shape) == 2:
        rows = shape[0]
        return rows.value // fractal_rows if type(rows) is ConstInt else 0
    n = 1
    for d in shape[:-2]:
        if type(d) is not ConstInt:
            return 0
        n *= d.value
    return n


def tuple_items(e: Expr) -> tuple[Expr, ...]:
    if not isinstance(e, MakeTuple):
        raise InternalError(f"expected a literal tuple operand, got {type(e).__name__}")
    return e.elements


@dataclass
class BmmInfo:
    """What the lowering of one batched matmul needs from the IR: each operand's levels (the operand, then each
    reshape it was made by: which one the matmul reads is the rules' BmmPeeled) and the consumed store."""

    levels: tuple[tuple[Expr, ...], tuple[Expr, ...]]
    acc: Expr | None
    init_cond: Expr | None
    store: AssignStmt | None


@dataclass
class Encoding:
    """The facts of one function and the tables that map terms back to IR."""

    rows: dict[str, list[tuple[Any, ...]]] = field(default_factory=lambda: defaultdict(list))
    symbols: dict[str, Expr] = field(default_factory=dict)  # DSym name -> the IR scalar it stands for
    stmt_ids: dict[int, int] = field(default_factory=dict)  # id(statement) -> statement id
    statements: list[tuple[Stmt, Call]] = field(default_factory=list)
    others: dict[int, Expr] = field(default_factory=dict)  # OOther id -> expression
    bmm: dict[int, BmmInfo] = field(default_factory=dict)  # statement id -> batched matmul operands
    function_sids: dict[str, range] = field(default_factory=dict)  # function name -> its statement ids
    # a bound on every page count the rules enumerate, so they take all pages in one step rather than one
    # step per page: batch and transpose pages are at most the batch product of an N-D result, packed drains
    # likewise, and the row windows of a 2-D accumulator (a fractal or more each) at most its rows / fractal rows.
    # Which of these indices are pages is still the rules' decision.
    page_bound: int = 1
    fractal_rows: int = DEFAULT_FRACTAL_ROWS  # the backend's, which bounds a 2-D accumulator's row windows
    # a generic request's operands as a list of terms: only rules of a user's file read them (and explain, which
    # shows every term); without them the request names no operands (-1)
    operand_lists: bool = True
    # answers the rules would otherwise work out by scanning, walking or folding lists, stated as facts (ListRow,
    # FlatRow, Off2DRow, ContigRow, OverflowRow, BcastRow, BmmGeomRow): an acceleration. Off, each is left to the
    # rules as written (the core runner), which ask for what they read (LenQuery, Rev, ...) and find the same answers.
    state_answers: bool = True
    _dims: dict[Any, int] = field(default_factory=dict)
    _lists: dict[tuple[int, ...], int] = field(default_factory=lambda: {(): 0})
    _opnds: dict[tuple[Any, ...], int] = field(default_factory=lambda: {(): 0})
    _static_lists: dict[tuple[int, ...], int] = field(default_factory=dict)
    # (id of a dims tuple, shape) -> (the tuple, its list id): the statements of a function share their
    # types' shape tuples, so most lists are found by identity (the tuple kept, so the id names it)
    _by_tuple: dict[tuple[int, bool], tuple[tuple[Expr, ...], int]] = field(default_factory=dict)
    _merged: set[int] = field(default_factory=set)  # the static shapes whose FlatRow is written
    # load sid -> the list ids of its offsets and of its tensor's dims
    _load_offsets: dict[int, tuple[int, int]] = field(default_factory=dict)
    _static_values: dict[int, tuple[int, ...]] = field(
        default_factory=dict
    )  # a static list's id -> its values
    _compared: set[tuple[str, int, int]] = field(
        default_factory=set
    )  # the ContigRow / OverflowRow / BcastRow pairs written
    _listed: set[int] = field(default_factory=set)  # the lists whose ListRow is written
    _prefixed: set[int] = field(default_factory=set)  # ... and those whose prefixes' ListRows are
    _items: dict[int, tuple[int, ...]] = field(default_factory=lambda: {0: ()})  # list id -> its dim ids
    # a statement whose request another statement's states (shared_requests.share_requests) -> that statement's id
    shared: dict[int, int] = field(default_factory=dict)

    # ------------------------------------------------------------ dims

    def dim(self, e: Expr) -> int:
        if isinstance(e, ConstInt):
            return self.const_dim(e.value)
        key = self._dim_key(e)
        if key in self._dims:
            return self._dims[key]
        if isinstance(e, BinOp) and e.op in ARITH_OPS:
            lhs, rhs = self.dim(e.lhs), self.dim(e.rhs)
            i = self._new_dim(key)
            self.rows["DBinRow"].append(ROW.DBinRow(dim=i, op=e.op, lhs=lhs, rhs=rhs))
        else:
            i = self._new_dim(key)
            name = self._symbol_name(e, i)
            self.symbols[name] = e
            self.rows["DSymRow"].append(ROW.DSymRow(dim=i, symbol=name))
        return i

    def const_dim(self, value: int) -> int:
        """The id of the constant `value` (as `dim` of a ConstInt, without making one)."""
        key = ("c", value)
        found = self._dims.get(key)
        if found is None:
            found = self._new_dim(key)
            self.rows["DConstRow"].append(ROW.DConstRow(dim=found, value=value))
        return found

    def _new_dim(self, key: Any) -> int:
        i = len(self._dims)
        self._dims[key] = i
        return i

    def _dim_key(self, e: Expr) -> Any:
        if isinstance(e, ConstInt):
            return ("c", e.value)
        if isinstance(e, Var):
            return ("v", e.uid)
        if isinstance(e, DynDim):
            return ("d", e.name)
        if isinstance(e, BinOp) and e.op in ARITH_OPS:
            return ("b", e.op, self._dim_key(e.lhs), self._dim_key(e.rhs))
        return ("x", id(e))

    @staticmethod
    def _symbol_name(e: Expr, i: int) -> str:
        if isinstance(e, Var):
            return f"v{e.uid}"
        if isinstance(e, DynDim):
            return f"d_{e.name}"
        return f"x{i}"

    def dims(self, items: tuple[Expr, ...], shape: bool = True) -> int:
        """The id of a list a fact names, with what the rules would otherwise walk the list to find stated in
        one ListRow (plain arithmetic on the list, no choice): its length, last dim, the list without it, the
        list reversed and, for a static list, the product of all but its last dim. A rule waiting on one of them
        then fires in the first iteration, not once the walk has reached the list's end. A static `shape` of two
        or more dims also has its merge to 2-D stated (FlatRow), which a plan names as it is chosen; offsets
        (`shape=False`) are never merged."""
        seen = self._by_tuple.get((id(items), shape))
        if seen is not None and seen[0] is items:
            return seen[1]
        found = self._stated_list(items, shape)
        if type(items) is tuple:
            self._by_tuple[(id(items), shape)] = (items, found)
        return found

    def _stated_list(self, items: tuple[Expr, ...], shape: bool) -> int:
        values = [d.value for d in items if type(d) is ConstInt]
        if len(values) == len(items):  # a static list: one look-up (most shapes, offsets and windows)
            key = tuple(values)
            found = self._static_lists.get(key)
            if found is None:
                ids = tuple(self.dim(d) for d in items)
                found = self._static_lists[key] = self._measured(self._list(ids), ids, key)
                self._static_values[found] = key
            if shape and len(key) >= 2 and found not in self._merged and self.state_answers:
                self._merged.add(found)
                lead = self.const_dim(math.prod(key[:-1]))
                self.rows["FlatRow"].append(
                    ROW.FlatRow(dims=found, flat=self._list((lead, self._items[found][-1])))
                )
            return found
        ids = tuple(self.dim(d) for d in items)
        return self._measured(self._list(ids), ids, None)

    def _measured(
        self, i: int, ids: tuple[int, ...], values: tuple[int, ...] | None, prefixes: bool = True
    ) -> int:
        """State the list's ListRow, and that of every list the rules reach from it through Init and Rev: its
        prefixes (Init, Init of Init, ..., each with its reversal) and its reversal. A reversal's own prefixes
        are not stated (`prefixes` false): no rule asks for them, and one that did would have shape.egg walk them
        to the same answer. (One prefix after another, longest first, each with its reversal.)"""
        first = i
        if (
            not self.state_answers
        ):  # the rules measure the lists they ask about (LenQuery and shape.egg's walks)
            return first
        while ids:
            if i not in self._listed:
                rev = self._list_row(i, ids, values)
                if rev not in self._listed:
                    self._list_row(rev, ids[::-1], values[::-1] if values is not None else None)
            if not prefixes or i in self._prefixed:
                break
            self._prefixed.add(i)
            ids = ids[:-1]
            values = values[:-1] if values is not None else None
            i = self._list(ids)
        return first

    def _list_row(self, i: int, ids: tuple[int, ...], values: tuple[int, ...] | None) -> int:
        """The ListRow of list `i`; the id of its reversal."""
        self._listed.add(i)
        init = self._list(ids[:-1])
        rev = self._list(ids[::-1])
        lead = prod = -1
        if values is not None:
            lead = self.const_dim(math.prod(values[:-1]))
            prod = self.const_dim(math.prod(values))
        self.rows["ListRow"].append(
            ROW.ListRow(
                dims=i, length=len(ids), last=ids[-1], init=init, rev=rev, lead_product=lead, product=prod
            )
        )
        return rev

    def contiguity(self, valid: int, dims: int) -> None:
        """Whether a request's valid box is row-major contiguous over the dims it is read from or written into
        (B-042): of two static lists, the answer; of others, the question, which contiguity.egg answers by scanning
        them an axis an iteration (to the same answer, where both are stated)."""
        if ("c", valid, dims) in self._compared:
            return
        self._compared.add(("c", valid, dims))
        v, d = self._static_values.get(valid), self._static_values.get(dims)
        if v is not None and d is not None and self.state_answers:
            self.rows["ContigRow"].append(
                ROW.ContigRow(valid=valid, dims=dims, noncontig=int(non_contiguous(v, d)))
            )
        else:
            self.rows["ContigAskRow"].append(ROW.ContigAskRow(valid=valid, dims=dims))

    def load_offsets_2d(self, sid: int) -> None:
        """The fold of the offsets of load `sid` over its tensor, for a load some rule may read through a 2-D view
        (a batched matmul's operand, which may become a Mat load or be re-loaded per batch); unstated, the rules
        fold them."""
        lists = self._load_offsets.get(sid)
        if lists is not None:
            self.offsets_2d(*lists)

    def offsets_2d(self, offsets: int, shape: int) -> None:
        """Of static offsets over a static shape of their rank (two or more), their (row, column) fold, which
        offsets.egg works out a dim an iteration otherwise."""
        o, d = self._static_values.get(offsets), self._static_values.get(shape)
        if (
            not self.state_answers
            or o is None
            or d is None
            or len(o) != len(d)
            or len(o) < 2
            or ("f", offsets, shape) in self._compared
        ):
            return
        self._compared.add(("f", offsets, shape))
        row, col = fold_offsets(o, d)
        self.rows["Off2DRow"].append(
            ROW.Off2DRow(offsets=offsets, shape=shape, row=self.const_dim(row), col=self.const_dim(col))
        )

    def overflow(self, tile: int, tensor: int) -> None:
        """Whether some dim of a store's tile exceeds the tensor's it lands on, right-aligned (B-053), of the lists
        reversed: of two static lists, the answer; of others, the question, which store.egg answers by scanning
        them."""
        if ("o", tile, tensor) in self._compared:
            return
        self._compared.add(("o", tile, tensor))
        reversed_lists = self._list(self._items[tile][::-1]), self._list(self._items[tensor][::-1])
        t, d = self._static_values.get(tile), self._static_values.get(tensor)
        if t is not None and d is not None and self.state_answers:
            self.rows["OverflowRow"].append(ROW.OverflowRow(*reversed_lists, overflows=int(overflows(t, d))))
        else:
            self.rows["OverflowAskRow"].append(ROW.OverflowAskRow(*reversed_lists))

    def broadcast(self, lhs: tuple[Expr, ...], rhs: tuple[Expr, ...]) -> tuple[Expr, ...] | None:
        """Of two batch shapes, their NumPy broadcast (B-132), stated of the lists reversed (innermost axis first),
        as bmm.egg asks for it: a missing axis or an extent of 1 takes the other side's, and the same dim stays.
        Where an axis is not settled so (two different extents), nothing is stated: the rules walk the lists as
        far as they go, and the request's checks report the mismatch. The broadcast shape, or None."""
        out: list[Expr] = []
        for k in range(1, max(len(lhs), len(rhs)) + 1):
            a = lhs[-k] if k <= len(lhs) else None
            b = rhs[-k] if k <= len(rhs) else None
            if a is None or (b is not None and type(a) is ConstInt and a.value == 1):
                assert b is not None
                out.append(b)
            elif b is None or (type(b) is ConstInt and b.value == 1) or self.dim(a) == self.dim(b):
                out.append(a)
            else:
                return None
        batch = tuple(out[::-1])
        if not self.state_answers:
            return batch
        left, right = (self._list(tuple(self.dim(d) for d in side[::-1])) for side in (lhs, rhs))
        if ("b", left, right) not in self._compared:
            self._compared.add(("b", left, right))
            self.dims(batch, shape=False)  # the batch shape, and with it its reversal, stated
            self.rows["BcastRow"].append(
                ROW.BcastRow(lhs_rev=left, rhs_rev=right, out_rev=self._list(tuple(self.dim(d) for d in out)))
            )
        return batch

    def bmm_geometry(
        self, sid: int, batch: tuple[Expr, ...] | None, lhs: tuple[Expr, ...], rhs: tuple[Expr, ...]
    ) -> None:
        """Of a batched matmul whose operand dims are all static and whose batch shapes broadcast, its geometry
        (B-132): the output batch dims, their product and M, N, K, which bmm.egg works out from the same lists
        otherwise (BmmUnmeasuredRow). Which of its checks fail, and how it is unrolled, stay the rules'."""
        static = all(type(d) is ConstInt for d in (*lhs, *rhs))
        if batch is None or min(len(lhs), len(rhs)) < 2 or not static or not self.state_answers:
            self.rows["BmmUnmeasuredRow"].append(ROW.BmmUnmeasuredRow(stmt=sid))
            return
        m, k, n, *extents = (static_int(d) or 0 for d in (lhs[-2], lhs[-1], rhs[-1], *batch))
        batch_dims = self.dims(batch, shape=False)
        self.rows["BmmGeomRow"].append(
            ROW.BmmGeomRow(stmt=sid, batch=batch_dims, batch_count=math.prod(extents), m=m, n=n, k=k)
        )

    def _list(self, ids: tuple[int, ...]) -> int:
        if ids in self._lists:  # the empty list is id 0 of every encoding (rules/encode.egg states it)
            return self._lists[ids]
        tail = self._list(ids[1:])
        i = len(self._lists)
        self.rows["ConsRow"].append(ROW.ConsRow(dims=i, head=ids[0], tail=tail))
        self._lists[ids] = i
        self._items[i] = ids
        return i

    # ------------------------------------------------------------ operands

    def operands(self, args: tuple[Expr, ...]) -> int:
        return self._operands(list(args))

    def _operands(self, args: list[Expr]) -> int:
        key = tuple(self._operand_key(a) for a in args)
        if key in self._opnds:  # so is the empty operand list
            return self._opnds[key]
        tail = self._operands(args[1:])
        i = len(self._opnds)
        head = args[0]
        if isinstance(head, Var):
            self.rows["OpndVarRow"].append(ROW.OpndVarRow(opnds=i, var=head.uid, tail=tail))
        elif isinstance(head, ConstInt):
            self.rows["OpndIntRow"].append(ROW.OpndIntRow(opnds=i, value=head.value, tail=tail))
        elif isinstance(head, ConstFloat):
            self.rows["OpndFloatRow"].append(ROW.OpndFloatRow(opnds=i, value=float(head.value), tail=tail))
        else:
            oid = len(self.others)
            self.others[oid] = head
            self.rows["OpndOtherRow"].append(ROW.OpndOtherRow(opnds=i, expr=oid, tail=tail))
        self._opnds[key] = i
        return i

    @staticmethod
    def _operand_key(a: Expr) -> Any:
        if isinstance(a, Var):
            return ("v", a.uid)
        if isinstance(a, ConstInt):
            return ("i", a.value)
        if isinstance(a, ConstFloat):
            return ("f", float(a.value))
        return ("x", id(a))

    # ------------------------------------------------------------ statements

    def statement(self, s: Stmt, call: Call) -> None:
        if not call.op.startswith("tile."):
            return
        sid = len(self.statements)
        self.statements.append((s, call))
        self.stmt_ids[id(s)] = sid
        result = s.var.type if isinstance(s, AssignStmt) else call.type
        if type(result) is TileType and len(result.shape) >= 2:
            self.page_bound = max(self.page_bound, _pages_at_most(result.shape, self.fractal_rows))
        op, args = call.op, call.args
        if op == "tile.load":
            self.load(sid, result, call)
        elif (
            op == "tile.store"
            and isinstance(type_of(args[0]), TileType)
            and isinstance(type_of(args[2]), TensorType)
        ):
            tile = type_of(args[0])
            dst = type_of(args[2])
            assert isinstance(tile, TileType) and isinstance(dst, TensorType)
            tv, dst_dims = self.dims(tile.valid_shape), self.dims(dst.shape)
            shape = self.dims(tile.shape)
            offsets = self.dims(tuple_items(args[1]), shape=False)
            self.rows["StoreRow"].append(
                ROW.StoreRow(stmt=sid, valid=tv, shape=shape, tensor=dst_dims, offsets=offsets)
            )
            self.overflow(tv, dst_dims)
            if len(args) > 3 and isinstance(args[3], MakeTuple):
                self.rows["StoreGivenRow"].append(
                    ROW.StoreGivenRow(stmt=sid, window=self.dims(args[3].elements))
                )
        elif op in ("tile.create", "tile.full") and isinstance(result, TileType):
            self.rows["AllocRow"].append(ROW.AllocRow(stmt=sid, shape=self.dims(result.shape)))
        elif op == "tile.assemble" and len(args) == 3 and isinstance(args[2], MakeTuple):
            target, source = type_of(args[0]), type_of(args[1])
            if isinstance(target, TileType) and isinstance(source, TileType):
                t, src = self.dims(target.shape), self.dims(source.shape)
                offsets = self.dims(args[2].elements, shape=False)
                self.rows["AssembleRow"].append(
                    ROW.AssembleRow(stmt=sid, target=t, source=src, offsets=offsets)
                )
                self.contiguity(src, t)
                self.offsets_2d(offsets, t)
            else:
                self.generic(sid, call, result)
        elif (
            op in ("tile.reshape", "tile.reinterpret_view")
            and len(args) == 2
            and isinstance(result, TileType)
        ):
            self.rows["ReshapeRow"].append(ROW.ReshapeRow(stmt=sid, shape=self.dims(result.shape)))
        elif op == "tile.transpose":
            self.transpose(sid, call)
        elif op in BMM_OPS:
            pass  # encoded with its block in `batch_matmuls`
        else:
            self.generic(sid, call, result)

    def load(self, sid: int, result: Any, call: Call) -> None:
        src = type_of(call.args[0])
        if not isinstance(result, TileType) or not isinstance(src, TensorType):
            raise InternalError("tile.load must read a tensor into a tile")
        mem = result.memory.value if result.memory is not None else "none"
        src_valid = src.view.valid_shape if src.view is not None and src.view.valid_shape else src.shape
        window_valid = call.args[3] if len(call.args) > 3 else call.args[2]
        view = result.view
        blayout = view.blayout.value if view is not None and view.blayout is not None else "implicit"
        slayout = view.slayout.value if view is not None and view.slayout is not None else "implicit"
        src_dims, valid = self.dims(src.shape), self.dims(tuple_items(window_valid))
        offsets = self.dims(tuple_items(call.args[1]), shape=False)
        self.rows["LoadRow"].append(ROW.LoadRow(
            stmt=sid, shape=self.dims(result.shape), valid=self.dims(result.valid_shape), memory=mem, blayout=blayout,
            slayout=slayout, source_layout=src.layout.value, source=src_dims, offsets=offsets,
            window=self.dims(tuple_items(call.args[2])), window_valid=valid, source_valid=self.dims(src_valid),
        ))  # fmt: skip
        self.contiguity(valid, src_dims)
        self._load_offsets[sid] = (offsets, src_dims)
        if mem == MemorySpace.Mat.value:  # read through a 2-D view (a batched matmul's operand loads, too)
            self.offsets_2d(offsets, src_dims)

    def transpose(self, sid: int, call: Call) -> None:
        src = type_of(call.args[0])
        a1, a2 = call.args[1], call.args[2]
        if not isinstance(src, TileType):
            raise InternalError("tile.transpose input must be a tile")
        if not isinstance(a1, ConstInt) or not isinstance(a2, ConstInt):
            raise InternalError("tile.transpose axes must be integer constants")
        self.rows["TransposeRow"].append(ROW.TransposeRow(
            stmt=sid, input=self.dims(src.shape), axis1=a1.value, axis2=a2.value, operands=len(call.args)
        ))  # fmt: skip

    def generic(self, sid: int, call: Call, result: Any) -> None:
        shape = result.shape if isinstance(result, TileType) else ()
        operands = self.operands(call.args) if self.operand_lists else -1
        self.rows["GenericRow"].append(
            ROW.GenericRow(stmt=sid, op=call.op, opnds=operands, shape=self.dims(tuple(shape)))
        )

    def request(self, s: Stmt) -> int:
        """The statement id the rules know statement `s`'s request by (another's, where the two share one)."""
        sid = self.stmt_ids[id(s)]
        return self.shared.get(sid, sid)

    # ------------------------------------------------------------ files

    def write_facts(self, folder: FactFolder, only: frozenset[str] | None = None) -> list[str]:
        """The rows of the relations in `only`, when given (the others no loaded rule reads): those a shared table
        stores in one tab-separated file a table (fact_table.py), the others one file a relation; returns the
        `(input ...)` commands that load them."""
        undeclared = sorted(rel for rel, rows in self.rows.items() if rows and rel not in RELATIONS)
        if undeclared:
            raise InternalError(f"fact rows of relations rules/encode.egg does not declare: {undeclared}")
        commands = []
        tables: dict[str, list[str]] = {}  # each fact table's lines, a relation at a time
        for rel, arity in RELATIONS.items():
            rows = self.rows.get(rel, [])
            if not rows or (only is not None and rel not in only):  # no file and no input
                continue
            stored = _STORED_FORMATS.get(rel)
            cells = arity if stored is None else 1 + len(_LAYOUT.cells[_LAYOUT.relations[rel].table])
            try:
                if stored is None or stored[1]:
                    # one C-level format of all the cells (each by str(), as joining each row would, in a third
                    # of the time)
                    text = ((_ROW_FORMATS[arity] if stored is None else stored[0]) * len(rows)) % tuple(
                        chain.from_iterable(rows)
                    )
                else:
                    text = "".join(stored[0].format(*r) for r in rows if len(r) == arity)
            except TypeError:  # a row of another arity leaves cells over or short
                text = ""
            # a row of the wrong arity, or a cell holding a tab or newline, shows in the separator counts
            if text.count("\t") != len(rows) * (cells - 1) or text.count("\n") != len(rows):
                bad = next(
                    r for r in rows if len(r) != arity or any("\t" in str(c) or "\n" in str(c) for c in r)
                )
                raise InternalError(f"{rel} row {bad} is not {arity} tab-free cells")
            if stored is not None:
                tables.setdefault(_LAYOUT.relations[rel].table, []).append(text)
                continue
            folder.write(rel + ".tsv", text)
            commands.append(f'(input {rel} "{rel}.tsv")')
        for table in _LAYOUT.cells:  # (in their declared order)
            if table not in tables:
                continue
            folder.write(table + ".tsv", "".join(tables[table]))
            commands.append(f'(input {table} "{table}.tsv")')
        return commands

    @property
    def size(self) -> int:
        return sum(len(v) for v in self.rows.values())
